"""τ² interop: a run as τ² results files and τ² results files as a run."""

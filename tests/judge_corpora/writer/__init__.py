"""The writer of the judge corpora: hand-written styles and scenes, assembled by ``__main__``."""

"""The one definition of a run folder's layout on disk.

A run directory holds one folder per table (named as the table), each holding
Parquet part files; a sweep folder holds run directories. Everything that
names or recognises a path of a run (the writer, the readers, compaction, the
report, the driver's resume and judging) asks this module:

* a *run directory* is a directory with at least one table folder;
* names starting with ``.`` or ``_`` are never data (temp files, the lock,
  hidden folders), neither as part files nor as run directories of a sweep;
* a part file is ``part-<run_id>-<seq>-<8 hex>.parquet``: the run id makes the
  name unique across the runs sharing a folder, ``seq`` sorts files in writing
  order (readers never look at names; it helps people listing a folder);
* a file is written under ``.<name>.<4 hex>.tmp`` and renamed into place;
* a voice run's audio lives in ``audio/<ref[:2]>/<ref>.flac`` (:func:`audio_path`): ``ref`` is
  the sha256 of the FLAC file's bytes, so a file is named by its content and stored once
  however many utterances share it; the ``audio`` folder is no table folder.
"""

from __future__ import annotations

import os
import re
import secrets
from pathlib import Path

from tauray.results.tables.records import TABLES

CONVERSATIONS = "conversations"
LOCK_NAME = ".tauray.lock"
SWEEP_MANIFEST = "sweep.json"
REPORT_DIR = "report"
AUDIO_DIR = "audio"  # a voice run's content-addressed audio files (not a table)
AUDIO_SUFFIX = ".flac"
LABELS_SUFFIX = ".txt"  # a duplex call's Audacity label track, stored beside its recording
TEMP_SUFFIX = ".tmp"
PART_SUFFIX = ".parquet"
COMPACT_RUN = "compact"  # the run id part of a compacted file's name
_SUPERSEDED = "_superseded-"  # prefix older versions gave files they set aside; still numbered
_PART = re.compile(r"^part-(?P<run>.+)-(?P<seq>\d{6,})-[0-9a-f]{8}\.parquet$")


def is_hidden(name: str) -> bool:
    """Names starting with ``.`` or ``_`` are never data (temp files, the lock, set-aside folders)."""
    return name.startswith((".", "_"))


def table_dir(run_dir: Path | str, table: str) -> Path:
    """The folder of ``table`` in a run directory."""
    return Path(run_dir) / table


def is_run_dir(path: Path | str) -> bool:
    """A run directory holds at least one table folder."""
    p = Path(path)
    return p.is_dir() and any(table_dir(p, t).is_dir() for t in TABLES)


def has_conversations(path: Path | str) -> bool:
    """Whether ``path`` has a conversations table folder (a run something was written to)."""
    return table_dir(path, CONVERSATIONS).is_dir()


def has_rows(path: Path | str) -> bool:
    """Whether ``path`` holds at least one conversations part file (a run that holds results)."""
    return any(parse_part(p.name) for p in data_files(table_dir(path, CONVERSATIONS)))


def child_run_dirs(path: Path | str) -> list[Path]:
    """``path`` itself when it is a run directory, else its visible sub-folders that are
    (a sweep folder), sorted by name; [] when ``path`` is not a directory."""
    p = Path(path)
    if not p.is_dir():
        return []
    if is_run_dir(p):
        return [p]
    return sorted(c for c in p.iterdir() if not is_hidden(c.name) and is_run_dir(c))


def run_dirs(path: Path | str) -> list[Path]:
    """Like :func:`child_run_dirs`, but strict: an error that says what a run or sweep
    folder is when ``path`` is neither."""
    p = Path(path)
    if not p.is_dir():
        raise FileNotFoundError(f"no such directory: {p}")
    found = child_run_dirs(p)
    if not found:
        raise FileNotFoundError(f"{p} is neither a run directory (with table folders: {', '.join(TABLES)}) "
                                "nor a folder of run directories")
    return found


def data_files(folder: Path | str) -> list[Path]:
    """Data files of one table folder; hidden names (temp files) are not data."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.suffix == PART_SUFFIX and not is_hidden(p.name) and p.is_file())


def audio_path(run_dir: Path | str, ref: str) -> Path:
    """Where the audio file with content hash ``ref`` lives in a run directory."""
    return Path(run_dir) / audio_relpath(ref)


def audio_relpath(ref: str) -> str:
    """``ref``'s file relative to its run directory, with forward slashes (for links in a report).
    A ref is a sha256 hex digest (an audio file, ``.flac``) or a digest with ``.txt`` (a duplex
    call's label track)."""
    if not re.fullmatch(r"[0-9a-f]{64}(\.txt)?", ref):
        raise ValueError(f"audio ref {ref!r} is not a sha256 hex digest")
    return f"{AUDIO_DIR}/{ref[:2]}/{ref}" + ("" if ref.endswith(LABELS_SUFFIX) else AUDIO_SUFFIX)


def write_audio(run_dir: Path | str, ref: str, data: bytes) -> bool:
    """Write one audio file into place (temp name, then rename); False when it is there already."""
    final = audio_path(run_dir, ref)
    if final.exists():
        return False
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_path(final)
    tmp.write_bytes(data)
    tmp.replace(final)
    return True


def check_run_id(run_id: str) -> None:
    """The run id becomes part of file names, so it must be one visible path segment."""
    if not run_id or "/" in run_id or "\\" in run_id or is_hidden(run_id):
        raise ValueError(f"run_id {run_id!r} cannot be used in a file name")


def part_name(run_id: str, seq: int) -> str:
    """The name of a new part file of ``run_id`` numbered ``seq``."""
    return f"part-{run_id}-{seq:06d}-{secrets.token_hex(4)}{PART_SUFFIX}"


def parse_part(name: str) -> tuple[str, int] | None:
    """(run id, seq) of a part file's name (set-aside files included); None for any other name."""
    m = _PART.match(name.removeprefix(_SUPERSEDED))
    return (m["run"], int(m["seq"])) if m else None


def next_seq(out_dir: Path | str, run_id: str) -> int:
    """First file number not yet used by ``run_id`` in any table folder of ``out_dir``."""
    highest = -1
    for table in TABLES:
        folder = table_dir(out_dir, table)
        if folder.is_dir():
            for entry in os.scandir(folder):
                part = parse_part(entry.name)
                if part and part[0] == run_id:
                    highest = max(highest, part[1])
    return highest + 1


def temp_path(final: Path) -> Path:
    """Where ``final`` is written before it is renamed into place (hidden, so never read as data)."""
    return final.with_name(f".{final.name}.{secrets.token_hex(2)}{TEMP_SUFFIX}")


def temp_files(out_dir: Path | str) -> list[Path]:
    """Temp files in the table folders of ``out_dir`` (left there by a writer that died)."""
    found = []
    for table in TABLES:
        folder = table_dir(out_dir, table)
        if folder.is_dir():
            found += [p for p in folder.iterdir() if p.name.startswith(".") and p.name.endswith(TEMP_SUFFIX)]
    return found


__all__ = ["AUDIO_DIR", "AUDIO_SUFFIX", "LABELS_SUFFIX", "COMPACT_RUN", "audio_path", "audio_relpath", "write_audio", "CONVERSATIONS", "LOCK_NAME", "REPORT_DIR", "SWEEP_MANIFEST", "TEMP_SUFFIX",
           "check_run_id", "child_run_dirs", "data_files", "has_conversations", "has_rows", "is_hidden",
           "is_run_dir", "next_seq", "parse_part", "part_name", "run_dirs", "table_dir", "temp_files", "temp_path"]


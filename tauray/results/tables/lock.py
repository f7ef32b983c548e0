"""One writer per run directory.

Two drivers appending to one run directory would both number their attempts
from what they saw at start, and their rows would read as duplicates. A run
directory therefore holds a lock (``.tauray.lock``, an advisory ``flock``) for
as long as a process writes to it: a second writer fails at once with a message
naming the holder (pid, host, start time, command).

``flock`` is released by the kernel when its holder dies, SIGKILL included, so
a lock file left by a dead process is simply taken over; the file's text is
only there to say who holds it. The lock is re-entrant within a process (the
sweep driver, its writer and its ``cells`` write share it).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import threading
from datetime import datetime, timezone
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from tauray.results.tables.layout import LOCK_NAME

_held: dict[str, list[int]] = {}  # real path -> [fd, depth, pid]
_guard = threading.Lock()


class RunLockedError(RuntimeError):
    """Another process is writing to the run directory."""

    def __init__(self, out_dir: Path, holder: dict[str, Any]):
        self.out_dir = out_dir
        self.holder = holder
        who = (f"pid {holder.get('pid', '?')} on {holder.get('host', '?')} since "
               f"{holder.get('started_at', '?')}")
        cmd = holder.get("command")
        super().__init__(f"{out_dir} is in use by another tauray process ({who}"
                         f"{f': {cmd}' if cmd else ''}); wait for it to finish or stop it, "
                         "or write to another directory")


def _holder_text() -> str:
    return json.dumps({"pid": os.getpid(), "host": socket.gethostname(),
                       "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                       "command": " ".join(sys.argv)[:300]})


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class RunLock:
    """Held lock on one run directory; release it (or leave the ``with`` block) when done."""

    def __init__(self, out_dir: Path | str):
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        self.path = self.out_dir / LOCK_NAME
        self._key = str(self.path.resolve())
        self.took_over: dict[str, Any] | None = None
        self._released = False
        with _guard:
            held = _held.get(self._key)
            if held is not None and held[2] == os.getpid():
                held[1] += 1
                return
            fd = self._take()
            previous = _read_holder(self.path)
            if previous.get("pid") not in (None, os.getpid()):
                self.took_over = previous  # its holder died without releasing: the kernel freed the flock
            os.ftruncate(fd, 0)
            os.pwrite(fd, _holder_text().encode(), 0)
            _held[self._key] = [fd, 1, os.getpid()]

    def _take(self) -> int:
        """Open and flock the lock file. A driver that gave up on an unused folder removes it
        (lock file and all) while still holding it, so the file locked here must still be the
        one at the path: otherwise the folder is made again and the lock taken on the new file."""
        for _ in range(5):
            self.out_dir.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except FileNotFoundError:  # the folder went away between mkdir and open
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                raise RunLockedError(self.out_dir, _read_holder(self.path)) from None
            try:
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    return fd
            except FileNotFoundError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)  # a removed file: its lock guards nothing
            os.close(fd)
        raise RunLockedError(self.out_dir, {"note": "the folder kept being removed while taking its lock"})

    def release(self) -> None:
        if self._released:
            return
        self._released = True
        with _guard:
            held = _held.get(self._key)
            if held is None or held[2] != os.getpid():
                return
            held[1] -= 1
            if held[1] > 0:
                return
            del _held[self._key]
            fd = held[0]
            try:
                os.ftruncate(fd, 0)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

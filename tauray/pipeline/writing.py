"""The driver's tables, written off its loop.

The scheduler's loop waits on Ray and submits work; writing a conversation's
rows (dumping every record, then Arrow and Parquet at each flush: about 4 ms a
conversation) would stall it. :class:`BackgroundWriter` wraps
:class:`tauray.results.tables.writer.TableWriter` unchanged and drives it from a
thread of its own: ``add`` hands a result over and returns.

What the wrapped writer guarantees still holds:

* **exactly once**: results are written in the order they were added, each
  once; ``close`` returns only when every result added is on disk (or raises
  why not), so the driver's totals read complete tables;
* **interrupts**: a flush runs in the writer thread, where no signal lands;
  SIGINT and SIGTERM that arrive while the thread writes are held (by a
  handler this writer installs in the main thread for its lifetime) and
  delivered when that write is done. A ``KeyboardInterrupt`` in the driver
  ends its loop; closing then finishes what was handed over. Should the
  driver be interrupted again while it waits, the thread (not a daemon) still
  finishes before the process exits;
* **failures**: an exception while writing stops the thread and is raised in
  the driver at its next ``add`` or at ``close``, which then retries the
  pending flush as the wrapped writer's ``close`` does. Results handed over
  after a failure are not written: like conversations still in flight, they
  have no row, so ``--resume`` runs them again;
* **memory**: at most ``MAX_QUEUED`` results wait for the thread; ``add``
  blocks beyond that.
"""

from __future__ import annotations

import os
import queue
import signal
import threading
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType
from typing import Any, Iterator, Self

from tauray.results.tables.writer import TableWriter, WriterStats

MAX_QUEUED = 1024
_STOP = object()
_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class SignalHold:
    """While the writer thread writes, SIGINT and SIGTERM are held, then delivered as they
    would have been. Installed from the main thread (the only one Python lets install
    handlers); elsewhere it holds nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writing = False
        self._held: list[int] = []
        self._previous: dict[int, Any] = {}
        if threading.current_thread() is threading.main_thread():
            for sig in _SIGNALS:
                try:
                    self._previous[sig] = signal.signal(sig, self._on_signal)
                except (ValueError, OSError):
                    pass

    def _on_signal(self, signum: int, frame: Any) -> None:
        with self._lock:
            if self._writing:
                self._held.append(signum)
                return
        self._deliver(signum, frame)

    def _deliver(self, signum: int, frame: Any) -> None:
        previous = self._previous.get(signum, signal.SIG_DFL)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_IGN:
            return
        else:  # the default action (terminate): as if no handler had been installed
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    @contextmanager
    def writing(self) -> Iterator[None]:
        with self._lock:
            self._writing = True
        try:
            yield
        finally:
            with self._lock:
                self._writing = False
                held, self._held = list(dict.fromkeys(self._held)), []
            for sig in held:  # to the process: the main thread's handler delivers it now
                os.kill(os.getpid(), sig)

    def restore(self) -> None:
        """Put back the handlers found (main thread only, as they were installed)."""
        if threading.current_thread() is not threading.main_thread():
            return
        for sig, handler in self._previous.items():
            if signal.getsignal(sig) == self._on_signal:
                signal.signal(sig, handler)
        self._previous = {}


class BackgroundWriter:
    """A :class:`TableWriter` (same arguments) whose writing runs in a thread of its own;
    see the module for what it guarantees."""

    def __init__(self, out_dir: Path | str, run_id: str, **writer_kw: Any) -> None:
        self._writer = TableWriter(out_dir, run_id, **writer_kw)  # takes the run's lock here
        self._queue: queue.Queue[Any] = queue.Queue(maxsize=MAX_QUEUED)
        self._error: BaseException | None = None
        self._reported = False  # the failure was raised to the driver already
        self._closed = False
        self._hold = SignalHold()
        self._thread = threading.Thread(target=self._work, name=f"tauray-writer-{run_id}", daemon=False)
        self._thread.start()

    @property
    def temp_files_removed(self) -> int:
        return self._writer.temp_files_removed

    @property
    def stats(self) -> WriterStats:
        """What is on disk so far (exact once closed)."""
        return self._writer.stats

    def add(self, result: Any) -> None:
        """Hand one conversation's result to the writer thread."""
        if self._closed:
            raise RuntimeError("BackgroundWriter is closed")
        self._raise_error()
        self._queue.put(result)

    def _raise_error(self) -> None:
        if self._error is not None and not self._reported:
            self._reported = True
            raise self._error

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if self._error is not None:  # after a failure nothing more is written (see the module)
                if item is _STOP:
                    return
                continue
            try:
                with self._hold.writing():
                    if item is _STOP:  # the last flush, here too: it happens even if the driver
                        self._writer.close()  # is interrupted while it waits for this thread
                        return
                    self._writer.add(item)
            except BaseException as exc:
                self._error = exc

    def close(self) -> None:
        """Write everything handed over, flush, release the run's lock; raise a failure."""
        if self._closed:
            return
        self._closed = True
        try:
            self._queue.put(_STOP)
            self._thread.join()
        finally:
            self._hold.restore()
        if self._error is not None:
            try:
                self._writer.close()  # retries a pending flush, as TableWriter's own close does
            finally:
                self._raise_error()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

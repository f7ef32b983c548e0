"""llama.cpp in a child process of its replica, so that a native crash is seen and named.

A ``Llama`` runs native code; when that code dies (a segfault in a CPU kernel, an
abort, the kernel's out-of-memory killer), the process that holds it dies with it.
Held by the replica itself, the crash takes the replica down and all a client ever
hears is Serve's HTTP 500 for a dead actor, which reads like a network problem. So
the replica keeps the model in a child process (this module's ``main``) and talks to
it over a pipe: when the child dies the replica is still there to say which signal or
exit status ended it and what the child last wrote to its log, and it answers the
request with that (:class:`WorkerCrashed`), in one line. The next request starts a
fresh child, so a replica that crashed once (a cosmic ray, a one-off OOM) serves on.

The protocol is one JSON document per line: the replica sends the keyword arguments
of ``create_chat_completion``; the child answers ``{"ok": <completion>}``,
``{"value_error": "..."}`` (llama-cpp-python's way of refusing a request: the context
window, bad arguments) or ``{"error": "..."}``. The child writes its protocol on a
duplicate of its standard output and points its own standard output and error at a
log file, so whatever native code prints cannot break the protocol, and Python's
faulthandler puts the Python stack of a crash into that log.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, TextIO

CRASH_PREFIX = "served replica crashed:"
"""How every crash message starts, so the probe and the run summary can tell a crash from
a server error (it travels inside the provider's error text, through litellm)."""

LOG_TAIL = 6
"""Lines of the child's log quoted in a crash message."""

_PR_SET_PDEATHSIG = 1


def crash_line(text: str) -> str | None:
    """The crash message inside an error text (a provider's JSON error body as litellm quotes it, or
    Serve's status with a traceback), as one line; None when the text tells of no crash."""
    at = text.find(CRASH_PREFIX)
    if at < 0:
        return None
    rest = text[at:]
    end = re.search(r'(?<!\\)"', rest)  # inside a JSON string: up to its closing quote, unescaped
    if end is not None and (at > 0 and text[at - 1] == '"'):
        try:
            rest = json.loads('"' + rest[: end.start()] + '"')
        except ValueError:
            rest = rest[: end.start()]
    return " ".join(rest.splitlines()[0].split()) if rest.strip() else None


class WorkerCrashed(RuntimeError):
    """The child holding the model died; the message names the model, the signal or exit status and
    the last lines of the child's log, in one line."""


def describe_exit(code: int | None) -> str:
    """An exit status as a person reads it: ``killed by SIGSEGV (signal 11)``, ``exited with status 3``."""
    if code is None:
        return "stopped answering (still running)"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = {"SIGKILL": "; the kernel's out-of-memory killer sends this", "SIGABRT": "; native code aborted",
                "SIGSEGV": "; a fault in native code", "SIGILL": "; an instruction this CPU lacks"}.get(name, "")
        return f"killed by {name} (signal {-code}{hint})"
    return f"exited with status {code}"


def log_tail(path: Path, lines: int = LOG_TAIL) -> list[str]:
    """What the child's log says last: from a Python fatal-error report (faulthandler), its headline
    and the innermost frames; otherwise its last non-empty lines (nothing when it cannot be read)."""
    try:
        with open(path, errors="replace") as f:
            text = [raw.strip() for raw in f if raw.strip()]
    except OSError:
        return []
    fatal = max((i for i, line in enumerate(text) if line.startswith("Fatal Python error")), default=None)
    if fatal is None:
        return text[-lines:]
    frames = [line for line in text[fatal + 1:] if line.startswith("File ")]
    return [text[fatal], *frames[: lines - 1]]


class LlamaWorker:
    """The replica's side: starts the child, sends it requests, names its death.

    Not thread-safe; the replica calls it from one thread at a time (one ``Llama`` serves one request
    at a time anyway).
    """

    def __init__(self, served: str, deployment: str, model_path: str, llama_kwargs: dict[str, Any]) -> None:
        self.served, self.deployment, self.model_path = served, deployment, model_path
        self.llama_kwargs = {"model_path": model_path, **llama_kwargs}
        self.crashes = 0
        self.load_s: float | None = None
        self._proc: subprocess.Popen[str] | None = None
        fd, name = tempfile.mkstemp(prefix=f"tauray-llama-{served}-", suffix=".log")
        os.close(fd)
        self.log_path = Path(name)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start the child and wait until it has loaded the model (raises :class:`WorkerCrashed` if it dies)."""
        log = open(self.log_path, "a")
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "tauray.actors.serving.llama_worker", self.served], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=log, text=True, bufsize=1)
        finally:
            log.close()
        reply = self._exchange({"load": self.llama_kwargs}, during="loading the model")
        if "ready" not in reply:
            self.close()
            raise RuntimeError(f"{self._who()}: could not load the model: {reply.get('error', reply)}")
        self.load_s = float(reply["ready"])

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def shutdown(self) -> None:
        """The replica is going away: stop the child; its log is kept only when it told of a crash."""
        self.close()
        if not self.crashes:
            self.log_path.unlink(missing_ok=True)

    def close(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    # ------------------------------------------------------------------ use

    def generate(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        """One chat completion. Raises ``ValueError`` for a request llama.cpp refuses, ``RuntimeError``
        for another failure in the child, :class:`WorkerCrashed` when the child died."""
        if not self.alive():
            self.close()
            self.start()
        reply = self._exchange(kwargs, during="a generation")
        if "ok" in reply:
            return reply["ok"]
        if "value_error" in reply:
            raise ValueError(reply["value_error"])
        raise RuntimeError(reply.get("error", "the worker answered nothing"))

    def _exchange(self, message: dict[str, Any], during: str) -> dict[str, Any]:
        proc = self._proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(message) + "\n")
            proc.stdin.flush()
            line = proc.stdout.readline()
        except (BrokenPipeError, OSError, ValueError):
            line = ""
        if line:
            return json.loads(line)
        try:
            code = proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        self.crashes += 1
        self.close()
        raise WorkerCrashed(self.crash_message(code, during))

    def crash_message(self, code: int | None, during: str) -> str:
        tail = " | ".join(log_tail(self.log_path)) or "(nothing)"
        return (f"{CRASH_PREFIX} {self._who()}: llama.cpp {describe_exit(code)} during {during}; "
                f"last lines of its log ({self.log_path}): {tail}")

    def _who(self) -> str:
        return f"served model 'openai/{self.served}' (deployment {self.deployment}, model file {self.model_path})"


# ---------------------------------------------------------------------- the child


def _die_with_parent() -> None:
    """Linux: the child gets SIGTERM when its replica dies (a killed replica must not leave a loaded model behind)."""
    if sys.platform.startswith("linux"):
        try:
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
        except (OSError, AttributeError):
            pass


def _serve(requests: TextIO, out: TextIO) -> None:
    from llama_cpp import Llama  # the child's one heavy import

    llm: Any = None
    for line in requests:
        message = json.loads(line)
        try:
            if "load" in message:
                started = time.perf_counter()
                llm = Llama(**message["load"], verbose=False)
                reply: dict[str, Any] = {"ready": time.perf_counter() - started}
            else:
                reply = {"ok": llm.create_chat_completion(**message)}
        except ValueError as exc:
            reply = {"value_error": str(exc)}
        except Exception as exc:  # answered, not raised: the replica turns it into an HTTP error
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
        out.flush()


def main() -> None:
    _die_with_parent()
    # The protocol gets its own copy of standard output; fd 1 then points at the log (fd 2), so
    # native code that prints cannot interleave with the protocol.
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)
    faulthandler.enable()  # a crash writes the Python stack to the log
    threading.current_thread().name = "tauray-llama-worker"
    _serve(sys.stdin, out)


if __name__ == "__main__":
    main()


__all__ = ["CRASH_PREFIX", "LlamaWorker", "WorkerCrashed", "crash_line", "describe_exit", "log_tail"]

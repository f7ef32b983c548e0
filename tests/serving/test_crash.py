"""A served model whose native code dies is reported as a crash, not as a network problem.

The replica holds llama.cpp in a child process (actors/serving/llama_worker.py); these
tests kill that child with SIGSEGV, as the AMX kernel of issue 33 did, and check what a
user is told: the signal, the deployment, the model file and the end of the child's log,
in one line, from the worker itself, from the probe before a sweep, and from
``tauray models check``.
"""

from __future__ import annotations

import argparse
import fcntl
import importlib.util
import json
import os
import signal
import struct
import termios
import threading
import time
from pathlib import Path

import psutil
import pytest

from tauray.actors.serving.llama_worker import CRASH_PREFIX, LlamaWorker, WorkerCrashed, crash_line, describe_exit
from tauray.actors.serving.spec import resolve_weights
from tauray.pipeline.cli.models import cmd_check

from .conftest import SMOLLM2, smollm2_spec

needs_llama = pytest.mark.skipif(importlib.util.find_spec("llama_cpp") is None,
                                 reason="needs tauray[llamacpp] (make test installs it)")
HELLO = {"messages": [{"role": "user", "content": "Say hello."}], "max_tokens": 4, "temperature": 0.0}


def test_exit_statuses_are_told_as_signals_or_codes():
    assert describe_exit(-11).startswith("killed by SIGSEGV (signal 11")
    assert "out-of-memory" in describe_exit(-9)
    assert describe_exit(-6).startswith("killed by SIGABRT")
    assert describe_exit(3) == "exited with status 3"


def test_the_crash_is_found_inside_a_providers_error_text():
    inner = f"{CRASH_PREFIX} served model 'openai/m' (deployment llamacpp-m, model file /w.gguf): llama.cpp killed"
    escaped = ('litellm.InternalServerError: OpenAIException - {"error": {"message": "' + inner
               + '", "type": "server_error", "code": "replica_crashed"}}\\nTraceback (most recent call last): ...')
    assert crash_line(escaped) == inner
    assert crash_line("Connection refused") is None


def _request_waiting(pid: int) -> bool:
    """Bytes are waiting on the child's standard input (its next request has arrived)."""
    with open(f"/proc/{pid}/fd/0", "rb", buffering=0) as pipe:
        return struct.unpack("i", fcntl.ioctl(pipe.fileno(), termios.FIONREAD, b"\0\0\0\0"))[0] > 0


def crash_when_asked(pid: int, timeout: float = 120.0) -> None:
    """Stop the child, wait until a request is waiting for it, then let it die of SIGSEGV: a crash
    during a generation, whatever the timing of the caller."""
    os.kill(pid, signal.SIGSTOP)
    deadline = time.monotonic() + timeout
    while not _request_waiting(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(pid, signal.SIGSEGV)
    os.kill(pid, signal.SIGCONT)


@needs_llama
@pytest.mark.slow  # the worker is a child process
def test_the_worker_names_a_crash_during_a_generation_and_serves_on():
    path = str(resolve_weights(SMOLLM2))
    worker = LlamaWorker("smol", "llamacpp-smol", path, {"n_ctx": 512, "n_threads": 1})
    worker.start()
    try:
        assert worker.generate(HELLO)["choices"][0]["message"]["role"] == "assistant"
        pid = worker._proc.pid
        killer = threading.Thread(target=crash_when_asked, args=(pid,))
        killer.start()
        with pytest.raises(WorkerCrashed) as caught:
            worker.generate(HELLO)
        killer.join()
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(CRASH_PREFIX)
        for part in ("llamacpp-smol", path, "killed by SIGSEGV", "during a generation",
                     "Fatal Python error: Segmentation fault"):
            assert part in message, (part, message)
        # the next request gets a fresh child
        assert worker.generate(HELLO)["choices"][0]["message"]["role"] == "assistant"
        assert worker.crashes == 1 and worker._proc.pid != pid
    finally:
        worker.shutdown()
    assert Path(worker.log_path).exists()  # kept: it told of a crash


def _workers(name: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        cmd = proc.info["cmdline"] or []
        if "tauray.actors.serving.llama_worker" in cmd and cmd[-1] == name:
            found.append(proc)
    return found


def _idle_after_loading(proc: psutil.Process) -> bool:
    """The worker has its weights mapped and waits on its pipe for a request (the model is loaded)."""
    waiting = "pipe_read" in Path(f"/proc/{proc.pid}/wchan").read_text()
    return waiting and any(m.path.endswith(".gguf") for m in proc.memory_maps())


def _crash_the_first_generation(name: str, stop: threading.Event) -> None:
    """Every worker of served model ``name``: once it has loaded its model, crash it on its next request."""
    done: set[int] = set()
    while not stop.is_set():
        for proc in _workers(name):
            try:
                if proc.pid not in done and _idle_after_loading(proc):
                    done.add(proc.pid)
                    crash_when_asked(proc.pid, timeout=60)
            except (psutil.Error, OSError):  # it went away meanwhile
                continue
        time.sleep(0.05)


@needs_llama
def test_a_replica_that_crashes_on_its_first_generation_fails_models_check_in_one_line(serve_up, capsys):
    spec = smollm2_spec("crashy", replicas=1)
    spec["num_retries"] = 0  # each retry would be a fresh worker; one crash is the case under test
    stop = threading.Event()
    killer = threading.Thread(target=_crash_the_first_generation, args=("crashy", stop), daemon=True)
    killer.start()
    try:
        code = cmd_check(argparse.Namespace(models=[json.dumps(spec)], json=False, offline=False))
    finally:
        stop.set()
        killer.join()
    out = capsys.readouterr().out
    line = next(line for line in out.splitlines() if "cannot be used" in line)
    assert code == 2
    for part in ("openai/crashy", "served replica crashed", "deployment llamacpp-crashy",
                 str(resolve_weights(SMOLLM2)), "killed by SIGSEGV", "during a generation"):
        assert part in line, (part, line)
    assert "could not be reached" not in out

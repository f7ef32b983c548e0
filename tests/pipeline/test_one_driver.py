"""One driver per out dir: a sweep started on a folder another process writes to
fails at once, naming the holder, before any actor starts or any row is written."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from tauray.results import RunLockedError

_HOLD = """
import sys, time
from tauray.results import RunLock
lock = RunLock(sys.argv[1])
print("ready", flush=True)
time.sleep(120)
"""


def test_second_sweep_driver_on_the_same_out_dir_is_refused(endpoint, ray_local, tmp_path, sweep_factory):
    from tauray.pipeline.driver import execute as run_sweep

    out = tmp_path / "out"
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(out)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        cfg = sweep_factory(endpoint.base_url, agents=("a1",), users=("u1",), limit=1, trials=1)
        t0 = time.perf_counter()
        with pytest.raises(RunLockedError, match=rf"pid {holder.pid} on "):
            run_sweep(cfg, out=out, resume=True, progress=False)
        assert time.perf_counter() - t0 < 30
        assert not (out / "conversations").exists()
    finally:
        holder.kill()
        holder.wait()
    summary = run_sweep(cfg, out=out, resume=True, progress=False, keep_actors=True)  # the dead holder's lock
    assert summary.rows == summary.units == 1

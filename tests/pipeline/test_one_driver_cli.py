"""One driver: `tauray run` is a one-cell sweep (same unit ids, same rows as the equivalent
sweep file), the lock comes first, and bad input is one line before any model call, Ray
or Serve."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from tauray.pipeline.cli.main import build_parser
from tauray.pipeline.cli.run import config_from_args
from tauray.pipeline.driver import execute
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.sweep_file import load_sweep

RUN_FLAGS = ["run", "tau2_mock__*", "--domain", "mock", "--agent-model", "oracle", "--user-model",
             "openai/scripted-user", "--user-api-base", "{base}", "--user-concurrency", "8", "--trials", "2",
             "--seed", "7", "--max-steps", "40"]
SWEEP_FILE = """
name = "as-a-sweep"
agents = ["oracle"]
users = ["u"]
trials = 2
seed = 7
max_steps = 40
[[scenarios]]
patterns = ["tau2_mock__*"]
domain = "mock"
[models.u]
model = "openai/scripted-user"
api_base = "{base}"
rpm = 600          # operational: paces the calls, asks nothing different
concurrency = 3
"""


def _unit_ids(cfg) -> dict[tuple[str, int], tuple[str, int]]:
    plan = SweepPlan(cfg, select(cfg))
    return {(u.scenario, u.trial): (u.unit_id, u.seed) for cell in plan.cells for u in plan.units(cell)}


def _configs(base: str, tmp_path: Path):
    args = build_parser().parse_args([f.format(base=base) for f in RUN_FLAGS])
    path = tmp_path / "as-a-sweep.toml"
    path.write_text(SWEEP_FILE.format(base=base))
    return config_from_args(args), load_sweep(path)


def test_run_flags_and_the_equivalent_sweep_file_make_the_same_unit_ids(tmp_path):
    run_cfg, sweep_cfg = _configs("http://127.0.0.1:9/v1", tmp_path)
    ids = _unit_ids(run_cfg)
    assert len(ids) == 2 * 9 and ids == _unit_ids(sweep_cfg)
    moved = SWEEP_FILE.replace("127.0.0.1:9", "127.0.0.1:10")  # another endpoint port: an operational field
    path = tmp_path / "moved.toml"
    path.write_text(moved.format(base="http://127.0.0.1:9/v1"))
    assert _unit_ids(load_sweep(path)) == ids
    asked = SWEEP_FILE.replace("seed = 7", "seed = 8")  # what the models are asked: other ids
    path.write_text(asked.format(base="http://127.0.0.1:9/v1"))
    assert set(_unit_ids(load_sweep(path)).values()).isdisjoint(ids.values())


def test_run_flags_and_the_equivalent_sweep_file_write_the_same_rows(ray_local, endpoint, tmp_path):
    run_cfg, sweep_cfg = _configs(endpoint.base_url, tmp_path)
    tables = []
    for cfg, out in ((run_cfg, tmp_path / "run"), (sweep_cfg, tmp_path / "sweep")):
        summary = execute(cfg, out=out, probe=False, progress=False, keep_actors=True)
        assert summary.ran == summary.rows == 18
        tables.append(pd.read_parquet(out / "conversations"))
    varying = ["run_id", "sweep_id", "started_at", "duration_s", "written_at", "attempt_id"]
    a, b = (t.drop(columns=[c for c in varying if c in t]).sort_values("conversation_id").reset_index(drop=True)
            for t in tables)
    assert list(a["conversation_id"]) == list(b["conversation_id"])
    pd.testing.assert_frame_equal(a, b)


_PROBE = """
import contextlib, io, json, sys
from tauray.pipeline.cli.main import main
results = []
for argv in json.loads(sys.argv[1]):
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        rc = main(argv)
    ray = sys.modules.get("ray")
    results.append({"rc": rc, "err": err.getvalue(), "litellm": "litellm" in sys.modules,
                    "ray": bool(ray and ray.is_initialized())})
print(json.dumps(results))
"""


def _cli(cases: list[list[str]]) -> list[dict]:
    """Each command in one fresh process: exit code, stderr, and whether litellm was imported
    or Ray started by then."""
    done = subprocess.run([sys.executable, "-c", _PROBE, json.dumps(cases)], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_locked_folder_is_refused_first_before_litellm_or_ray(tmp_path):
    out = tmp_path / "held"
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time; from tauray.results.tables.lock import RunLock; "
                               f"RunLock({str(out)!r}); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t0 = time.perf_counter()
        [res] = _cli([["run", "--agent-model", "openai/gpt-4o-mini", "--agent-key-env", "TAURAY_TEST_UNSET_KEY",
                       "--user-model", "scripted", "--domain", "telecom", "--out", str(out)]])
        seconds = time.perf_counter() - t0
    finally:
        holder.kill()
        holder.wait()
    assert res["rc"] == 2 and f"pid {holder.pid}" in res["err"] and res["err"].count("\n") == 1, res
    assert not res["litellm"] and not res["ray"], res
    assert seconds < 60  # bounded; the figure on a quiet machine is in the closing note


@pytest.mark.slow
def test_bad_input_is_one_line_before_any_model_call_ray_or_serve(tmp_path):
    (tmp_path / "latin1.toml").write_bytes(b'name = "caf\xe9"\n')
    (tmp_path / "deep.toml").write_text("a = " + "[" * 5000 + "]" * 5000 + "\n")
    bomb = "a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
        f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdef", "bcdefg"))
    (tmp_path / "bomb.yaml").write_text(bomb)
    (tmp_path / "typo.toml").write_text('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "telcom"\n')
    (tmp_path / "budget.toml").write_text('budget_usd = 5.0\nagents = ["m"]\nusers = ["scripted"]\n[[scenarios]]\n'
                                          'domain = "mock"\n[models.m]\nmodel = "openai/no-price-known"\n'
                                          'api_base = "http://127.0.0.1:9/v1"\n')
    run = ["run", "--agent-model", "oracle", "--user-model", "scripted", "--out", str(tmp_path / "r")]
    cases = {
        "latin1": ["sweep", str(tmp_path / "latin1.toml")],
        "deep": ["sweep", str(tmp_path / "deep.toml")],
        "bomb": ["sweep", str(tmp_path / "bomb.yaml")],
        "domain typo in a sweep": ["sweep", str(tmp_path / "typo.toml"), "--out", str(tmp_path / "t")],
        "budget with an unpriced model": ["sweep", str(tmp_path / "budget.toml"), "--out", str(tmp_path / "b")],
        "domain typo": [*run, "--domain", "telcom"],
        "no scenario": [*run, "--domain", "mock", "no_such_scenario_*"],
        "empty out": [*run[:-2], "--out", "", "--domain", "mock"],
        "bad temperature": [*run, "--domain", "mock", "--user-model", "openai/x", "--user-temperature", "-1"],
        "wrong reference": ["run", "--agent-model", "scripted", "--user-model", "scripted", "--domain", "mock",
                            "--out", str(tmp_path / "w")],
    }
    results = dict(zip(cases, _cli(list(cases.values()))))
    needles = {"latin1": "not UTF-8", "deep": "nested more than 64", "bomb": "alias", "domain typo in a sweep":
               "telcom", "domain typo": "telcom", "budget with an unpriced model": "no price", "no scenario": "match no scenario", "empty out": "empty",
               "bad temperature": "temperature", "wrong reference": "scripted"}
    for name, res in results.items():
        assert res["rc"] == 2, (name, res)
        assert res["err"].count("\n") == 1 and needles[name] in res["err"], (name, res["err"])
        assert "Traceback" not in res["err"] and "https://" not in res["err"], (name, res["err"])
        assert not res["ray"], name
    assert not any((tmp_path / d).exists() for d in ("r", "t", "w", "b"))  # a refused run leaves no folder


def test_every_scalar_knob_of_the_config_is_a_flag_of_tauray_run():
    """A knob added to SweepConfig, ClusterConfig or ModelSpec must reach the command line (or
    be named here as set another way), so the config and the flags cannot drift apart."""
    from tauray.actors.llm import ModelSpec
    from tauray.pipeline.cli.flags import _scalar
    from tauray.pipeline.config import ClusterConfig, SweepConfig

    run = build_parser()._subparsers._group_actions[0].choices["run"]
    flags = {a.dest for a in run._actions}
    elsewhere = {"name": "--run-id", "judge_gates": "a sweep file's judges"}
    for model in (SweepConfig, ClusterConfig):
        for name, field in model.model_fields.items():
            if _scalar(field.annotation) is not None and name not in elsewhere:
                assert name in flags, f"{model.__name__}.{name} has no flag"
    for role in ("agent", "user"):
        for name, field in ModelSpec.model_fields.items():
            if _scalar(field.annotation) is not None and name != "reference_steps":
                assert f"{role}_{name}" in flags, f"ModelSpec.{name} has no --{role}- flag"


def test_run_resume_without_run_id_continues_the_run_the_folder_holds(ray_local, tmp_path, capsys, cli_json):
    from tauray.pipeline.cli.main import main

    out = tmp_path / "resumed"
    base = ["run", "tau2_mock__*", "--domain", "mock", "--agent-model", "oracle", "--user-model", "scripted",
            "--out", str(out), "--json", "--no-probe"]
    assert main([*base, "--limit", "2"]) == 0
    summary = cli_json(*base, "--limit", "3", "--resume")
    assert (summary["skipped"], summary["ran"], summary["rows"]) == (2, 1, 3)
    assert main([*base, "--resume", "--run-id", "another"]) == 2  # another run's units: refused, one line
    err = capsys.readouterr().err
    assert "holds run" in err and err.count("\n") == 1
    assert len(pd.read_parquet(out / "conversations")) == 3

"""Sweep files: validation errors that name file, field and expectation; deterministic ids."""

from __future__ import annotations

import json
import textwrap

import pytest

from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, model_identity, select
from tauray.pipeline.sweep_file import load_sweep

from .conftest import make_sweep


def _plan(cfg):
    """The plan the driver makes of a sweep config."""
    return SweepPlan(cfg, select(cfg))


def _write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(textwrap.dedent(text))
    return p


def test_example_file_loads_and_expands(monkeypatch):
    monkeypatch.setenv("TAURAY_ENDPOINT", "http://127.0.0.1:9/v1")
    from pathlib import Path

    cfg = load_sweep(Path(__file__).parents[2] / "tauray" / "data" / "sweeps" / "example.toml")
    plan = _plan(cfg)
    assert len(plan.cells) == 4 and len(plan.scenarios) == 114  # telecom base, manual variant
    assert plan.total == 4 * 114 * 2
    assert all(c.judge_configs[0].prompt == "overall-plain@1" for c in plan.cells)
    assert cfg.models["agent-chatty"].spec["api_base"] == "http://127.0.0.1:9/v1"
    unit = next(plan.units(plan.cells[0]))
    assert unit.run_id == unit.sweep_id == "example" and unit.judge_configs


@pytest.mark.parametrize("text, needles", [
    ("""
     agents = ["a"]
     users = ["scripted"]
     [[scenarios]]
     domain = "telecom"
     [models.a]
     model = "openai/x"
     concurrency = 0
     """, ["models.a", "concurrency", "greater than or equal to 1"]),
    ("""
     agents = ["nope"]
     users = ["scripted"]
     [[scenarios]]
     domain = "telecom"
     [models.a]
     model = "openai/x"
     """, ["agents[0]", "unknown model 'nope'", "expected one of: a"]),
    ("""
     agents = ["a"]
     users = ["scripted"]
     trials = "two"
     [[scenarios]]
     domain = "telecom"
     [models.a]
     model = "openai/x"
     """, ["field 'trials'", "valid integer"]),
    ("""
     agents = ["a"]
     users = ["scripted"]
     [[scenarios]]
     domian = "telecom"
     [models.a]
     model = "openai/x"
     """, ["scenarios.0.domian", "Extra inputs are not permitted"]),
    ("""
     agents = ["a"]
     users = ["scripted"]
     [[scenarios]]
     domain = "telecom"
     [models.a]
     model = "openai/x"
     api_base = "${TAURAY_TEST_UNSET_VAR}"
     """, ["models.a.api_base", "TAURAY_TEST_UNSET_VAR is not set"]),
    ("""
     agents = ["a"]
     users = ["scripted"]
     judges = [{ model = "a", prompt = "no-such-prompt@9" }]
     [[scenarios]]
     domain = "telecom"
     [models.a]
     model = "openai/x"
     """, ["judges[0]", "no-such-prompt"]),
    ("agents = [", ["not valid TOML"]),
])
def test_errors_name_file_field_and_expectation(tmp_path, text, needles):
    path = _write(tmp_path, "bad.toml", text)
    with pytest.raises(ConfigFileError) as err:
        load_sweep(path)
    msg = str(err.value)
    assert str(path) in msg
    for needle in needles:
        assert needle in msg, msg


def test_yaml_equals_toml(tmp_path):
    toml = _write(tmp_path, "s.toml", """
        name = "s"
        agents = ["oracle"]
        users = ["scripted"]
        trials = 2
        [[scenarios]]
        domain = "telecom"
        split = "small"
        [models.j]
        model = "openai/judge-json"
        """)
    yaml = _write(tmp_path, "s.yaml", """
        name: s
        agents: [oracle]
        users: [scripted]
        trials: 2
        scenarios: [{domain: telecom, split: small}]
        models: {j: {model: openai/judge-json}}
        """)
    a, b = _plan(load_sweep(toml)), _plan(load_sweep(yaml))
    ids = lambda p: [u.unit_id for c in p.cells for u in p.units(c)]  # noqa: E731
    assert ids(a) == ids(b) and len(ids(a)) == 2 * 40
    bad = _write(tmp_path, "b.yaml", "name: [unclosed\n")
    with pytest.raises(ConfigFileError, match="not valid YAML"):
        load_sweep(bad)


def test_unit_ids_and_seeds_are_deterministic_and_ignore_operational_fields():
    a = _plan(make_sweep("http://127.0.0.1:1/v1"))
    b = _plan(make_sweep("http://127.0.0.1:2/v1", spec={"concurrency": 3, "rpm": 10, "timeout": 5}))
    c = _plan(make_sweep("http://127.0.0.1:1/v1", spec={"temperature": 0.7}))
    units = lambda p: [(u.unit_id, u.seed) for cell in p.cells for u in p.units(cell)]  # noqa: E731
    assert units(a) == units(b)  # endpoint, limits and pacing are not what the model is asked
    assert not set(units(a)) & set(units(c))  # sampling is
    ids = [u for u, _ in units(a)]
    assert len(ids) == len(set(ids)) == 4 * 3 * 2
    seeds = {u.scenario: [] for cell in a.cells for u in a.units(cell)}
    for u in a.units(a.cells[0]):
        seeds[u.scenario].append(u.seed)
    assert all(len(set(s)) == 2 for s in seeds.values())  # trials differ
    assert "api_base" not in model_identity({"model": "openai/x", "api_base": "http://127.0.0.1:1/v1"})


def test_judge_grid_and_one_quota_per_model():
    cfg = make_sweep("http://127.0.0.1:1/v1", spec={"rpm": 100},
                     judges={"models": ["j"], "prompts": ["overall-plain@1", "overall-rubric"]})
    plan = _plan(cfg)
    # the judge's own config records, validated once here (a bare prompt id resolved to its version)
    assert [j.prompt for j in plan.cells[0].judge_configs] == ["overall-plain@1", "overall-rubric@2"]
    # no split per host or role: every caller is metered against the model's one quota
    assert plan.cells[0].agent.rpm == 100 and plan.cells[0].user.rpm == 100
    assert all(j.model.rpm == 100 for j in plan.cells[0].judge_configs)


def test_the_run_folder_keeps_no_secret_from_var_references_headers_or_env_vars(tmp_path, monkeypatch):
    """sweep.json stores ``${VAR}`` as written; credential-like extra parameters and the
    cluster's env_vars values are left out (issue 23's secrets rule, for the manifest)."""
    from tauray.pipeline.driver import write_manifest

    monkeypatch.setenv("TAURAY_T_BASE", "http://127.0.0.1:9/v1?k=S3CRET-BASE")
    path = _write(tmp_path, "s.toml", """
        agents = ["m"]
        users = ["scripted"]
        [[scenarios]]
        domain = "mock"
        [models.m]
        model = "openai/x"
        api_base = "${TAURAY_T_BASE}"
        extra_params = {extra_headers = {Authorization = "Bearer S3CRET-H"}, aws_secret_access_key = "S3CRET-AWS", top_p = 0.9}
        [cluster.runtime_env.env_vars]
        OPENAI_API_KEY = "S3CRET-ENV"
        """)
    cfg = load_sweep(path)
    assert cfg.models["m"].spec["api_base"].endswith("S3CRET-BASE")  # the run itself gets the value
    write_manifest(tmp_path, cfg)
    text = (tmp_path / "sweep.json").read_text()
    assert "S3CRET" not in text
    stored = json.loads(text)["sweep"]
    assert stored["models"]["m"]["api_base"] == "${TAURAY_T_BASE}"
    assert stored["models"]["m"]["extra_params"]["top_p"] == 0.9 and stored["max_steps"] == cfg.max_steps


def test_strict_tools_change_the_identity_only_when_asked():
    base = model_identity({"model": "openai/gpt-4o-mini"})
    assert "strict" not in base  # ids of models that do not ask stay what they were
    assert model_identity({"model": "openai/gpt-4o-mini", "strict": True}) == {**base, "strict": True}

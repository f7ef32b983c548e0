"""Unit and cell ids are a stored contract (issue 27).

Resume skips a unit whose id is on disk, so an id rule that changes by accident makes
a resumed sweep redo every finished conversation, and one that forgets an option makes
two different cells share ids. The mutation run found that no test pinned the rule
(renaming an identity key, dropping ``judge_gates`` or a judge option, a different hash
length or seed formula all passed). These values were computed once from the rule; a
deliberate change of the rule updates them and says so in its commit."""

from __future__ import annotations

import pytest

from tauray.pipeline.plan import SweepPlan, cell_id, select, unit_id, unit_seed
from tests.pipeline.conftest import make_sweep


def _plan(cfg):
    """The plan the driver makes of a sweep config."""
    return SweepPlan(cfg, select(cfg))

URL = "http://127.0.0.1:1/v1"
ONE = dict(agents=("a1",), users=("u1",), limit=1, trials=1)


def _first(**top):
    plan = _plan(make_sweep(URL, **{**ONE, **top}))
    cell = plan.cells[0]
    unit = next(plan.units(cell))
    return cell.cell_id, unit.unit_id, unit.seed, unit.judge_gates


def test_the_id_functions_are_pinned():
    assert unit_id("c", "s", 1) == "bf330b7cc0a21f04d923"
    assert cell_id({"b": [1, 2], "a": None}) == cell_id({"a": None, "b": [1, 2]}) == "c5f84d13a25f"
    assert unit_seed("ffffffff00", 0) == 1  # 0xffffffff mod (2**31 - 1)
    assert unit_seed("bf330b7cc0a21f04d923", 5) == 1060309890


@pytest.mark.parametrize(("top", "expected"), [
    ({}, ("5b7993763b76", "75df7a6b065dd7e7879f", 1977580139, False)),
    ({"judge_gates": True}, ("bb2f5ea0c114", "b67b6028192570229140", 914055209, True)),
    ({"max_steps": 7}, ("137a0289eba9", "f415a0074107966e5398", 1947574280, False)),
    ({"max_errors": 2}, ("0ac8658d5d34", "bed3e70f7b70e5628380", 1054074640, False)),
    ({"seed": 3}, ("6253e0da398d", "752a247b1298d5c136ff", 1965696126, False)),
    ({"spec": {"strict": True}}, ("790a71f555c1", "01f9767ad315642aa0f0", 33126010, False)),
    ({"judges": [{"model": "j", "prompt": "nl-assertions@1"}]},
     ("2bdb219866ae", "6d2dfe9f9af55158aee3", 1831730847, False)),
    ({"judges": [{"model": "j", "prompt": "nl-assertions@1", "nl_pack": "telecom-agent-conduct@1"}]},
     ("514cb238c471", "984667094863e625663b", 407267082, False)),
    ({"judges": [{"model": "j", "prompt": "overall-plain@1", "structured": "never"}]},
     ("62d0d06dbc3b", "595a97292cb39b8659fa", 1499109161, False)),
    ({"judges": [{"model": "j", "prompt": "overall-plain@1", "samples": 3}]},
     ("4df7eb8a1b2b", "d12e9165943ef55df750", 1362006374, False)),
], ids=lambda v: str(v)[:40])
def test_every_option_that_changes_the_answers_has_its_pinned_ids(top, expected):
    assert _first(**top) == expected


def test_units_skip_only_what_is_done():
    plan = _plan(make_sweep(URL, agents=("a1",), users=("u1",), limit=2, trials=2))
    cell = plan.cells[0]
    every = [u.unit_id for u in plan.units(cell)]
    assert len(every) == plan.units_per_cell == 4 and plan.total == 4
    assert [u.unit_id for u in plan.units(cell, skip={every[0]})] == every[1:]
    assert [u.unit_id for u in plan.units(cell, skip={every[1], every[2]})] == [every[0], every[3]]
    # trial-major: every scenario once before any twice
    assert [u.trial for u in plan.units(cell)] == [0, 0, 1, 1]


def test_reference_policies_and_make_units_defaults_are_pinned():
    """make_units: one trial of an oracle agent and a scripted user unless told otherwise
    (tests and benchmarks share these ids with `tauray run`)."""
    import datetime
    import pathlib

    from tauray.actors.llm.spec import ModelSpec
    from tests.units import make_units

    [unit] = make_units("r", ["tau2_mock__update_task_with_message_history"])
    assert (unit.unit_id, unit.cell_id, unit.seed) == ("b424583c05822bf40cd9", "0ad56e47d498", 874797117)
    assert (unit.agent, unit.user, unit.run_id, unit.trial) == (ModelSpec(model="oracle"), ModelSpec(model="scripted"),
                                                                 "r", 0)
    assert unit.scenario == "tau2_mock__update_task_with_message_history"
    assert len(make_units("r", ["tau2_mock__update_task_with_message_history"], trials=3)) == 3
    # a cell may hold values JSON has no type for: they hash by their text
    assert cell_id({"p": pathlib.Path("/x"), "d": datetime.date(2025, 1, 2)}) == "9b369aec4f5b"


def test_judge_options_at_their_defaults_leave_the_identity_alone():
    from tauray.pipeline.plan import _judge_identity

    base = {"model": {"model": "openai/j"}, "prompt": "overall-plain@1", "samples": 1}
    assert _judge_identity(base) == _judge_identity({**base, "structured": "auto", "nl_pack": None})
    assert _judge_identity({**base, "structured": "never"})["structured"] == "never"
    assert _judge_identity({**base, "nl_pack": "p@1"})["nl_pack"] == "p@1"


def test_selection_patterns_limits_and_errors():
    from tauray.pipeline.files import ConfigFileError

    plan = _plan(make_sweep(URL, patterns=["*roaming*"], limit=2))
    assert plan.scenarios == ["tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off",
                              "tau2_telecom__mobile_data_issue__user_abroad_roaming_disabled_on__persona_easy"]
    assert len(_plan(make_sweep(URL, limit=None, split="small")).scenarios) > 2
    with pytest.raises(ConfigFileError) as err:
        _plan(make_sweep(URL, patterns=["nope_*"]))
    assert str(err.value) == "t: field 'scenarios': the selections match no scenario"
    with pytest.raises(ConfigFileError) as err:
        _plan(make_sweep(URL, split="nosuchsplit"))
    assert str(err.value).startswith("t: field 'scenarios[0]': unknown split 'nosuchsplit'; available here: ")


def test_a_served_model_is_identified_by_what_it_serves_not_where(tmp_path):
    from tauray.actors.llm import ModelSpec
    from tauray.pipeline.plan import model_identity

    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    spec = {"model": "openai/m", "serve": {"backend": "llamacpp", "gguf": str(gguf), "n_threads": 1}}
    ident = model_identity(spec)
    assert ident["serve"] == ModelSpec.model_validate(spec).serve.identity()
    assert "serve" not in model_identity({"model": "openai/m"}) and "strict" not in model_identity({"model": "openai/m"})
    assert model_identity({"model": "openai/m", "strict": True})["strict"] is True


def test_units_carry_typed_specs_that_nothing_downstream_validates_again(monkeypatch):
    """The plan validates the model specs and judge configs once; the hosts, the loop and
    the judge take the unit's records as they are (issue 34: no dict re-validated on the way)."""
    import asyncio

    from tauray.actors.conversation import run_conversation
    from tauray.actors.hosts import AgentHost, UserSimHost
    from tauray.actors.judge.config import JudgeConfig
    from tauray.actors.llm.spec import ModelSpec

    plan = _plan(make_sweep(URL, judges=[{"model": "j", "prompt": "overall-plain@1"}]))
    unit = next(plan.units(plan.cells[0]))
    assert isinstance(unit.agent, ModelSpec) and isinstance(unit.user, ModelSpec)
    assert [type(j) for j in unit.judge_configs] == [JudgeConfig]
    assert plan.cells[0].agent is unit.agent  # the cell's record, not a copy per unit

    from tests.units import make_units

    [oracle] = make_units("typed", ["tau2_mock__create_task_1"])

    def refuse(*args, **kwargs):
        raise AssertionError("a model spec was validated again after the plan")

    monkeypatch.setattr(ModelSpec, "model_validate", classmethod(refuse))
    row = asyncio.run(run_conversation(oracle, AgentHost(), UserSimHost())).conversation
    assert row.error_kind is None and row.success, row.error_message

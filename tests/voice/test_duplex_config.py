"""Turn-taking as a sweep axis: 'half' (the default) keeps every id; 'duplex' cells fold in their
pipeline, rules and clock; bad duplex input is one line at load, before anything is written."""

from __future__ import annotations

import re

import pytest

from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.sweep_file import load_sweep
from tests.voice.test_voice_config import CONTROL_CELL


def _plan(tmp_path, voice: str, models: str = "", agents: str = '["oracle"]') -> SweepPlan:
    path = tmp_path / "v.toml"
    path.write_text(f'name = "v"\nagents = {agents}\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    f'{models}[voice]\nprofiles = ["control"]\n{voice}')
    cfg = load_sweep(path)
    return SweepPlan(cfg, select(cfg))


def test_half_is_the_default_and_keeps_the_control_cell(tmp_path) -> None:
    assert _plan(tmp_path, 'turn_taking = ["half"]\n').cells[0].cell_id == CONTROL_CELL
    cell = _plan(tmp_path, "").cells[0]
    assert cell.cell_id == CONTROL_CELL and cell.voice.turn_taking == "half" and cell.voice.duplex is None


def test_duplex_is_an_axis_beside_half_with_the_same_seeds(tmp_path) -> None:
    plan = _plan(tmp_path, 'turn_taking = ["half", "duplex"]\n')
    half, duplex = plan.cells
    assert half.cell_id == CONTROL_CELL and duplex.cell_id != CONTROL_CELL
    assert duplex.voice.turn_taking == "duplex" and duplex.voice.duplex is not None
    assert duplex.voice.duplex.rules.opening == "caller"  # a call opens as a half-duplex one does
    assert duplex.voice.duplex.rules.hears == "text"  # and the caller hears the agent as half duplex's does
    heard = _plan(tmp_path, 'turn_taking = ["duplex"]\nhear_agent = true\n').cells[0]
    assert heard.voice.duplex.rules.hears == "channel" and heard.cell_id != duplex.cell_id
    told = _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_rules = {hears = "channel"}\n').cells[0]
    assert told.voice.duplex.rules.hears == "channel"
    for a, b in zip(plan.units(half), plan.units(duplex)):
        assert (a.scenario, a.seed) == (b.scenario, b.seed) and a.unit_id != b.unit_id


def test_text_cells_have_no_duplex_twin(tmp_path) -> None:
    plan = _plan(tmp_path, 'turn_taking = ["half", "duplex"]\n')
    path = tmp_path / "t.toml"
    path.write_text('name = "v"\nagents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    '[voice]\nprofiles = ["text", "control"]\nturn_taking = ["half", "duplex"]\n')
    cfg = load_sweep(path)
    cells = SweepPlan(cfg, select(cfg)).cells
    assert [(c.profile, c.voice and c.voice.turn_taking) for c in cells] == [
        ("text", None), ("control", "half"), ("control", "duplex")]
    assert plan.cells[1].cell_id == cells[2].cell_id


def test_every_duplex_setting_makes_another_cell(tmp_path) -> None:
    plain = _plan(tmp_path, 'turn_taking = ["duplex"]\n').cells[0].cell_id
    changed = {
        "pipeline": _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_pipeline = {end_of_turn_ms = 900}\n'),
        "rules": _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_rules = {respond_after_silence_s = 0.5}\n'),
        "clock": _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_clock = {tick_ms = 100}\n'),
    }
    ids = {k: p.cells[0].cell_id for k, p in changed.items()}
    assert len({plain, *ids.values()}) == 4, ids
    assert changed["pipeline"].cells[0].voice.duplex.pipeline.end_of_turn_ms == 900


def test_a_list_of_pipelines_is_an_axis_of_duplex_cells(tmp_path) -> None:
    # two end-of-turn settings compared in one sweep: one duplex cell per pipeline, the half cell once
    plan = _plan(tmp_path, 'turn_taking = ["half", "duplex"]\n'
                 'duplex_pipeline = [{end_of_turn_ms = 300}, {end_of_turn_ms = 900}]\n')
    half, eot300, eot900 = plan.cells
    assert half.cell_id == CONTROL_CELL and half.voice.duplex is None
    assert [c.voice.duplex.pipeline.end_of_turn_ms for c in (eot300, eot900)] == [300, 900]
    assert [c.voice.duplex.pipeline.label() for c in (eot300, eot900)] == ["end_of_turn_ms=300", "end_of_turn_ms=900"]
    one = _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_pipeline = {end_of_turn_ms = 300}\n').cells[0]
    assert eot300.cell_id == one.cell_id  # a one-item list is that table: the same cell
    for a, b in zip(plan.units(eot300), plan.units(eot900)):
        assert (a.scenario, a.seed) == (b.scenario, b.seed) and a.unit_id != b.unit_id


@pytest.mark.parametrize(("voice", "message"), [
    ('turn_taking = ["duplex"]\nduplex_pipeline = [{end_of_turn_ms = 300}, {end_of_turn_ms = 5}]\n',
     r"voice.duplex_pipeline\[1\].end_of_turn_ms"),
    ('turn_taking = ["duplex"]\nduplex_pipeline = [{end_of_turn_ms = 600}, {}]\n',
     r"voice.duplex_pipeline: two entries are the same pipeline"),
    ('turn_taking = ["duplex"]\nduplex_pipeline = []\n', r"voice.duplex_pipeline: an empty list"),
    ('turn_taking = ["full"]\n', r"voice.turn_taking\[0\]: unknown turn-taking 'full'; known: half, duplex"),
    ('turn_taking = ["duplex"]\nduplex_clock = {tick_ms = 10}\n', r"voice.duplex_clock.tick_ms: tick must be 20-1000"),
    ('turn_taking = ["duplex"]\nduplex_clock = {tick_ms = 210}\n', r"voice.duplex_clock.tick_ms: .*20 ms"),
    ('turn_taking = ["duplex"]\nduplex_rules = {yield_after_s = 1}\n',
     r"voice.duplex_rules: unknown parameter 'yield_after_s'; known: yield_agent_started_s"),
    ('turn_taking = ["duplex"]\nduplex_pipeline = {end_of_turn_ms = 5}\n', r"voice.duplex_pipeline.end_of_turn_ms"),
    ('turn_taking = ["duplex"]\nduplex_pipeline = {vad = "webrtc"}\n', r"pip install webrtcvad"),
    ('duplex_pipeline = {end_of_turn_ms = 900}\n', r"voice.duplex_pipeline: set, but turn_taking has no 'duplex'"),
    ('turn_taking = ["half", "half"]\n', r"voice.turn_taking: expected distinct"),
])
def test_bad_duplex_input_is_one_line_at_load(tmp_path, voice: str, message: str) -> None:
    with pytest.raises(ConfigFileError) as info:
        _plan(tmp_path, voice)
    line = str(info.value).strip()
    assert "\n" not in line and re.search(message, line.replace("field '", "").replace("':", ":")), line
    assert not (tmp_path / "runs").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["v.toml"]


def test_duplex_needs_speech_and_a_streaming_agent(tmp_path) -> None:
    path = tmp_path / "t.toml"
    path.write_text('name = "v"\nagents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    '[voice]\nturn_taking = ["duplex"]\n')
    with pytest.raises(ConfigFileError, match="'duplex' needs a speech profile other than 'text'"):
        load_sweep(path)
    models = '[models.a]\nmodel = "openai/audio-a"\napi_base = "http://127.0.0.1:9/v1"\n'
    with pytest.raises(ConfigFileError, match="audio-in agent 'a' cannot stream"):
        _plan(tmp_path, 'audio_agents = ["a"]\nturn_taking = ["duplex"]\n', models, agents='["a"]')


def test_a_duplex_row_whose_call_never_ran_still_names_its_pipeline(tmp_path) -> None:
    # an infra row of a duplex cell (the call failed before the engine ran) read as an arm of its
    # own, "agent | user [cell]", beside its pipeline's arm
    from types import SimpleNamespace

    from tauray.actors.records import _duplex_columns

    plan = _plan(tmp_path, 'turn_taking = ["duplex"]\nduplex_pipeline = [{end_of_turn_ms = 300}, {}]\n')
    cols = [_duplex_columns(SimpleNamespace(voice=c.voice, duplex=None)) for c in plan.cells]
    assert [c["duplex_pipeline"] for c in cols] == ["end_of_turn_ms=300", "default pipeline"]
    assert [c["duplex_pipeline_id"] for c in cols] == [c.voice.duplex.pipeline.identity() for c in plan.cells]


def test_the_speech_workers_start_only_for_what_uses_them(tmp_path):
    from tauray.pipeline.driver import _needs_speech_pool

    def needs(voice: str, models: str = "") -> bool:
        plan = _plan(tmp_path, voice, models)
        return _needs_speech_pool(plan.cfg, plan)

    assert needs('turn_taking = ["half"]\n') and needs('turn_taking = ["half", "duplex"]\n')
    assert not needs('turn_taking = ["duplex"]\n')  # a duplex call speaks and hears through its own engines
    served = '[models.ears]\nrole = "asr"\nmodel = "local/whisper-tiny.en"\nserve = { replicas = 1, num_cpus = 0 }\n'
    assert needs('turn_taking = ["duplex"]\nasr = "ears"\n', served)  # the pool deploys the served recogniser

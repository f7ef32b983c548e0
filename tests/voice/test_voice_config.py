"""The speech-profile axis of a sweep: part of a voice cell's identity, none of a text
cell's (existing runs resume unchanged), and bad voice input refused in one line at load."""

from __future__ import annotations

import hashlib

import pytest

from tauray.actors.voice.rules import VOICE_AGENT, VOICE_USER, prompt_labels, spell, spell_identifiers
from tauray.pipeline.config import run_config
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.sweep_file import load_sweep

# data/sweeps/example.toml planned by the code before voice mode (commit b12d7dc, /work/main):
# its four cells and a hash of its 912 unit ids, in plan order
EXAMPLE_CELLS = ["7cf62241e995", "60b4e50b8c4a", "0038109b29f0", "449fefe8f781"]
EXAMPLE_IDS_SHA = "527f304be3066c149917144736266334129b8174cd420d57e5133aeb41bdb149"


def _ids(plan: SweepPlan) -> list[str]:
    return [uid for cell in plan.cells for uid, _, _ in plan.unit_ids(cell)]


def test_an_existing_text_sweeps_unit_ids_are_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TAURAY_ENDPOINT", "http://127.0.0.1:8765/v1")
    cfg = load_sweep("tauray/data/sweeps/example.toml")
    plan = SweepPlan(cfg, select(cfg))
    assert [c.cell_id for c in plan.cells] == EXAMPLE_CELLS
    ids = _ids(plan)
    assert len(ids) == 912 and hashlib.sha256("\n".join(ids).encode()).hexdigest() == EXAMPLE_IDS_SHA
    assert all(c.voice is None and c.profile == "text" for c in plan.cells)


def test_profiles_are_an_axis_and_part_of_the_identity() -> None:
    base = dict(agent={"model": "oracle"}, user={"model": "scripted"}, patterns=["tau2_mock__*"], name="v")
    text = SweepPlan(run_config(**base), select(run_config(**base)))
    both = run_config(**base, voice={"profiles": ["text", "control", "regular"]})
    plan = SweepPlan(both, select(both))
    assert [c.profile for c in plan.cells] == ["text", "control", "regular"]
    assert plan.cells[0].cell_id == text.cells[0].cell_id  # the text cell of a voice sweep: today's ids
    assert len({c.cell_id for c in plan.cells}) == 3
    unit = next(plan.units(plan.cells[1]))
    assert unit.voice is not None and unit.voice.prompts == prompt_labels()
    heard = run_config(**base, voice={"profiles": ["control"], "hear_agent": True})
    assert SweepPlan(heard, select(heard)).cells[0].cell_id != plan.cells[1].cell_id


def test_a_voice_unit_has_the_seed_of_its_text_twin() -> None:
    base = dict(agent={"model": "oracle"}, user={"model": "scripted"}, patterns=["tau2_mock__*"], name="v", trials=2)
    alone = run_config(**base)  # the text cell as it was planned before voice mode
    before = {(u.scenario, u.trial): (u.unit_id, u.seed) for u in SweepPlan(alone, select(alone)).units(
        SweepPlan(alone, select(alone)).cells[0])}
    cfg = run_config(**base, voice={"profiles": ["text", "control", "regular"]})
    plan = SweepPlan(cfg, select(cfg))
    text, control, regular = ([u for u in plan.units(c)] for c in plan.cells)
    assert {(u.scenario, u.trial): (u.unit_id, u.seed) for u in text} == before  # text units: ids and seeds as before
    for twin, a, b in zip(text, control, regular):
        assert (twin.scenario, twin.trial) == (a.scenario, a.trial) == (b.scenario, b.trial)
        assert a.seed == b.seed == twin.seed  # the same task, trial and seed in every profile
        assert len({twin.unit_id, a.unit_id, b.unit_id}) == 3  # ids still differ by profile
        assert a.voice is not None and a.voice.text_cell_id == twin.cell_id
    assert len({u.seed for u in text}) == len(text)


_LEVEL = ('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n[voice]\n'
          'profiles = ["text", "control", "noisy10"]\n[voice.levels.noisy10]\nbase = "regular"\n')


def test_a_custom_level_is_set_from_the_sweep_file(tmp_path) -> None:
    path = tmp_path / "level.toml"
    path.write_text(_LEVEL + 'effects = {noise = {snr_db = 10}, drops = "off"}\nout_of_turn_per_min = 0\n')
    cfg = load_sweep(path)
    plan = SweepPlan(cfg, select(cfg))
    control, level = plan.cells[1].voice, plan.cells[2].voice
    assert not control.custom and level.profile.name == "noisy10" and level.custom
    assert level.profile.effects.noise.snr_db == 10 and level.profile.effects.drops is None
    assert level.profile.effects.bursts is not None and level.profile.behaviour.out_of_turn_per_min == 0
    path.write_text(_LEVEL + 'effects = {noise = {snr_db = 12}}\n')  # other parameters: another cell
    other = SweepPlan(load_sweep(path), select(load_sweep(path))).cells[2].cell_id
    assert other != plan.cells[2].cell_id


@pytest.mark.parametrize("level, message", [
    ('effects = {noise = {snr_db = 90}}', "field 'voice.levels.noisy10': speech effect noise.snr_db: Input should be "
     "less than or equal to 60"),
    ('effects = {echo = {}}', "field 'voice.levels.noisy10': speech effect 'echo' is unknown"),
    ('base = "loud"', "field 'voice.levels.noisy10.base': expected a built-in speech profile, got 'loud'"),
])
def test_a_bad_custom_level_is_one_line_at_load(tmp_path, level: str, message: str) -> None:
    path = tmp_path / "bad.toml"
    text = _LEVEL.replace('base = "regular"\n', "") + (level if level.startswith("base") else f'base = "regular"\n{level}')
    path.write_text(text + "\n")
    with pytest.raises(ConfigFileError) as err:
        load_sweep(path)
    assert message in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("voice, message", [
    ({"profiles": ["noisy"]}, "unknown speech profile 'noisy'"),
    ({"profiles": ["control", "control"]}, "expected distinct profiles"),
    ({"tts": "nowhere"}, "field 'voice.tts': unknown speech model 'nowhere'"),
    ({"profiles": ["control"], "audio_agents": ["oracle"]}, "is not a model among the agents"),
    ({"profiles": ["control"], "asr": "local/whisper-huge"}, "field 'voice.asr': asr model 'local/whisper-huge' is "
     "unknown; local: local/whisper-tiny.en, local/whisper-base"),
    ({"profiles": ["control"], "tts": "local/festival"}, "field 'voice.tts': tts model 'local/festival' is unknown"),
])
def test_bad_voice_input_is_one_line_at_load(tmp_path, voice: dict, message: str) -> None:
    lines = [f"{k} = {v!r}".replace("'", '"') for k, v in voice.items()]
    path = tmp_path / "bad.toml"
    path.write_text('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n[voice]\n'
                    + "\n".join(lines).replace("True", "true") + "\n")
    with pytest.raises(ConfigFileError) as err:
        load_sweep(path)
    text = str(err.value)
    assert message in text and "\n" not in text
    assert not any(tmp_path.iterdir()) or [p.name for p in tmp_path.iterdir()] == ["bad.toml"]


def test_a_recogniser_whose_package_is_missing_is_refused_at_load(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == "faster_whisper" else real(n, *a))
    path = tmp_path / "bad.toml"
    path.write_text('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    '[voice]\nprofiles = ["text", "control"]\nasr = "local/whisper-base"\n')
    with pytest.raises(ConfigFileError) as err:
        load_sweep(path)
    assert "field 'voice.asr': asr model 'local/whisper-base' needs faster-whisper: pip install 'tauray[voice]'" \
        in str(err.value) and "\n" not in str(err.value)
    assert [p.name for p in tmp_path.iterdir()] == ["bad.toml"]


@pytest.mark.slow  # imports litellm (~30 s on the shared 2-core machine)
def test_an_audio_in_agent_on_a_model_without_audio_is_refused(tmp_path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text('agents = ["a"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    '[models.a]\nmodel = "openai/gpt-3.5-turbo"\n'
                    '[voice]\nprofiles = ["control"]\naudio_agents = ["a"]\n')
    with pytest.raises(ConfigFileError, match="takes no audio input"):
        load_sweep(path)


def test_voice_rules_are_versioned_and_identifiers_spelled() -> None:
    assert VOICE_USER.label.startswith("voice-user@2#") and VOICE_AGENT.label.startswith("voice-agent@1#")
    assert spell("C1001") == "C, 1, 0, 0, 1"
    assert spell_identifiers("my number is 555-123-4567, 2 lines") == \
        "my number is 5, 5, 5, dash, 1, 2, 3, dash, 4, 5, 6, 7, 2 lines"


def _voice_cell(tmp_path, voice: str, models: str = "") -> str:
    path = tmp_path / "v.toml"
    path.write_text('name = "v"\nagents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    f'{models}[voice]\nprofiles = ["control"]\n{voice}')
    cfg = load_sweep(path)
    return SweepPlan(cfg, select(cfg)).cells[0].cell_id


# the control cell of the sweep _voice_cell writes with no other [voice] option (an unset
# hotwords option leaves the identity as it was before the option): a changed key or value of the
# voice identity changes it, and a voice run would no longer resume (it was ee89c4f07425 until
# the default caller voices became neural and the default recogniser's decoding, named by the
# recogniser's name alone, joined its identity)
CONTROL_CELL = "8802516ae281"
# the same cell before the built-in profiles' version 2 (callers slow down to spell): a redefined
# profile makes new cells, so a resumed run never mixes the two definitions
CONTROL_CELL_V1 = "7a8b5eba9ce7"


def test_every_part_of_a_voice_identity_and_nothing_else_makes_another_cell(tmp_path) -> None:
    plain = _voice_cell(tmp_path, "")
    assert plain == CONTROL_CELL != CONTROL_CELL_V1
    asr = '[models.ears]\nrole = "asr"\nmodel = "local/whisper-tiny.en"\n'
    changed = {
        "tts": _voice_cell(tmp_path, 'tts = "local/espeak-ng"\nasr = "local/whisper-base"\n'),
        "hear_agent": _voice_cell(tmp_path, "hear_agent = true\n"),
        "asr entry": _voice_cell(tmp_path, 'asr = "ears"\n', asr),
        "hotwords": _voice_cell(tmp_path, 'asr = "ears"\n', asr + 'hotwords = "five"\n'),
        "beam": _voice_cell(tmp_path, 'asr = "ears"\n', asr + "beam_size = 2\n"),
        "prompt": _voice_cell(tmp_path, 'asr = "ears"\n', asr + 'prompt = ""\n'),
        "vad": _voice_cell(tmp_path, 'asr = "ears"\n', asr + "vad_filter = true\n"),
    }
    assert len({plain, *changed.values()}) == len(changed) + 1, changed
    same = {  # how audio is kept, or how a hosted engine is reached, paced or priced: the same cell
        "keep_audio": _voice_cell(tmp_path, 'keep_audio = "all"\n'),
        "entry address": _voice_cell(tmp_path, 'asr = "ears"\n', asr + 'api_base = "http://127.0.0.1:9/v1"\n'),
        "served": _voice_cell(tmp_path, 'asr = "ears"\n', asr + "serve = { replicas = 2, num_cpus = 0 }\n"),
    }
    assert same["keep_audio"] == plain and same["entry address"] == changed["asr entry"]
    assert same["served"] == changed["asr entry"]  # where the recogniser runs is not what it hears

"""Speech models as model specs bound to the tts and asr roles: a sweep file's [models] entries
with a role, bound by [voice]; a hosted pair (litellm speech and transcription) carries a real
voice conversation against the local endpoint, which answers as OpenAI's /audio/speech and
/audio/transcriptions document; every call is admitted by the quota book and priced; and
`tauray models check` checks a speech spec offline."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.quota import QuotaBook, quota_key, reset_gate
from tauray.actors.voice.speaker import LocalSpeech
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import SweepPlan, select
from tauray.pipeline.sweep_file import load_sweep

pytest.importorskip("faster_whisper")

TTS_PER_CHAR = 1.5e-05  # litellm's price of openai/tts-1 (input_cost_per_character)
ASR_PER_SECOND = 0.0001  # and of openai/whisper-1 (input_cost_per_second)


def _sweep(tmp_path: Path, base: str, extra: str = "") -> Path:
    path = tmp_path / "hosted.toml"
    path.write_text(f'''name = "hosted-voice"
agents = ["oracle"]
users = ["scripted"]
[[scenarios]]
domain = "telecom"
split = "base"
limit = 1
[models.voice-out]
role = "tts"
model = "openai/tts-1"
voice = "nova"
api_base = "{base}"
api_key_env = "TAURAY_TEST_SPEECH_KEY"
rpm = 600
[models.voice-in]
role = "asr"
model = "openai/whisper-1"
api_base = "{base}"
api_key_env = "TAURAY_TEST_SPEECH_KEY"
rpm = 600
[voice]
profiles = ["control"]
tts = "voice-out"
asr = "voice-in"
{extra}''')
    return path


@pytest.mark.slow  # the endpoint (a subprocess), litellm, a packaged Whisper on the endpoint's side
def test_a_hosted_speech_pair_carries_a_voice_conversation(endpoint, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TAURAY_TEST_SPEECH_KEY", "sk-test-not-a-secret")
    cfg = load_sweep(_sweep(tmp_path, endpoint.base_url))
    plan = SweepPlan(cfg, select(cfg))
    unit = next(plan.units(plan.cells[0]))
    assert unit.voice.tts.model == "openai/tts-1" and unit.voice.asr.rpm == 600
    book = QuotaBook()
    reset_gate(book)
    endpoint.reset_stats()
    try:
        result = asyncio.run(run_conversation(unit, AgentHost(), UserSimHost(), speech=LocalSpeech()))
    finally:
        reset_gate()
    c = result.conversation
    assert c.error_kind is None, c.error_message
    said = result.utterances
    assert said and all(u.tts_model == "openai/tts-1" and u.asr_model == "openai/whisper-1" for u in said)
    assert all(u.voice == "nova" for u in said)  # the provider's voice, not an espeak persona's
    assert any(u.heard_text for u in said)
    for u in said:  # priced as litellm prices the two models
        assert u.asr_cost_usd == pytest.approx(u.audio_seconds * ASR_PER_SECOND, rel=1e-3, abs=1e-7)
        assert u.tts_cost_usd is not None and u.tts_cost_usd <= len(u.spoken_text) * TTS_PER_CHAR + 1e-9
    assert c.speech_cost_usd == pytest.approx(sum(u.tts_cost_usd + u.asr_cost_usd for u in said), abs=1e-7)
    served = endpoint.stats()["by_behaviour"]
    speech_calls, heard_calls = served.get("audio/speech:tts-1", 0), served.get("audio/transcriptions:whisper-1", 0)
    assert heard_calls == len(said) and speech_calls >= 1
    admitted = {key: s["admitted"] for key, s in book.stats().items()}
    assert admitted == {quota_key("openai/tts-1", endpoint.base_url): speech_calls,
                        quota_key("openai/whisper-1", endpoint.base_url): heard_calls}
    # every admitted call settled: none held (before: the settle call raised on the book's old signature)
    assert {key: s["in_flight"] for key, s in book.stats().items()} == dict.fromkeys(admitted, 0)


def test_a_speech_entry_is_bound_to_its_own_role_only(tmp_path) -> None:
    path = _sweep(tmp_path, "http://127.0.0.1:9/v1").read_text()
    bad = tmp_path / "bad.toml"
    bad.write_text(path.replace('tts = "voice-out"', 'tts = "voice-in"'))
    with pytest.raises(ConfigFileError, match="field 'voice.tts': model 'voice-in' is not bound to the tts role"):
        load_sweep(bad)
    bad.write_text(path.replace('agents = ["oracle"]', 'agents = ["voice-out"]'))
    with pytest.raises(ConfigFileError, match=r"field 'agents\[0\]': 'voice-out' is a speech model"):
        load_sweep(bad)
    bad.write_text(path.replace('rpm = 600\n[voice]', 'rpm = 0\n[voice]'))
    with pytest.raises(ConfigFileError, match="models.voice-in"):
        load_sweep(bad)


def test_a_local_recogniser_on_a_gpu_is_set_from_the_sweep_file(tmp_path) -> None:
    path = tmp_path / "gpu.toml"
    path.write_text('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    '[models.gpu-ears]\nrole = "asr"\nmodel = "local/whisper-base"\ndevice = "cuda"\n'
                    '[voice]\nprofiles = ["control"]\nasr = "gpu-ears"\n')
    cfg = load_sweep(path)
    unit = next(SweepPlan(cfg, select(cfg)).units(SweepPlan(cfg, select(cfg)).cells[0]))
    assert unit.voice.asr.model == "local/whisper-base" and unit.voice.asr.device == "cuda"


@pytest.mark.slow  # imports litellm (its model map)
def test_models_check_checks_a_speech_spec_offline(capsys, monkeypatch) -> None:
    from tauray.pipeline.cli.main import main

    monkeypatch.delenv("TAURAY_TEST_SPEECH_KEY", raising=False)
    code = main(["models", "check", json.dumps({"role": "asr", "model": "openai/whisper-1", "rpm": 50}),
                 json.dumps({"role": "tts", "model": "local/espeak-ng"}), "--json"])
    hosted, local = json.loads(capsys.readouterr().out)
    assert code == 0
    assert hosted["provider"] == "openai" and hosted["mode"] == "audio_transcription" and hosted["rpm"] == 50
    assert hosted["price"] == "$0.0001 per second" and hosted["error"] is None
    assert local["engine"] == "espeak-ng" and local["price"] == "free (local)"
    assert main(["models", "check", json.dumps({"role": "asr", "model": "local/whisper-huge"})]) == 2
    assert "asr model 'local/whisper-huge' is unknown" in capsys.readouterr().out
    missing = json.dumps({"role": "tts", "model": "openai/tts-1", "api_key_env": "TAURAY_TEST_SPEECH_KEY"})
    assert main(["models", "check", missing]) == 2
    assert "TAURAY_TEST_SPEECH_KEY (api_key_env) is not set" in capsys.readouterr().out


def test_speech_spend_counts_against_the_budget() -> None:
    """A voice conversation's hosted speech is money like its model calls: the scheduler's budget
    adds it (before: only the agent's, user's and judge's costs were counted)."""
    from types import SimpleNamespace

    from tauray.pipeline.accounting import conversation_cost

    row = SimpleNamespace(agent_cost_usd=0.25, user_cost_usd=None, judge_cost_usd=0.0, speech_cost_usd=0.5)
    assert conversation_cost(row) == pytest.approx(0.75)
    text = SimpleNamespace(agent_cost_usd=0.25, user_cost_usd=None, judge_cost_usd=0.0, speech_cost_usd=None)
    assert conversation_cost(text) == pytest.approx(0.25)


@pytest.mark.slow  # imports litellm (its model map)
def test_a_budget_with_an_unpriced_hosted_speech_model_is_refused(tmp_path, monkeypatch) -> None:
    from tauray.pipeline.driver import check_models

    monkeypatch.setenv("TAURAY_TEST_SPEECH_KEY", "sk-test-not-a-secret")
    priced = load_sweep(_budgeted(tmp_path, "openai/whisper-1"))
    check_models(priced)  # litellm prices tts-1 and whisper-1: the budget can count them
    unpriced = load_sweep(_budgeted(tmp_path, "openai/no-such-recogniser"))
    with pytest.raises(ConfigFileError, match=r"no price for voice-in.*usd_per_minute"):
        check_models(unpriced)
    given = load_sweep(_budgeted(tmp_path, "openai/no-such-recogniser", "usd_per_minute = 0.006\n"))
    check_models(given)
    from tauray.pipeline.accounting import stored_speech_cost

    assert stored_speech_cost(tmp_path / "nothing-yet", SweepPlan(given, select(given))) == 0.0  # a resumed budget reads it


def _budgeted(tmp_path: Path, asr: str, price: str = "") -> Path:
    path = _sweep(tmp_path, "http://127.0.0.1:9/v1")
    text = path.read_text().replace('name = "hosted-voice"', 'name = "hosted-voice"\nbudget_usd = 1.0')
    text = text.replace('model = "openai/whisper-1"\n', f'model = "{asr}"\n{price}')
    path.write_text(text)
    return path


def test_a_speech_429_is_read_as_the_chat_client_reads_it() -> None:
    """retry-after-ms and a 429 that is not litellm's RateLimitError count too (before: only
    litellm.RateLimitError with a retry-after in seconds)."""
    import httpx
    import openai

    from tauray.actors.voice.engines.hosted import _rate_limited

    def refused(headers: dict[str, str]) -> openai.RateLimitError:
        response = httpx.Response(429, headers=headers, request=httpx.Request("POST", "http://127.0.0.1/v1/x"))
        return openai.RateLimitError("slow down", response=response, body=None)

    assert _rate_limited(refused({"retry-after-ms": "1500"})) == pytest.approx(1.5)
    assert _rate_limited(refused({})) == 0.0
    assert _rate_limited(ValueError("not a rate limit")) is None


@pytest.mark.slow  # starts the endpoint (a subprocess)
def test_the_endpoints_audio_429_says_when_to_retry() -> None:
    """An audio route over the endpoint's quota answers as its chat route does: retry-after and
    the rate-limit headers (before: the audio refusal called the headers with the wait as the model)."""
    import httpx

    from tauray.endpoint.launcher import start_endpoint

    with start_endpoint(quota_rpm=1, quota_period_s=60.0) as ep:
        body = {"model": "tts-1", "input": "Hello.", "voice": "alloy", "response_format": "wav"}
        first = httpx.post(f"{ep.base_url}/audio/speech", json=body, timeout=60)
        second = httpx.post(f"{ep.base_url}/audio/speech", json=body, timeout=60)
    assert first.status_code == 200 and second.status_code == 429
    assert int(second.headers["retry-after"]) >= 1 and "x-ratelimit-limit-requests" in second.headers
    assert "rpm=1" in second.json()["error"]["message"]

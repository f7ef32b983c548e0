"""A voice run on Ray carries its utterances on the run's speech pool (SpeechWorker actors,
audio through the object store), from the host of the side that speaks: neither on a thread of
each coordinator nor through a speech call on its loop."""

from __future__ import annotations

import hashlib

import pytest

from tauray.actors.voice.pool import NAMESPACE, directory_name
from tauray.pipeline.config import run_config
from tauray.pipeline.driver import execute
from tauray.pipeline.pool import KEPT
from tauray.results import utterances_df
from tauray.results.tables.layout import audio_path

pytest.importorskip("faster_whisper")
pytestmark = pytest.mark.slow


def _carried_by_hosts(ray_local) -> dict[str, int]:
    """Utterances each kept host has carried so far (the kept hosts serve other tests too)."""
    if KEPT.pool is None:
        return {}
    hosts = [h for g in KEPT.pool.groups for h in (*g.agents, *g.users)]
    return {h._actor_id.hex(): ray_local.get(h.stats.remote())["carried"] for h in hosts}


def test_a_voice_run_on_ray_speaks_through_the_speech_pool(ray_local, tmp_path) -> None:
    before = _carried_by_hosts(ray_local)
    cfg = run_config(name="voice-pool", domain="mock", limit=2, agent={"model": "oracle"},
                     user={"model": "scripted"}, voice={"profiles": ["control"], "asr": "local/whisper-tiny.en",
                                                        "keep_audio": "all"})
    summary = execute(cfg, out=tmp_path / cfg.name, probe=False, progress=False, keep_actors=True)
    assert summary.ran == 2 and summary.internal_errors == 0, summary
    said = utterances_df(tmp_path / cfg.name)
    assert len(said) > 0
    for column in ("audio_ref", "spoken_audio_ref"):  # both sides, where the report looks for them
        assert said[column].notna().all(), column
        for ref in said[column]:
            assert hashlib.sha256(audio_path(tmp_path / cfg.name, ref).read_bytes()).hexdigest() == ref
    stats = [ray_local.get(c.stats.remote()) for g in KEPT.pool.groups for c in g.coordinators]
    assert all(set(s) == {"in_flight", "done"} for s in stats), stats  # no speech on coordinators
    after = _carried_by_hosts(ray_local)
    carried = sum(n - before.get(host, 0) for host, n in after.items())
    assert carried == len(said)  # the speaking hosts carried every one
    with pytest.raises(ValueError):  # the run's pool directory is stopped with the run
        ray_local.get_actor(directory_name(cfg.name), namespace=NAMESPACE)


def test_an_audio_in_agent_on_ray_hears_the_line_audio_its_user_host_carried(ray_local, endpoint, tmp_path) -> None:
    """The line audio's ObjectRef goes from the speech worker through the caller's host and the
    coordinator to the agent's host, which sends it to the model as an audio part."""
    from tauray.endpoint.audio_agent import HEARD_PREFIX
    from tauray.results import messages_df
    from tauray.scenarios import select_scenarios

    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    cfg = run_config(name="voice-pool-audio-in", patterns=names, domain="telecom",
                     agent={"model": "openai/audio-agent", "api_base": endpoint.base_url, "num_retries": 0},
                     user={"model": "openai/scripted-user:2", "api_base": endpoint.base_url, "num_retries": 0},
                     voice={"profiles": ["control"], "asr": "local/whisper-tiny.en",
                            "audio_agents": ["openai/audio-agent"], "keep_audio": "none"})
    summary = execute(cfg, out=tmp_path / cfg.name, probe=False, progress=False)
    assert summary.ran == 1 and summary.internal_errors == 0, summary
    said = utterances_df(tmp_path / cfg.name)
    caller = said[said["side"] == "user"]
    assert len(caller) > 0 and (caller["heard_as"] == "audio").all()
    messages = messages_df(tmp_path / cfg.name)
    replies = messages[(messages["side"] == "agent") & (messages["role"] == "assistant")]["content"].dropna()
    assert len(replies) > 0 and all(r.startswith(HEARD_PREFIX) for r in replies)

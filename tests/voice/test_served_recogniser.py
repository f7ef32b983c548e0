"""A local recogniser served on Ray Serve (an ``asr`` spec with ``serve``): what a sweep may ask
for, and, on the suite's local Ray, that the served replicas hear what the in-process
recogniser hears, that the run's speech workers use them, and that a deployment no node can
place is refused in one line and cleaned up."""

from __future__ import annotations

import numpy as np
import pytest

from tauray.actors.voice.engines import ServedASR, make_asr
from tauray.actors.voice.engines.served import app_name
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.spec import RecogniserServe, SpeechModelSpec, check_spec, check_speech_model

TINY = "local/whisper-tiny.en"


def _served(**serve) -> SpeechModelSpec:
    return SpeechModelSpec(role="asr", model=TINY, serve=RecogniserServe(**({"num_cpus": 0} | serve)))


# --------------------------------------------------------------------------- what may be asked (no Ray)


@pytest.mark.parametrize(("spec", "words"), [
    (dict(role="tts", model="local/espeak-ng", serve={}), "serve runs a local recogniser"),
    (dict(role="asr", model="openai/whisper-1", serve={}), "served by its provider"),
    (dict(role="asr", model=TINY, serve={"num_gpus": 1}), "set device = 'cuda'"),
    (dict(role="asr", model=TINY, device="cuda", serve={}), "needs serve.num_gpus > 0"),
])
def test_a_serve_block_that_cannot_work_is_refused_in_one_line(spec, words):
    with pytest.raises(SpeechConfigError) as info:
        check_spec(SpeechModelSpec.model_validate(spec))
    assert words in str(info.value) and "\n" not in str(info.value)


def test_a_resource_amount_that_is_not_positive_is_refused_as_for_a_served_chat_model():
    check = check_speech_model({"role": "asr", "model": TINY, "serve": {"resources": {"asr_node": 0}}})
    assert check.error is not None and "serve.resources" in check.error and "positive amount" in check.error


def test_an_unknown_serve_field_names_the_field():
    check = check_speech_model({"role": "asr", "model": TINY, "serve": {"replica": 2}})
    assert check.error is not None and "serve.replica" in check.error


def test_where_the_recogniser_runs_is_not_what_it_hears():
    plain = SpeechModelSpec(role="asr", model=TINY)
    served = _served(replicas=3, num_cpus=2)
    assert served.identity() == plain.identity()  # voice cell ids do not move with the placement
    check_spec(served)
    assert "on Ray Serve (3 replica(s), 0 GPU each)" in check_speech_model(served).engine
    # the application's name follows what it hears with and where it runs, and nothing else
    assert app_name(served) == app_name(_served(replicas=3, num_cpus=2))
    assert app_name(served) != app_name(_served(replicas=2, num_cpus=2))
    assert app_name(served) != app_name(served.model_copy(update={"beam_size": 2}))
    assert isinstance(make_asr(served), ServedASR) and not isinstance(make_asr(plain), ServedASR)


def test_a_sweeps_served_recogniser_is_not_taken_for_a_served_chat_model(tmp_path):
    from tauray.pipeline.serving import serve_for_sweep
    from tauray.pipeline.sweep_file import load_sweep

    path = tmp_path / "served-asr.toml"
    path.write_text('agents = ["oracle"]\nusers = ["scripted"]\n[[scenarios]]\ndomain = "mock"\n'
                    f'[models.ears]\nrole = "asr"\nmodel = "{TINY}"\nserve = {{ replicas = 2, num_cpus = 0 }}\n'
                    '[voice]\nprofiles = ["text", "control"]\nasr = "ears"\n')
    cfg = load_sweep(path)
    assert cfg.speech_spec("asr").serve == RecogniserServe(replicas=2, num_cpus=0)
    same, served = serve_for_sweep(cfg)  # before: "a model with serve must be written 'openai/<name>'"
    assert same is cfg and not served


# --------------------------------------------------------------------------- on Ray Serve


@pytest.mark.slow
def test_the_runs_speech_workers_send_their_audio_to_the_served_recogniser(ray_local):
    pytest.importorskip("faster_whisper")
    import asyncio

    from ray import serve

    from tauray.actors.voice.config import VoiceSettings
    from tauray.actors.voice.pool import start_run_pool, stop_run_pool
    from tauray.actors.voice.speaker import LocalSpeech

    tts, asr = SpeechModelSpec(role="tts", model="local/espeak-ng"), _served()
    text = "Hello, my line id is L, 1, 0, 0, 2."

    def said(client, voice):
        return asyncio.run(client.carry(text, unit_id="u-1", attempt=0, turn=0, side="user", clock_s=0.0,
                                        voice=voice, task_id="task-1"))[0]

    started = start_run_pool("served-asr-test", tts=tts, asr=asr, reserved_cpus=2.0)
    try:
        client = started[0]
        assert len(client.workers) == 1  # no CPU left over: one worker, the recogniser apart
        record = said(client, VoiceSettings(profile="control", tts=tts, asr=asr))
        assert app_name(asr) in serve.status().applications
        engine = ray_local.get(client.workers[0].__ray_call__.remote(lambda w: type(w.channel("control").asr).__name__))
        assert engine == "ServedASR"  # the worker holds no recogniser of its own
        silence = ray_local.get(client.workers[0].__ray_call__.remote(
            lambda w: w.channel("control").asr.transcribe(np.zeros(0, np.float32))))
        assert silence == ""
    finally:
        stop_run_pool(started)
    # the same model and decoding in this process hears the same words
    local = said(LocalSpeech(), VoiceSettings(profile="control", tts=tts, asr=SpeechModelSpec(role="asr",
                                                                                                      model=TINY)))
    assert record.heard_text and record.heard_text == local.heard_text and record.asr_model == TINY
    try:  # the run's recogniser goes with its pool
        gone = app_name(asr) not in serve.status().applications
    except Exception:  # this run started Serve, and shut it down with the application
        gone = True
    assert gone


@pytest.mark.slow
def test_a_recogniser_no_node_can_place_is_refused_in_one_line_and_removed(ray_local):
    from ray import serve

    from tauray.actors.voice.engines.served import ServedRecogniser, ServeStartError

    spec = _served(resources={"asr_node_nobody_has": 1}, startup_timeout_s=4)
    served = ServedRecogniser(spec)
    with pytest.raises(ServeStartError) as info:
        served.start()
    line = str(info.value)
    assert "served recogniser 'local/whisper-tiny.en'" in line and "asr_node_nobody_has" in line
    assert "\n" not in line
    try:
        assert served.app not in serve.status().applications
    except Exception:  # Serve shut down with it (this test started it)
        pass

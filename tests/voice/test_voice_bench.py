"""`tauray bench voice` measures what the docs' tables report, by a command: accuracy per
recogniser and per caller voice on a seeded corpus; the developer's coordinator bench the
coordinator's CPU per conversation in voice against text and the speech cost per conversation
(tiny sizes here: the figures are not checked, only that each is measured)."""

from __future__ import annotations

import pytest

from tauray.actors.voice.corpus import CORPUS_SEED, caller_utterances
from tauray.pipeline.cli.main import build_parser

pytest.importorskip("faster_whisper")


def test_the_voice_bench_options_parse() -> None:
    args = build_parser().parse_args(["bench", "voice", "--workers", "none", "--seed", "99", "--voices",
                                      "en-us+f2,en-us+m7", "--asr", "local/whisper-tiny.en,local/whisper-base",
                                      "--accuracy", "6"])
    assert args.workers == () and args.seed == 99 and args.voices == "en-us+f2,en-us+m7"
    assert args.accuracy == 6 and args.asr == "local/whisper-tiny.en,local/whisper-base"
    assert caller_utterances(3, seed=99) != caller_utterances(3, seed=CORPUS_SEED)
    assert build_parser().parse_args(["bench", "voice"]).seed == CORPUS_SEED  # the frozen corpus by default


@pytest.mark.slow  # Ray, two short runs each of text and voice, a packaged Whisper (about a minute here)
def test_the_voice_bench_measures_coordinator_cpu_cost_and_voices(ray_local) -> None:
    from dev.bench.coordinator import coordinator_cpu
    from tauray.pipeline.bench.voice import run_voice_bench

    result = run_voice_bench(utterances=2, workers=(), accuracy_utterances=2, seed=99, profiles=("control",),
                             voices=("piper/joe",))
    # the shortest tasks, a short idle window, no voice warm-up: the figures, not their size, are tested
    cpu = coordinator_cpu(1, domain="mock", idle_s=1.0, warm_voice=False)
    # psutil's process counters tick every 10 ms: a mock text conversation may cost less than one
    assert cpu["conversations"] == 1 and cpu["text_coordinator_cpu_s_per_conversation"] >= 0
    assert cpu["voice_coordinator_cpu_s_per_conversation"] > 0
    # the task threads' own CPU (nanoseconds, from the kernel's scheduler counters)
    assert cpu["text_coordinator_task_threads_cpu_ms_per_conversation"] > 0
    assert cpu["coordinator_task_threads_cpu_ms_per_conversation_voice_vs_text"] > 0
    # the event-loop thread alone: the conversations' own work, read inside each coordinator
    assert cpu["text_coordinator_loop_cpu_ms_per_conversation"] > 0
    assert cpu["voice_coordinator_loop_cpu_ms_per_conversation"] > 0
    assert cpu["coordinator_loop_cpu_ms_per_conversation_voice_vs_text"] > 0 and "idle_coordinator_loop_cpu_ms_per_s" in cpu
    assert cpu["speech_cost_usd_per_conversation"] == 0.0  # local engines cost no money
    assert cpu["speech_compute_s_per_conversation"] > 0 and cpu["utterances_per_conversation"] > 0
    assert result["corpus_seed"] == 99 and [a["profile"] for a in result["accuracy"]] == ["control"]
    assert [v["voice"] for v in result["voices"]] == ["piper/joe"] and result["voices"][0]["utterances"] == 2
    # synthesis cost per kind of speaker, beside espeak-ng's measured in the same run
    assert set(result["tts_rtf"]) == set(result["tts_rtf_espeak"]) == {"clear", "accented", "agent"}
    assert all(result["tts_rtf_vs_espeak"][k] > 1 for k in result["tts_rtf"])  # neural voices cost more
    assert all(v > 0 for v in result["speech_cpu_seconds_per_conversation"].values())
    # recognition CPU with the default decoding beside greedy's on the same audio
    assert result["asr_rtf"] > 0 and result["asr_rtf_greedy"] > 0 and result["asr_rtf_vs_greedy"] > 0
    assert "throughput_utterances_per_s" not in result


@pytest.mark.slow  # Ray, the endpoint, one voice and one text run of one conversation, a packaged Whisper
def test_the_paced_comparison_runs_the_same_conversation_in_voice_and_text_at_one_pace(ray_local) -> None:
    from dev.bench.voice_paced import paced_coordinator_cpu

    result = paced_coordinator_cpu(1, latency=0.05, rounds=1, domain="mock", warm_voice=False)
    (only,) = result["rounds"]
    voice, text = only["voice"], only["text"]
    # the writing pair follows the reference steps whatever it hears: the same calls and turns
    assert voice["successes"] == text["successes"] == 1
    assert voice["calls_per_conversation"] == text["calls_per_conversation"] > 0
    assert voice["turns_per_conversation"] == text["turns_per_conversation"]
    # the text run is paced to last as long as the voice run: its latency is the voice wall over its calls
    assert text["latency_s"] == pytest.approx(voice["wall_s"] / voice["most_calls"], abs=0.002)
    assert text["latency_s"] > voice["latency_s"]  # speech makes each voice call take longer than its latency
    assert voice["loop_cpu_ms_per_conversation"] > 0 and text["loop_cpu_ms_per_conversation"] > 0
    assert result["median_per_conversation_voice_vs_text"] == only["per_conversation_voice_vs_text"] > 0
    # the replay: the same voice conversation, every utterance replayed at once, and text at the same latency
    same = only["same_timing"]
    replayed, typed = same["voice_replayed"], same["text"]
    assert replayed["utterances_replayed"] > 0 and replayed["utterances_carried"] == 0
    assert replayed["calls_per_conversation"] == typed["calls_per_conversation"] == voice["calls_per_conversation"]
    assert replayed["latency_s"] == typed["latency_s"] == voice["latency_s"]
    assert result["median_same_timing_per_conversation_voice_vs_text"] == same["per_conversation_voice_vs_text"] > 0

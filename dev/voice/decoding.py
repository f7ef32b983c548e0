"""``python -m dev.voice.decoding``: the recogniser's decoding, chosen on a tuning draw.

Candidate decodings of the packaged Whisper (beam width, a domain prompt, faster-whisper's
VAD filter) on caller utterances of a tuning draw (``--seed``, never the measured corpus's
2026), per synthesiser and profile, through the product's own measurement
(:func:`tauray.pipeline.bench.voice.accuracy`). The winner became the spec's default
(:data:`tauray.actors.voice.spec.CALL_PROMPT`, the "call" prompt, beam 5); the product then measures it once
on the frozen corpus (``tauray bench voice --accuracy 500``). The candidate prompts live here,
not in the product: none holds an identifier (tests/voice/test_decoding.py reads them too).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from tauray.actors.voice.channel import SpeechChannel
from tauray.actors.voice.corpus import caller_utterances
from tauray.actors.voice.engines import make_asr, make_tts
from tauray.actors.voice.spec import CALL_PROMPT, SpeechModelSpec
from tauray.pipeline.bench.voice import accuracy

PROMPTS: dict[str, str] = {
    "digits": ("A phone call to customer support. The caller spells numbers and ids one character at a time, "
               "like 4, 0, 7 or C, 3, and says dash between groups."),
    "short": "Spelled one character at a time: 3, 1, dash, 7, L, 5, C, 8.",
    "call": CALL_PROMPT,
    "topic": "A customer service phone call about a mobile line and an account.",
    "letters": ("A phone call to customer support. The caller spells numbers and ids one character at a "
                "time, like 4, 0, 7 or L, 3 or C, 5, and says dash between groups."),
}
CANDIDATES: dict[str, dict[str, Any]] = {
    "greedy": {"beam_size": 1, "prompt": ""},
    "beam5": {"beam_size": 5, "prompt": ""},
    "greedy+digits": {"beam_size": 1, "prompt": PROMPTS["digits"]},
    "beam3+digits": {"beam_size": 3, "prompt": PROMPTS["digits"]},
    "beam5+digits": {"beam_size": 5, "prompt": PROMPTS["digits"]},
    "beam5+short": {"beam_size": 5, "prompt": PROMPTS["short"]},
    "beam5+call": {"beam_size": 5, "prompt": PROMPTS["call"]},
    "beam5+topic": {"beam_size": 5, "prompt": PROMPTS["topic"]},
    "beam5+letters": {"beam_size": 5, "prompt": PROMPTS["letters"]},
    "beam5+call+vad": {"beam_size": 5, "prompt": PROMPTS["call"], "vad_filter": True},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dev.voice.decoding", description=__doc__.splitlines()[0])
    parser.add_argument("--utterances", type=int, default=100, help="caller utterances of the tuning draw")
    parser.add_argument("--seed", type=int, default=99, help="the tuning draw (never 2026, the measured corpus)")
    parser.add_argument("--tts", default="local/neural,local/espeak-ng", help="synthesisers, comma-separated")
    parser.add_argument("--profiles", default="control,regular", help="profiles, comma-separated")
    parser.add_argument("--candidates", default=",".join(CANDIDATES), help="decodings, comma-separated")
    args = parser.parse_args(argv)
    if args.seed == 2026:
        parser.error("--seed 2026 is the measured corpus: tune on another draw")
    texts = caller_utterances(args.utterances, seed=args.seed)
    synthesisers = {name: make_tts(name) for name in args.tts.split(",")}
    for candidate in args.candidates.split(","):
        asr = make_asr(SpeechModelSpec(role="asr", model="local/whisper-tiny.en", **CANDIDATES[candidate]))
        for name, tts in synthesisers.items():
            for profile in args.profiles.split(","):
                started = time.perf_counter()
                row = accuracy(profile, texts, channel=SpeechChannel(profile, tts=tts, asr=asr))
                row = {"candidate": candidate, **{k: row[k] for k in ("tts", "profile", "identifiers",
                       "identifiers_exact", "identifier_exact_rate", "identifier_exact_ci95", "wer",
                       "asr_rtf")}, "wall_s": round(time.perf_counter() - started, 1)}
                print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How the packaged recogniser decodes is part of what it is: the beam, the domain prompt and the
VAD filter are a local recogniser's, named in its identity and in every utterance's row; and the
prompt never holds an identifier a caller could say (it would be heard because it was shown):
no value of any domain's data, no run of four characters of one, nothing the identifier metric
reads as an identifier. Three spelled digits are allowed: every such triple is in some id."""

from __future__ import annotations

import re
from functools import cache

import pytest

from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.metrics import identifiers
from tauray.actors.voice.rules import IDENTIFIER
from tauray.actors.voice.spec import CALL_PROMPT, SpeechModelSpec, check_spec, decoding_label
from tauray.scenarios.upstream import domain_data_dir


@cache
def _domain_identifiers() -> frozenset[str]:
    """Every identifier in the domains' data files (letters, digits and joining symbols, with a
    digit: four characters or more, or three with a letter; a three-digit number is a number), as
    digits and letters only, lower case."""
    found: set[str] = set()
    for domain in ("telecom", "airline", "retail", "mock"):
        for path in domain_data_dir(domain).rglob("*"):
            if path.suffix in (".toml", ".json") and path.stat().st_size < 50_000_000:
                text = path.read_text(encoding="utf-8", errors="ignore")
                found.update(re.sub(r"[^0-9a-z]", "", m.group(0).lower()) for m in IDENTIFIER.finditer(text))
    return frozenset(f for f in found if len(f) >= 4 or (re.search(r"[a-z]", f) and len(f) >= 3))


def _prompts() -> dict[str, str]:
    try:
        from dev.voice.decoding import PROMPTS  # the tuning candidates, from a checkout
    except ImportError:
        PROMPTS = {}
    return {"default": CALL_PROMPT, **PROMPTS}


@pytest.mark.slow  # reads every domain's data files (about 5 s)
@pytest.mark.parametrize("name", list(_prompts()))
def test_no_prompt_holds_an_identifier_of_any_domain(name):
    prompt = _prompts()[name]
    assert identifiers(prompt) == [], "the metric would read an identifier in the prompt"
    spelled = re.sub(r"[^0-9a-z]", "", prompt.lower())
    runs = {re.sub(r"[^0-9a-z]", "", m) for m in re.findall(r"(?:\b[0-9A-Za-z]\b(?:,\s*|\s+dash,?\s*)?){2,}", prompt)}
    known = _domain_identifiers()
    assert len(known) > 1000  # the data was read
    for run in runs:  # a spelled run: no known identifier, nor four characters of one
        assert not any(run == k or (len(run) >= 4 and run in k) for k in known), (name, run)
    assert not any(k in spelled for k in known if len(k) >= 5), name


def test_decoding_is_a_local_recognisers_identity_and_label():
    default = SpeechModelSpec(role="asr", model="local/whisper-tiny.en")
    greedy = SpeechModelSpec(role="asr", model="local/whisper-tiny.en", beam_size=1, prompt="")
    vad = SpeechModelSpec(role="asr", model="local/whisper-tiny.en", vad_filter=True)
    identities = [s.identity() for s in (default, greedy, vad)]
    assert len({str(sorted(i.items())) for i in identities}) == 3
    assert default.decoding() == decoding_label(5, CALL_PROMPT, False, None)
    assert default.decoding().startswith("beam 5, prompt ") and greedy.decoding() == "greedy, no prompt"
    assert vad.decoding().endswith(", vad")
    hosted = SpeechModelSpec(role="asr", model="openai/whisper-1")
    tts = SpeechModelSpec(role="tts", model="local/neural")
    assert hosted.decoding() == tts.decoding() == ""
    assert "prompt" not in hosted.identity() and "beam_size" not in tts.identity()


@pytest.mark.parametrize("field, value", [("beam_size", 1), ("prompt", "digits"), ("vad_filter", True)])
def test_decoding_options_on_an_engine_that_does_not_decode_are_refused(field, value):
    for role, model in (("asr", "openai/whisper-1"), ("tts", "local/neural")):
        with pytest.raises(SpeechConfigError, match=f"{field} set how a local recogniser decodes"):
            check_spec(SpeechModelSpec(role=role, model=model, **{field: value}))
    check_spec(SpeechModelSpec(role="asr", model="local/whisper-tiny.en", **{field: value}))


def test_the_served_recogniser_is_named_by_its_decoding():
    from tauray.actors.voice.engines.served import app_name

    serve = {"replicas": 1}
    default = SpeechModelSpec(role="asr", model="local/whisper-tiny.en", serve=serve)
    assert app_name(default) != app_name(default.model_copy(update={"prompt": ""}))
    assert app_name(default) != app_name(default.model_copy(update={"vad_filter": True}))

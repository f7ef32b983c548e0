"""The utterance record: one row per utterance carried over the speech channel, what was
said and what was heard, so a voice run says per utterance what was lost between mouth
and ear (``tauray/actors/voice`` builds it; the ``utterances`` table stores it)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from tauray.results.tables.records.columns import (
    _ROW_CONFIG,
    ATTEMPT_DOC,
    UNIT_ID_DOC,
    Attempt,
    Count,
    JsonText,
    Side,
    UnitId,
)


class UtteranceRecord(BaseModel):
    """One utterance on one side of one conversation, spoken, carried and recognised."""

    model_config = _ROW_CONFIG

    run_id: str = Field("", description="Run the utterance belongs to (stamped when the conversation's rows are "
                        "built; the readers join on it).")
    unit_id: UnitId = Field(description=UNIT_ID_DOC)
    attempt: Attempt = Field(default=0, description=ATTEMPT_DOC)
    turn: int = Field(ge=0, description="Turn of the conversation the utterance belongs to.")
    side: Side = Field(description="Who spoke it: 'agent' or 'user'.")
    profile: str = Field(description="Speech profile the channel ran with (tauray/actors/voice/profiles.py).")
    spoken_text: str = Field(description="The text the speaker meant to say (what went into speech synthesis).")
    heard_text: str = Field(description="The text the recogniser produced from the line audio: what the other side hears.")
    heard_as: Literal["text", "audio"] = Field("text", description="How the listener took the utterance: 'text' "
                                               "(the recogniser's text) or 'audio' (an audio-in agent got the line "
                                               "audio itself; heard_text is then the recogniser's reading of it, "
                                               "for the record).")
    heard_differs: bool = Field(False, description="The listener got other words than the speaker said (the "
                                "normalised words differ). On an agent utterance (carried only under hear_agent) it "
                                "marks where the user simulator's view departs from the agent's own words, which a "
                                "simulator that reads them (τ-Voice's) would have had.")
    wer: float = Field(ge=0.0, description="Word error rate of heard against spoken text, after the shared "
                       "normalisation (case, punctuation, digits as words); 0 when both are empty.")
    words_spoken: Count = Field(description="Words in the normalised spoken text (the WER's denominator).")
    identifiers_spoken: Count = Field(description="Identifiers found in the spoken text (phone numbers, account, "
                                      "customer and line ids, digit strings of 4 or more).")
    identifiers_lost: Count = Field(description="Spoken identifiers whose exact normalised form is not in the heard text.")
    lost_identifiers: JsonText = Field(description='JSON list of {"kind", "spoken"} for each lost identifier '
                                       "(kind: phone, line_id, account_id, id, digits).")
    identifiers_heard: JsonText = Field(description='JSON list of {"kind", "value"} for the identifiers found in the '
                                        "heard text (normalised).")
    phone_numbers_spoken: Count = Field(description="Phone numbers (10 digits) among the spoken identifiers.")
    phone_numbers_lost: Count = Field(description="Phone numbers among the lost identifiers.")
    account_ids_spoken: Count = Field(description="Account or customer ids (a letter C or A, then digits) spoken.")
    account_ids_lost: Count = Field(description="Account or customer ids among the lost identifiers.")
    line_ids_spoken: Count = Field(description="Line ids (the letter L, then digits) spoken.")
    line_ids_lost: Count = Field(description="Line ids among the lost identifiers.")
    digits_spoken: Count = Field(description="Digits in the spoken identifiers, concatenated in order.")
    digit_errors: Count = Field(description="Edit distance (insertions, deletions, substitutions) between the spoken "
                                "and the heard identifiers' digit strings.")
    audio_seconds: float = Field(ge=0.0, description="Length of the line audio, seconds (simulated time it took to say).")
    start_s: float = Field(ge=0.0, description="Start of the utterance on the conversation's simulated clock, seconds.")
    end_s: float = Field(ge=0.0, description="End of the utterance on the simulated clock (start_s + audio_seconds).")
    tts_seconds: float = Field(ge=0.0, description="Compute time of speech synthesis (wall clock, 0 on a cache hit).")
    effects_seconds: float = Field(ge=0.0, description="Compute time of the source effects and the telephone line.")
    asr_seconds: float = Field(ge=0.0, description="Compute time of recognition (wall clock).")
    tts_cost_usd: float | None = Field(None, ge=0.0, description="What the synthesis calls of this utterance cost "
                                       "(a hosted engine's price per character or second; 0 for a local engine and "
                                       "on a cache hit); null when the price is unknown.")
    asr_cost_usd: float | None = Field(None, ge=0.0, description="What recognising it cost (per second of audio for "
                                       "a hosted engine; 0 for a local one); null when the price is unknown.")
    tts_model: str = Field(description="Speech synthesis engine, e.g. 'local/neural', 'local/espeak-ng'.")
    voice: str = Field(description="Voice the utterance was spoken in: the synthesiser's voice name, e.g. "
                       "'kokoro/jf_alpha', 'piper/joe', espeak-ng's 'en-us+m3'.")
    asr_model: str = Field(description="Recogniser and model, e.g. 'local/whisper-base'.")
    asr_decoding: str = Field("", description="How a local recogniser decoded: beam, a hash of its prompt, the VAD "
                              "filter, hotwords ('beam 5, prompt 1a2b3c4d'); '' for a hosted one.")
    effects: JsonText = Field(description="JSON object of the effects applied to this utterance and their drawn "
                              "parameters (noise SNR, bursts, muffled stretch, dropped frames, out-of-turn speech).")
    seed: int = Field(ge=0, description="Seed every random choice of this utterance came from (a stable hash of "
                      "unit, turn, side and the profile's seed).")
    audio_ref: str | None = Field(None, description="Content hash (sha256) of what the line delivered (FLAC of the "
                                  "decoded μ-law line audio), stored in the run's audio folder (audio/<ref[:2]>/<ref>"
                                  ".flac); None when the sweep's keep policy kept no audio of the conversation.")
    spoken_audio_ref: str | None = Field(None, description="Content hash (sha256) of the spoken side (FLAC of the "
                                         "synthesised speech with the source effects, before the line), stored "
                                         "like audio_ref; None when no audio was kept.")

"""Audio files in the run folder: both sides of every utterance of a voice conversation are
stored content-addressed (FLAC) under the run folder's audio/ per the sweep's keep policy, and
the utterance rows name them (audio_ref: what the line delivered; spoken_audio_ref: the spoken
side); a policy that drops a conversation's audio leaves no file and no ref."""

from __future__ import annotations

import asyncio
import hashlib
import io
from pathlib import Path
from typing import Any

import pytest

from tauray.actors.conversation import run_conversation
from tauray.actors.hosts import AgentHost, UserSimHost
from tauray.actors.voice.audio_store import kept
from tauray.actors.voice.errors import SpeechConfigError
from tauray.actors.voice.speaker import LocalSpeech
from tauray.results.tables.layout import AUDIO_DIR, audio_path, is_run_dir
from tauray.results.tables.readers import utterances_df
from tauray.results.tables.records import ConversationResult
from tauray.results.tables.writer import TableWriter
from tauray.scenarios import select_scenarios
from tests.units import make_units

pytestmark = pytest.mark.slow

_SPEECH = LocalSpeech()  # one engine pair for the file (loading Whisper costs seconds)


def _converse(keep: str, **knobs: Any) -> ConversationResult:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    units = make_units(f"audio-{keep}", names, voice={"profiles": ["control"], "keep_audio": keep}, **knobs)
    return asyncio.run(run_conversation(units[0], AgentHost(), UserSimHost(), speech=_SPEECH))


def _write(result: ConversationResult, out: Path) -> None:
    with TableWriter(out, result.conversation.run_id) as writer:
        writer.add(result)


def test_keep_all_stores_both_sides_of_every_utterance(tmp_path: Path) -> None:
    import soundfile

    result = _converse("all")
    assert result.utterances and result.conversation.error_kind is None
    _write(result, tmp_path)
    rows = utterances_df(tmp_path)
    assert len(rows) == len(result.utterances)
    for _, row in rows.iterrows():
        for column, rate in (("audio_ref", 8000), ("spoken_audio_ref", 24000)):  # the line; local/neural
            ref = row[column]
            assert isinstance(ref, str), f"{column} is {ref!r}"
            path = audio_path(tmp_path, ref)
            data = path.read_bytes()
            assert hashlib.sha256(data).hexdigest() == ref  # named by its content
            samples, got = soundfile.read(io.BytesIO(data))
            assert got == rate and samples.size > 0
            assert soundfile.info(io.BytesIO(data)).format == "FLAC"
        assert row["audio_ref"] != row["spoken_audio_ref"]
    # the audio folder is no table: the run folder stays a run folder, and holds nothing else there
    assert is_run_dir(tmp_path) and (tmp_path / AUDIO_DIR).is_dir()
    files = [p for p in (tmp_path / AUDIO_DIR).rglob("*") if p.is_file()]
    assert len(files) == len({*rows["audio_ref"], *rows["spoken_audio_ref"]})
    assert all(p.suffix == ".flac" for p in files)


def test_the_line_side_is_what_the_recogniser_heard(tmp_path: Path) -> None:
    """The stored line file decodes to the very samples of the line's μ-law audio."""
    import soundfile

    from tauray.actors.voice.audio_store import line_flac
    from tauray.actors.voice.channel import SpeechChannel

    channel = SpeechChannel("control", tts=_SPEECH.channel(_converse_voice()).tts,
                            asr=_SPEECH.channel(_converse_voice()).asr)
    wav, *_ = channel.speak("my number is 5, 5, 5, 1, 2, 3", unit_id="u", turn=0, side="user")
    pcm, _ = soundfile.read(io.BytesIO(wav), dtype="int16")
    stored, rate = soundfile.read(io.BytesIO(line_flac(wav)), dtype="int16")
    assert rate == 8000 and (stored == pcm).all()


def _converse_voice() -> Any:
    names = [e.name for e in select_scenarios(None, domain="telecom", split="base")[:1]]
    return make_units("audio-voice", names, voice={"profiles": ["control"]})[0].voice


def test_keep_none_writes_no_file_and_names_none(tmp_path: Path) -> None:
    result = _converse("none")
    assert result.utterances and not result.audio
    _write(result, tmp_path)
    assert all(u.audio_ref is None and u.spoken_audio_ref is None for u in result.utterances)
    assert not (tmp_path / AUDIO_DIR).exists()


def test_keep_failed_waits_for_the_verdict(tmp_path: Path) -> None:
    done = _converse("failed")
    assert done.conversation.success is True  # the reference pair solves it: its audio is dropped
    assert not done.audio and all(u.audio_ref is None for u in done.utterances)
    cut = _converse("failed", max_steps=2)  # cut short: a failed conversation keeps its audio
    assert cut.conversation.success is not True and cut.utterances
    _write(cut, tmp_path)
    refs = {ref for u in cut.utterances for ref in (u.audio_ref, u.spoken_audio_ref)}
    assert None not in refs and all(audio_path(tmp_path, r).is_file() for r in refs)
    assert not _SPEECH.audio.take(done.conversation.conversation_id)  # nothing left held


def test_keep_policy_is_checked() -> None:
    assert kept("all", failed=False) and kept("failed", failed=True)
    assert not kept("failed", failed=False) and not kept("none", failed=True)
    with pytest.raises(SpeechConfigError, match="keep policy 'some'"):
        kept("some", failed=True)

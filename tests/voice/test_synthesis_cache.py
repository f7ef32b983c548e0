"""The synthesis cache: what a voice said once is the same audio when asked again, from memory
or from the cache folder, bit for bit; what a provider said is never written down. A small
engine of this file's own stands in for a voice (no model is loaded: this is the fast loop)."""

from __future__ import annotations

import numpy as np
import pytest

from tauray.actors.voice.engines.cache import CachedTTS, pcm16


class Tone:
    """A deterministic 'voice': a tone whose pitch is the text's length, its length the rate's."""

    name = "test/tone"
    price = ("none", 0.0)
    sample_rate = 16000
    deterministic = True
    packages = ("numpy",)

    def __init__(self) -> None:
        self.calls = 0

    def voices(self, kind: str) -> tuple[str, ...]:
        return ("a", "b")

    def check_voice(self, voice: str) -> None:
        if voice not in ("a", "b"):
            raise ValueError(voice)

    def synth(self, text: str, voice: str, rate_wpm: int = 170, pitch: int = 50, seed: int = 0) -> np.ndarray:
        self.calls += 1
        t = np.arange(int(self.sample_rate * 170 / rate_wpm)) / self.sample_rate
        return (0.5 * np.sin(2 * np.pi * (100 + len(text) + seed) * t) + (0.1 if voice == "b" else 0.0)).astype(np.float32)


class Provider(Tone):
    name = "test/provider"
    deterministic = False


@pytest.fixture()
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("TAURAY_CACHE", str(tmp_path))
    monkeypatch.delenv("TAURAY_SPEECH_CACHE", raising=False)
    return tmp_path / "speech"


def test_a_cached_utterance_is_the_computed_one_bit_for_bit_across_processes(cache_dir):
    engine = Tone()
    first = CachedTTS(engine)
    audio, computed = first.synth_cached("hello", "a", 170, 50, 3)
    assert computed and engine.calls == 1
    assert np.array_equal(audio, pcm16(engine.synth("hello", "a", 170, 50, 3)))  # rounded to 16-bit PCM always
    again, computed = first.synth_cached("hello", "a", 170, 50, 3)
    assert not computed and np.array_equal(again, audio) and engine.calls == 2  # memory: no new synthesis
    files = list(cache_dir.rglob("*.flac"))
    assert len(files) == 1
    other = Tone()  # another process's engine: the same voice, read from the folder
    read, computed = CachedTTS(other).synth_cached("hello", "a", 170, 50, 3)
    assert not computed and other.calls == 0 and np.array_equal(read, audio)


@pytest.mark.parametrize("change", [("text", "hello!"), ("voice", "b"), ("rate", 150), ("pitch", 60), ("seed", 4)])
def test_every_input_of_a_synthesis_is_in_its_key(cache_dir, change):
    engine = Tone()
    cached = CachedTTS(engine)
    args = {"text": "hello", "voice": "a", "rate": 170, "pitch": 50, "seed": 3}
    cached.synth_cached(*args.values())
    args[change[0]] = change[1]
    _, computed = cached.synth_cached(*args.values())
    assert computed and len(list(cache_dir.rglob("*.flac"))) == 2


def test_a_new_engine_version_is_another_key(cache_dir, monkeypatch):
    cached = CachedTTS(Tone())
    cached.synth_cached("hello", "a", 170, 50, 3)
    import tauray.actors.voice.engines.cache as cache

    monkeypatch.setattr(cache, "_version", lambda package: "99.0")
    engine = Tone()
    _, computed = CachedTTS(engine).synth_cached("hello", "a", 170, 50, 3)
    assert computed and engine.calls == 1


def test_a_providers_audio_and_a_switched_off_cache_stay_in_memory(cache_dir, monkeypatch):
    provider = CachedTTS(Provider())
    provider.synth_cached("hello", "a", 170, 50, 3)
    _, computed = provider.synth_cached("hello", "a", 170, 50, 3)
    assert not computed and not cache_dir.exists()  # remembered in this process, never written
    monkeypatch.setenv("TAURAY_SPEECH_CACHE", "off")
    CachedTTS(Tone()).synth_cached("hello", "a", 170, 50, 3)
    assert not cache_dir.exists()


def test_a_damaged_cache_file_is_computed_again(cache_dir):
    CachedTTS(Tone()).synth_cached("hello", "a", 170, 50, 3)
    (path,) = cache_dir.rglob("*.flac")
    path.write_bytes(b"not audio")
    engine = Tone()
    audio, computed = CachedTTS(engine).synth_cached("hello", "a", 170, 50, 3)
    assert computed and engine.calls == 1 and audio.size > 0


def test_the_code_that_feeds_a_voice_is_part_of_its_key(cache_dir, tmp_path, monkeypatch):
    # the same name and packages, other code between the text and the model (a tauray commit that
    # changes how phonemes are fed): what the old code said is not heard again
    import sys
    import types

    def engine_from(source: str) -> object:
        path = tmp_path / "voice_code.py"
        path.write_text(source)
        module = types.ModuleType("voice_code")
        module.__file__ = str(path)
        monkeypatch.setitem(sys.modules, "voice_code", module)
        cls = type("Coded", (Tone,), {"__module__": "voice_code"})
        return cls()

    old = engine_from("# phonemes fed one way\n")
    CachedTTS(old).synth("hello", "a")
    new = engine_from("# phonemes fed another way\n")
    _, computed = CachedTTS(new).synth_cached("hello", "a", 170, 50, 0)
    assert computed and new.calls == 1
    same = engine_from("# phonemes fed another way\n")
    _, computed = CachedTTS(same).synth_cached("hello", "a", 170, 50, 0)
    assert not computed and same.calls == 0

"""The media stream's audio: raw G.711 μ-law at 8 kHz, one byte a sample, in 20 ms frames of 160
bytes. The codec is the telephone line's (:mod:`tauray.actors.voice.line`, libsndfile's G.711):
its μ-law WAV bytes lose their header here, and a payload gets one back to be decoded, so the
live line and the simulated one code audio identically."""

from __future__ import annotations

import io
import struct

import numpy as np

from tauray.actors.voice.line import LINE_RATE, resample, ulaw_decode, ulaw_encode

__all__ = ["FRAME_BYTES", "FRAME_MS", "SILENCE_BYTE", "SILENCE_FRAME", "decode_samples", "encode_samples", "from_ulaw",
           "split_frames", "to_ulaw"]

FRAME_MS = 20
FRAME_BYTES = LINE_RATE * FRAME_MS // 1000  # 160
SILENCE_BYTE = 0xFF
"""μ-law's code for zero (G.711 inverts the bits; 0x7F is the negative zero)."""
SILENCE_FRAME = bytes([SILENCE_BYTE]) * FRAME_BYTES


def _data_chunk(wav: bytes) -> bytes:
    """The samples of a RIFF/WAVE file: the bytes of its ``data`` chunk."""
    at = 12
    while at + 8 <= len(wav):
        tag, size = wav[at:at + 4], struct.unpack_from("<I", wav, at + 4)[0]
        if tag == b"data":
            return wav[at + 8:at + 8 + size]
        at += 8 + size + (size & 1)
    raise ValueError("the line's μ-law WAV has no data chunk")


def _wav(raw: bytes) -> bytes:
    """Raw μ-law samples wrapped as a WAVE file (format 7, with the ``fact`` chunk non-PCM needs)."""
    fmt = struct.pack("<HHIIHHH", 7, 1, LINE_RATE, LINE_RATE, 1, 8, 0)
    body = (b"WAVE" + b"fmt " + struct.pack("<I", len(fmt)) + fmt + b"fact" + struct.pack("<II", 4, len(raw))
            + b"data" + struct.pack("<I", len(raw)) + raw + (b"\x00" if len(raw) & 1 else b""))
    return b"RIFF" + struct.pack("<I", len(body)) + body


def to_ulaw(audio: np.ndarray, rate: int) -> bytes:
    """Float audio at any rate to raw 8 kHz μ-law (resampled, clipped to full scale, coded)."""
    narrow = resample(np.asarray(audio, dtype=np.float32), rate, LINE_RATE)
    if narrow.size == 0:
        return b""
    return _data_chunk(ulaw_encode(narrow))


def from_ulaw(raw: bytes) -> np.ndarray:
    """Raw 8 kHz μ-law to float32 audio at 8 kHz."""
    if not raw:
        return np.zeros(0, np.float32)
    return np.asarray(ulaw_decode(_wav(raw)), dtype=np.float32)


def decode_samples(raw: bytes) -> np.ndarray:
    """Raw 8 kHz μ-law as the line's int16 samples (what a duplex stream holds; exact)."""
    import soundfile  # lazy: optional extra tauray[voice] (libsndfile: the line's μ-law codec)

    if not raw:
        return np.zeros(0, np.int16)
    samples, _ = soundfile.read(io.BytesIO(_wav(raw)), dtype="int16")
    return samples


def encode_samples(samples: np.ndarray) -> bytes:
    """The line's int16 samples (decoded μ-law) back to the raw μ-law they came from."""
    import soundfile  # lazy: optional extra tauray[voice] (libsndfile: the line's μ-law codec)

    if samples.size == 0:
        return b""
    buffer = io.BytesIO()
    soundfile.write(buffer, np.asarray(samples, dtype=np.int16), LINE_RATE, format="WAV", subtype="ULAW")
    return _data_chunk(buffer.getvalue())


def split_frames(raw: bytes) -> list[bytes]:
    """Raw μ-law cut into 20 ms frames, the last padded with silence."""
    frames = [raw[i:i + FRAME_BYTES] for i in range(0, len(raw), FRAME_BYTES)]
    if frames and len(frames[-1]) < FRAME_BYTES:
        frames[-1] = frames[-1] + bytes([SILENCE_BYTE]) * (FRAME_BYTES - len(frames[-1]))
    return frames

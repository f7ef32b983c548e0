"""The speech pool on Ray: a coordinator-style caller awaits utterances; audio comes back as an
ObjectRef and lands in the run folder under the keep policy."""

from __future__ import annotations

import asyncio

from tauray.actors.speech.audio_store import AudioStore, audio_hash
from tauray.actors.speech.pool import SpeechClient, start_pool


def test_pool_carries_awaited_and_keeps_failed_audio(ray_local, tmp_path):
    client = start_pool(1, asr="local/whisper-tiny.en", run_dir=tmp_path, keep="failed")
    try:
        async def conversation() -> tuple:
            a = await client.carry("control", "Hello, my line id is L, 1, 0, 0, 2.", unit_id="u-fail", turn=0,
                                   side="user")
            b = await client.carry("control", "Thanks.", unit_id="u-ok", turn=0, side="user")
            return a, b, await client.finish("u-fail", failed=True), await client.finish("u-ok", failed=False)

        (rec, ref), (ok_rec, _), written, skipped = asyncio.run(conversation())
        wav = ray_local.get(ref)
        assert isinstance(ref, ray_local.ObjectRef) and rec.audio_ref == audio_hash(wav)
        assert written == 1 and skipped == 0
        store = AudioStore(tmp_path, "failed")
        assert store.path_of(rec.audio_ref).read_bytes() == wav
        assert not store.path_of(ok_rec.audio_ref).exists()
        assert rec.line_ids_spoken == 1 and rec.audio_seconds > 1
        import pickle

        assert isinstance(pickle.loads(pickle.dumps(client)), SpeechClient)
    finally:
        for worker in client.workers:
            ray_local.kill(worker)

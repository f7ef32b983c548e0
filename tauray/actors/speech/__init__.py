"""Voice mode's speech channel: engines, profiles, effects, the telephone line, the per-utterance
measurements, the audio store and the Ray pool that runs it all off the coordinator's loop.

Needs the optional extra ``tauray[voice]``; a text-only install imports none of it.

* :mod:`.profiles`: :class:`SpeechProfile`, ``PROFILES``, :func:`get_profile`, :func:`voice_config_for`
* :mod:`.channel`: :class:`SpeechChannel` (``carry(text, ...) -> (UtteranceRecord, wav bytes)``)
* :mod:`.engines`: espeak-ng, packaged faster-whisper models, hosted litellm engines, :class:`SpeechModelSpec`
* :mod:`.effects`, :mod:`.line`: the source effects and the telephone line
* :mod:`.metrics`: WER and identifiers spoken vs heard
* :mod:`.audio_store`: content-addressed audio files with a keep policy
* :mod:`.pool`: :class:`SpeechWorker` (Ray actor) and :class:`SpeechClient`
"""

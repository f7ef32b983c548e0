"""Voice mode, in one room: a conversation as a phone call, from the sweep file's ``[voice]`` to
the report's voice section.

One concept per module:

* :mod:`.config`: the sweep's ``[voice]`` (:class:`VoiceConfig`) and what a voice cell's units
  carry of it (:class:`VoiceSettings`); a profile name is resolved here, once, into its
  :class:`~.profiles.SpeechProfile`, the one type the pool and the channel take.
* :mod:`.profiles`: speech profiles (effects, personas, behaviour) and the voice each task
  draws under one (:class:`~.profiles.DrawnVoice`).
* :mod:`.rules`: what each side is told on a call, and how identifiers are spoken.
* :mod:`.spec`: speech models bound to the ``tts`` and ``asr`` roles, the packaged ones named.
* :mod:`.engines`: the packaged neural voices (piper, hibari, kokoro), espeak-ng, the synthesis
  cache, packaged Whisper models, hosted engines through litellm, a recogniser served on Ray Serve.
* :mod:`.effects`, :mod:`.line`, :mod:`.seeding`: source effects, the telephone line, stable seeds.
* :mod:`.channel`: one utterance from the text meant to the text heard, and its record.
* :mod:`.metrics`: word error rate and identifiers spoken against heard.
* :mod:`.audio_store`: content-addressed audio files and the keep policy.
* :mod:`.quota`: hosted speech calls metered like any model's.
* :mod:`.pool`: the run's speech workers on Ray and how a host finds them.
* :mod:`.speaker`: one side of a call as its host speaks it (the pool, or this process's thread).
* :mod:`.heard`: what a listener gets (text, or an audio-in agent's audio part).
* :mod:`.identifiers`, :mod:`.policies`, :mod:`.spoken`: the reference policies on a phone line, and
  what a caller says aloud.
* :mod:`.corpus`: telecom caller utterances to measure the channel on.
* :mod:`.analysis`, :mod:`.report`: voice against text from the tables, and the report's section.

The speech packages are the optional extra ``tauray[voice]``; nothing is imported here, so a
text-only run loads only :mod:`.config` (the unit's settings) and what it names.
"""

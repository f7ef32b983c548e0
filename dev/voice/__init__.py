"""How the voice channel's defaults were chosen: measurements on tuning draws apart from the
measured corpus (docs/voice.md). From a checkout only; nothing here is installed."""

"""A live phone bot as a sweep's agent: its ``[models]`` entry parsed once (:class:`PhoneAgentSpec`),
what of it makes a cell, the cell's voice settings, and the checks a sweep with one gets at load.
A realtime model (:mod:`.realtime_agent`) is a live agent too: the same checks, voice settings and
probe here cover it.

A sweep names a phone bot like a model (docs/live-agents.md, "A phone bot in a sweep")::

    [models.bot]
    model = "phone/endpoint-bot"
    phone = {url = "ws://127.0.0.1:8765/phone-bot", answer_timeout_s = 30, reply_gap_ms = 800}

``phone`` holds ``url``, ``parameters`` (extra custom parameters sent in ``start``) and, written
flat beside them, any field of :class:`~.settings.PhoneSettings` (the call's waits and the
harness's lateness limit) and of :class:`~.bot_stream.PhoneAgentSettings` (how the bot's line is
read). A bad or unknown one is one line naming the field.

* **Identity.** The cell's agent is the model name, the call's settings (defaults filled in) and
  the parameters; never the URL, as an ``api_base`` is left out of a model's: the local endpoint
  listens on a new port every run, and a bot that moves keeps its finished units.
* **Only an agent, only duplex.** A bot lives on the wall clock and answers a phone: it is never
  a user simulator or a judge, and a half-duplex cell of it is refused.
* **Heard through the line.** A bot's words are known only as audio, so its cells' caller hears
  it through the line (``hears = "channel"``) whatever the sweep's ``hear_agent`` says; a sweep
  whose ``duplex_rules`` ask for ``hears = "text"`` is refused. A bot answers the call: the caller
  waits for its greeting (``opening = "agent"``) unless ``duplex_rules`` say who opens.
"""

from __future__ import annotations

import asyncio
import importlib.util
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.llm.spec import ModelSpec, PhoneSpec
from tauray.actors.voice.duplex.config import HALF
from tauray.actors.voice.duplex.errors import DuplexConfigError, load_settings
from tauray.actors.voice.live.bot_stream import PhoneAgentSettings
from tauray.actors.voice.live.errors import CallFault
from tauray.actors.voice.live.realtime_agent import probe_realtime, realtime_agent
from tauray.actors.voice.live.settings import PhoneSettings

__all__ = ["PhoneAgentSpec", "PhoneCheck", "check_phone_agents", "phone_agent", "phone_names", "phone_voice",
           "probe_phones"]

LIVE_PACKAGES = ("websockets", "mcp")  # the optional extra tauray[live]


class PhoneAgentSpec(BaseModel):
    """A phone agent's entry, parsed: where to call it and how."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    url: str = Field(description="The bot's websocket (ws:// or wss://).")
    parameters: dict[str, str] = Field(default_factory=dict, description="Extra custom parameters sent in start.")
    call: PhoneSettings = Field(default_factory=PhoneSettings, description="The call's waits and lateness limit.")
    line: PhoneAgentSettings = Field(default_factory=PhoneAgentSettings, description="How the bot's line is read "
                                     "into speech and replies.")

    def identity(self) -> dict[str, Any]:
        """What of the bot makes a cell: its settings and parameters, not its address."""
        return {"call": self.call.model_dump(mode="json"), "line": self.line.model_dump(mode="json"),
                "parameters": dict(sorted(self.parameters.items()))}


def phone_agent(spec: ModelSpec | PhoneSpec) -> PhoneAgentSpec:
    """The phone agent a spec names; :class:`DuplexConfigError` (one line, ``phone.FIELD: ...``) on
    a bad or unknown setting."""
    phone = spec.phone if isinstance(spec, ModelSpec) else spec
    if phone is None:
        raise DuplexConfigError("phone: the model is not a phone bot (its spec has no phone)")
    written = phone.settings
    call_fields, line_fields = set(PhoneSettings.model_fields), set(PhoneAgentSettings.model_fields)
    unknown = sorted(set(written) - call_fields - line_fields)
    if unknown:
        known = ", ".join(["url", "parameters", *PhoneSettings.model_fields, *PhoneAgentSettings.model_fields])
        raise DuplexConfigError(f"phone: unknown parameter {unknown[0]!r}; known: {known}")
    call = load_settings(PhoneSettings, {k: v for k, v in written.items() if k in call_fields}, "phone")
    line = load_settings(PhoneAgentSettings, {k: v for k, v in written.items() if k in line_fields}, "phone")
    if line.vad == "webrtc" and importlib.util.find_spec("webrtcvad") is None:
        raise DuplexConfigError("phone.vad: 'webrtc' needs the webrtcvad package: pip install webrtcvad")
    return PhoneAgentSpec(url=phone.url, parameters=phone.parameters, call=call, line=line)


def phone_names(cfg: Any) -> dict[str, ModelSpec]:
    """The ``[models]`` entries of ``cfg`` (a SweepConfig) that are live agents (phone bots and
    realtime models), by name."""
    return {name: entry.model_spec for name, entry in cfg.models.items()
            if entry.model_spec is not None and entry.model_spec.is_live}


def _what(spec: ModelSpec) -> str:
    return "a realtime model" if spec.realtime is not None else "a phone bot"


def check_phone_agents(cfg: Any) -> None:
    """A sweep's live agents (phone bots, realtime models) can run as configured (``cfg``: the
    SweepConfig), checked at load; a ValueError of one line naming the field otherwise."""
    phones = phone_names(cfg)
    for name, spec in phones.items():
        no_key = None
        try:
            if spec.realtime is not None:
                no_key = realtime_agent(spec).missing_key()
            else:
                phone_agent(spec)
        except DuplexConfigError as exc:
            raise ValueError(f"models.{name}.{exc}") from None
        if no_key is not None:
            raise ValueError(f"models.{name}: {no_key}")
    for field, names in (("users", cfg.users), ("judges", [j.model for j in cfg.judge_list])):
        for i, name in enumerate(names):
            if name in phones:
                raise ValueError(f"{field}[{i}]: {name!r} is {_what(phones[name])} ({phones[name].model}): it can "
                                 "only be an agent")
    called = [(i, name) for i, name in enumerate(cfg.agents) if name in phones]
    if not called:
        return
    i, name = called[0]
    voice, what = cfg.voice, _what(phones[name])
    if HALF in voice.turn_taking:
        raise ValueError(f"agents[{i}]: {name!r} is {what}: it runs in duplex only, and voice.turn_taking "
                         "has 'half' (write turn_taking = [\"duplex\"] and a speech profile)")
    if voice.duplex_rules.get("hears") == "text":
        words = "reach its caller as audio" if phones[name].realtime is not None else "are known only as audio"
        raise ValueError(f"voice.duplex_rules.hears: 'text', but agents[{i}] {name!r} is {what}, whose words "
                         f"{words}: its caller hears it through the line (drop hears, or write 'channel')")
    missing = [p for p in LIVE_PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        raise ValueError(f"agents[{i}]: {name!r} is {what}, which needs the optional extra tauray[live] "
                         f"({', '.join(missing)} missing): pip install 'tauray[live]'")


def phone_voice(voice: Any, written_rules: Mapping[str, Any]) -> Any:
    """A phone agent's duplex cell settings (``voice``: its VoiceSettings): the caller hears the
    bot through the line, and waits for the bot's greeting unless ``written_rules`` (the sweep's
    duplex_rules) say who opens."""
    update: dict[str, Any] = {"hears": "channel"}  # a realtime model too: its transcript comes after its audio
    if "opening" not in written_rules:
        update["opening"] = "agent"
    duplex = voice.duplex.model_copy(update={"rules": voice.duplex.rules.model_copy(update=update)})
    return voice.model_copy(update={"hear_agent": True, "duplex": duplex})


class PhoneCheck(BaseModel):
    """A phone bot probed: its websocket opened and closed again, no call placed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(description="The bot's model name ('phone/<name>').")
    ok: bool = Field(description="The socket opened (a websocket upgrade) and closed.")
    kind: str | None = Field(None, description="Why not: the fault a call would have met ('unreachable', "
                             "'wrong_protocol'), or 'config' for settings that do not parse.")
    line: str = Field(description="What was found, one line.")
    seconds: float | None = Field(None, description="How long opening and closing took.")


def probe_phones(specs: Sequence[ModelSpec]) -> list[PhoneCheck]:
    """Probe each phone bot of ``specs`` (concurrently, on a loop of its own when called from one)."""
    found: list[list[PhoneCheck]] = []

    def target() -> None:
        async def every() -> list[PhoneCheck]:
            return list(await asyncio.gather(*(_probe(spec) for spec in specs)))
        found.append(asyncio.run(every()))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        target()
    else:
        thread = threading.Thread(target=target, name="tauray-phone-probe")
        thread.start()
        thread.join()
    return found[0] if found else []


async def _probe(spec: ModelSpec) -> PhoneCheck:
    if spec.realtime is not None:
        return await _probe_realtime(spec)
    try:
        agent = phone_agent(spec)
    except DuplexConfigError as exc:
        return PhoneCheck(model=spec.model, ok=False, kind="config", line=f"{spec.model}: {exc}")
    missing = [p for p in LIVE_PACKAGES if importlib.util.find_spec(p) is None]
    if missing:
        return PhoneCheck(model=spec.model, ok=False, kind="config", line=f"{spec.model}: needs the optional extra "
                          f"tauray[live] ({', '.join(missing)} missing): pip install 'tauray[live]'")
    from tauray.actors.voice.live.phone import probe, shown_url  # lazy: websockets, of the optional extra tauray[live]

    try:
        seconds = await probe(agent.url, agent.call)
    except CallFault as fault:
        return PhoneCheck(model=spec.model, ok=False, kind=fault.kind, line=f"{spec.model}: {fault.kind}: {fault}")
    return PhoneCheck(model=spec.model, ok=True, seconds=round(seconds, 3),
                      line=f"{spec.model}: reachable: a websocket at {shown_url(agent.url)} opened and closed in "
                      f"{seconds:.2f} s (no call placed)")


async def _probe_realtime(spec: ModelSpec) -> PhoneCheck:
    try:
        agent = realtime_agent(spec)
    except DuplexConfigError as exc:
        return PhoneCheck(model=spec.model, ok=False, kind="config", line=f"{spec.model}: {exc}")
    missing = [p for p in LIVE_PACKAGES if importlib.util.find_spec(p) is None] + \
        [k for k in [agent.missing_key()] if k is not None]
    if missing:
        return PhoneCheck(model=spec.model, ok=False, kind="config", line=f"{spec.model}: cannot open a session: "
                          f"{'; '.join(missing)}")
    try:
        seconds = await probe_realtime(agent)
    except CallFault as fault:
        return PhoneCheck(model=spec.model, ok=False, kind=fault.kind, line=f"{spec.model}: {fault.kind}: {fault}")
    shown = agent.url()[0].split("?", 1)[0]
    prices = agent.prices_per_token()
    priced = (f"audio ${prices['input_audio_tokens'] * 1e6:g}/${prices['output_audio_tokens'] * 1e6:g} per million "
              f"tokens in/out ({'the spec' if agent.prices else 'litellm'})") if prices else "not priced"
    return PhoneCheck(model=spec.model, ok=True, seconds=round(seconds, 3),
                      line=f"{spec.model}: reachable: a realtime session at {shown} opened (session.created) and "
                      f"closed in {seconds:.2f} s (no audio sent); {priced}")

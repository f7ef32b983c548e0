"""What a configuration expands to: cells (agent model × user model, with the judges and
options) and work units (one conversation each, with a deterministic id and seed).

One rule makes ids (:func:`unit_id` over :func:`cell_id`): the id hashes what the
models are asked (model identity without operational fields), the options, the
scenario and the trial, so a rerun of the same unit has the same id (resume skips
it) and the same seed (the models are asked the same thing), whether it came from
``tauray run`` or a sweep file. A voice unit's seed is its text twin's (the same cell
without the speech profile), so voice and text run each task on one seed. Expansion is lazy, so a sweep of a million units
costs the driver no memory up front.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tauray.actors.judge.config import JudgeConfig
from tauray.actors.llm.spec import ModelSpec
from tauray.actors.quota import shared_limits, with_quota
from tauray.actors.unit import WorkUnit
from tauray.actors.voice.config import TEXT_PROFILE, VoiceSettings
from tauray.actors.voice.duplex.config import HALF
from tauray.actors.voice.live.agent import phone_agent, phone_voice
from tauray.actors.voice.live.realtime_agent import realtime_agent
from tauray.actors.voice.rules import prompt_labels
from tauray.pipeline.config import SweepConfig
from tauray.pipeline.files import ConfigFileError
from tauray.scenarios import select_scenarios

# ModelSpec fields that say how to reach or pace a model, not what it is asked: changing
# them (a new endpoint port, a higher rate limit) must not change unit ids, or a resumed
# sweep would redo finished work.
OPERATIONAL_FIELDS = frozenset({"api_base", "api_key_env", "concurrency", "rpm", "tpm", "timeout", "num_retries",
                                "rate_limit_wait", "token_accounting"})


def model_identity(spec: ModelSpec | Mapping[str, Any]) -> dict[str, Any]:
    """The part of a model spec that decides what the model is asked (for ids)."""
    model = spec if isinstance(spec, ModelSpec) else ModelSpec.model_validate(dict(spec))
    if model.phone is not None:  # a phone bot: its name and call settings, never its address
        return {"model": model.model, "phone": phone_agent(model).identity()}
    if model.realtime is not None:  # a realtime model: its name and settings, never its address or key
        return {"model": model.model, "realtime": realtime_agent(model).identity()}
    full = model.model_dump()
    full.pop("phone", None)  # ids of models that are not phone bots stay what they were
    full.pop("realtime", None)
    if model.serve is None:  # ids of models that are not served stay what they were
        full.pop("serve", None)
    else:  # replicas, placement and timeouts do not change the answers either
        full["serve"] = model.serve.identity()
    if not model.strict:  # likewise for models that do not ask for strict tool schemas
        full.pop("strict", None)
    if model.cut_tool_calls == "tell":  # and for models that keep the default for cut tool calls
        full.pop("cut_tool_calls", None)
    return {k: v for k, v in full.items() if k not in OPERATIONAL_FIELDS}


def cell_id(cell: dict[str, Any]) -> str:
    blob = json.dumps(cell, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:12]


def unit_id(cell: str, scenario: str, trial: int) -> str:
    return hashlib.sha256(f"{cell}|{scenario}|{trial}".encode()).hexdigest()[:20]


def unit_seed(uid: str, base_seed: int) -> int:
    return (int(uid[:8], 16) + base_seed) % (2**31 - 1)


class Cell(BaseModel):
    """One agent model × user model, with the sweep's judge configs and options; its specs
    and configs validated here, once, and handed to every unit of the cell as they are."""

    model_config = ConfigDict(frozen=True)
    cell_id: str = Field(description="Deterministic id of the cell's configuration.")
    agent_name: str = Field(description="The agent's name in the configuration.")
    user_name: str = Field(description="The user simulator's name in the configuration.")
    agent: ModelSpec = Field(description="Agent model spec, with its model's shared quota.")
    user: ModelSpec = Field(description="User-simulator model spec, with its model's shared quota.")
    judge_configs: list[JudgeConfig] = Field(description="Judge configs the cell's conversations are judged with.")
    judge_labels: list[str] = Field(description="The judges as model:prompt, as the configuration names them.")
    judge_gates: bool = Field(False, description="The first overall judge's verdict gates success.")
    profile: str = Field(TEXT_PROFILE, description="Speech profile of the cell ('text': no speech channel).")
    voice: VoiceSettings | None = Field(None, description="How the cell's conversations cross the speech channel; "
                                        "None for a text cell.")


class SweepPlan:
    """The expanded grid: cells, scenarios, and units generated on demand."""

    def __init__(self, cfg: SweepConfig, scenarios: list[str]):
        self.cfg = cfg
        self.scenarios = scenarios
        # One quota per provider model: every role of a model is metered against the
        # tightest rpm/tpm any of its entries sets (tauray.actors.quota).
        self.quotas = shared_limits([entry.spec for entry in cfg.models.values()])
        # the judge's own config record, so the coordinator judges each conversation with
        # them; the ids hash the configuration as written (a prompt id without its version
        # stays without it), with the validated model spec
        written = [j.judge_spec(with_quota(cfg.spec(j.model), self.quotas)) for j in cfg.judge_list]
        judges = [JudgeConfig.model_validate(j) for j in written]
        judge_ids = [_judge_identity({**j, "model": c.model}) for j, c in zip(written, judges)]
        self.judge_labels = [f"{j.model}:{j.prompt}" for j in cfg.judge_list]
        self.cells: list[Cell] = []
        specs = {name: ModelSpec.model_validate(with_quota(cfg.spec(name), self.quotas))
                 for name in dict.fromkeys([*cfg.agents, *cfg.users])}
        duplex = cfg.voice.duplex  # parsed and checked at load: one per pipeline of the axis
        modes = [(turns, d) for turns in cfg.voice.turn_taking for d in ([None] if turns == HALF else duplex)]
        for a, u, profile, (turns, settings) in itertools.product(cfg.agents, cfg.users, cfg.voice.profiles, modes):
            if profile == TEXT_PROFILE and turns != HALF:  # a text cell has no turn-taking of its own
                continue
            agent, user = specs[a], specs[u]
            if agent.is_live and turns != HALF and settings is not duplex[0]:  # its own pipeline: one cell
                continue
            identity = {"agent": _identity(agent), "user": _identity(user), "judges": judge_ids,
                        "max_steps": cfg.max_steps, "max_errors": cfg.max_errors, "seed": cfg.seed}
            if cfg.judge_gates:  # ids of cells that do not gate on the judge stay what they were
                identity["judge_gates"] = True
            text_cell = cell_id(identity)  # the cell without its profile: the text twin of every voice cell
            voice = _voice(cfg, a, profile, text_cell)
            if voice is not None and turns != HALF:
                voice = voice.model_copy(update={"turn_taking": turns, "duplex": settings})
                if agent.is_live:  # heard through the line; it answers the call
                    voice = phone_voice(voice, cfg.voice.duplex_rules)
            if voice is not None:  # text cells carry no speech key: their ids stay what they were
                identity["speech"] = _voice_identity(cfg, voice, live=agent.is_live)
            self.cells.append(Cell(cell_id=cell_id(identity), agent_name=a, user_name=u, agent=agent, user=user,
                                   judge_configs=judges, judge_labels=self.judge_labels,
                                   judge_gates=cfg.judge_gates, profile=profile, voice=voice))

    @property
    def units_per_cell(self) -> int:
        return len(self.scenarios) * self.cfg.trials

    @property
    def total(self) -> int:
        return self.units_per_cell * len(self.cells)

    def unit_ids(self, cell: Cell) -> Iterator[tuple[str, str, int]]:
        for trial in range(self.cfg.trials):
            for name in self.scenarios:
                yield unit_id(cell.cell_id, name, trial), name, trial

    def units(self, cell: Cell, skip: Any = frozenset()) -> Iterator[WorkUnit]:
        """The cell's units, trial-major (every scenario once before any twice), minus ``skip``."""
        cfg = self.cfg
        for uid, name, trial in self.unit_ids(cell):
            if uid in skip:
                continue
            yield WorkUnit(unit_id=uid, run_id=cfg.name, sweep_id=cfg.name, cell_id=cell.cell_id, scenario=name,
                           trial=trial, seed=unit_seed(_seed_unit(cell, uid, name, trial), cfg.seed),
                           agent=cell.agent, user=cell.user, judge_configs=cell.judge_configs,
                           judge_gates=cell.judge_gates, max_steps=cfg.max_steps, max_errors=cfg.max_errors,
                           audit=cfg.audit, voice=cell.voice)


def _seed_unit(cell: Cell, uid: str, scenario: str, trial: int) -> str:
    """The unit id a unit's seed derives from: its own, or for a voice unit its text twin's
    (the same scenario and trial in the cell without the profile), so that voice and text run
    each task on the same seed and differ only by the speech channel."""
    if cell.voice is None or cell.voice.text_cell_id is None:
        return uid
    return unit_id(cell.voice.text_cell_id, scenario, trial)


def _voice(cfg: SweepConfig, agent: str, profile: str, text_cell: str) -> VoiceSettings | None:
    """The voice settings of the (agent, profile) cell; None for a text cell. ``text_cell``: the
    id of the same cell without the profile (its seeds are the voice cell's)."""
    if profile == TEXT_PROFILE:
        return None
    v = cfg.voice
    return VoiceSettings(profile=v.profile(profile), tts=cfg.speech_spec("tts"),
                         asr=cfg.speech_spec("asr"), audio_in=agent in v.audio_agents,
                         hear_agent=v.hear_agent, keep_audio=v.keep_audio, prompts=prompt_labels(),
                         text_cell_id=text_cell)


def _voice_identity(cfg: SweepConfig, voice: VoiceSettings, live: bool = False) -> dict[str, Any]:
    """What of a voice cell decides what the sides hear: the profile, the engines (a model
    from [models] by its identity: no address, key, quota or price; a local recogniser by name
    with its decoding), the agent kind, the
    hearing option, the voice prompts (id, version and text hash) and a custom level's
    parameters. Which audio is kept changes nothing heard. A phone bot's cell (``live``) has no
    agent pipeline of tauray's: the bot is its own, named by the agent's identity."""
    def engine(role: str) -> Any:
        name, spec = getattr(cfg.voice, role), getattr(voice, role)
        if name in cfg.models:
            return spec.identity()
        # a local recogniser by its name decodes as the defaults say: the decoding is part of what
        # it is, so a new default decoding makes new cells, not a resumed run heard another way
        return {"model": name, "decoding": spec.decoding()} if spec.decoding() else name

    identity = {"profile": voice.profile.name, "tts": engine("tts"), "asr": engine("asr"),
                "audio_in": voice.audio_in, "hear_agent": voice.hear_agent, "prompts": voice.prompts}
    if voice.custom:  # a custom level: its parameters (built-in profiles: their names alone)
        identity["level"] = voice.profile.model_dump(mode="json")
    elif voice.profile.version > 1:  # a built-in profile redefined since its first cells
        identity["version"] = voice.profile.version
    if voice.turn_taking != HALF:  # half-duplex cells keep their ids
        identity["turn_taking"] = voice.turn_taking
        identity["duplex"] = voice.duplex.identity()
        if live:
            del identity["duplex"]["pipeline"]
    return identity


def _judge_identity(judge: Mapping[str, Any]) -> dict[str, Any]:
    """What of a judge config decides its verdicts (the options at their defaults are left
    out, so ids of cells judged before they existed stay what they were)."""
    ident = {"model": _identity(judge["model"]), "prompt": judge["prompt"], "samples": judge["samples"]}
    if judge.get("nl_pack"):
        ident["nl_pack"] = judge["nl_pack"]
    if judge.get("structured", "auto") != "auto":
        ident["structured"] = judge["structured"]
    return ident


def _identity(spec: ModelSpec | Mapping[str, Any]) -> dict[str, Any]:
    model = spec if isinstance(spec, ModelSpec) else ModelSpec.model_validate(dict(spec))
    if model.is_reference:
        return {"model": model.model}
    return model_identity(model)


def select(cfg: SweepConfig) -> list[str]:
    """Scenario names of the sweep: the union of its selections, in policy variants, in order."""

    names: dict[str, None] = {}
    variants = cfg.policy_variants or [None]
    for i, sel in enumerate(cfg.scenarios):
        for variant in variants:
            try:
                entries = select_scenarios(sel.patterns or None, domain=sel.domain, split=sel.split, variant=variant)
            except (KeyError, ValueError) as exc:
                raise ConfigFileError(cfg.source, f"{cfg.where(f'scenarios[{i}]')}: {exc}") from None
            for e in entries[: sel.limit] if sel.limit else entries:
                names[e.name] = None
    if not names:
        raise ConfigFileError(cfg.source, f"{cfg.where('scenarios')}: the selections match no scenario")
    return list(names)


"""Every setting of a run and its one default: a sweep file's grid of models, judges,
scenarios and trials (:class:`SweepConfig`), and how a driver runs it
(:class:`DriveOptions`). ``tauray run`` builds a one-cell sweep (:func:`run_config`),
so a run and the equivalent sweep file are the same configuration, and the command
line flags are generated from these models (:mod:`tauray.pipeline.cli.flags`).

A sweep names its models once (``[models.NAME]``: a ModelSpec plus an optional
price), then binds them to roles: every agent model × every user model is a
*cell*; the judge configs (judge model × prompt) are attached to every cell as
data, because a judge grades a recorded conversation and must not multiply the
conversations. Every error names the file, the field and what was expected.
"""

from __future__ import annotations

import itertools
import re
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from tauray.actors.audit.judge_checks import refuse_audit_prompt
from tauray.actors.judge import JudgeConfig as Judge
from tauray.actors.llm import ModelSpec
from tauray.actors.voice.config import VoiceConfig, check_voice
from tauray.actors.voice.spec import SpeechModelSpec
from tauray.scenarios.conventions import ORACLE, SCRIPTED

if TYPE_CHECKING:  # the llm package costs ~1 s to import: not at CLI start-up
    from tauray.actors.llm.spec import ModelSpec

_STRICT = ConfigDict(frozen=True, extra="forbid")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")

# The source of a ``tauray run`` configuration, as errors name it.
COMMAND_LINE = "command line"


def _is_nl(prompt: str) -> bool:
    return prompt.split("@", 1)[0].startswith("nl-")


class Price(BaseModel):
    """USD per million tokens, used when litellm has no price for the model (self-hosted, test endpoint)."""

    model_config = _STRICT
    input_per_mtok: float = Field(ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million completion tokens.")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class ModelEntry(BaseModel):
    """One named model: a ModelSpec (per-model limits included) and an optional price; or, with
    ``role = "tts"`` or ``"asr"``, a speech model (:class:`SpeechModelSpec`) that ``[voice]``
    binds to that role."""

    model_config = ConfigDict(frozen=True, extra="allow")
    price: Price | None = Field(default=None, description="Price used when litellm knows none.")
    # the spec validated once, at load (the plan and the readiness check take it from here)
    _model_spec: ModelSpec | None = PrivateAttr(default=None)
    _speech: SpeechModelSpec | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _valid_spec(self) -> ModelEntry:
        try:
            if self.spec.get("role") in ("tts", "asr"):  # a speech model, priced per character or second
                if self.price is not None:
                    raise ValueError("'price': a speech model's price is usd_per_million_chars (tts) or "
                                     "usd_per_minute (asr)")
                self._speech = SpeechModelSpec.model_validate(self.spec)
            else:
                self._model_spec = ModelSpec.model_validate(self.spec)
        except ValidationError as exc:
            raise ValueError("; ".join(
                f"'{'.'.join(str(p) for p in e['loc']) or 'model'}': {e['msg'].removeprefix('Value error, ')}"
                for e in exc.errors(include_url=False, include_input=False))) from None
        return self

    @property
    def spec(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    @property
    def model(self) -> str:
        return str(self.spec.get("model"))

    @property
    def model_spec(self) -> ModelSpec:
        """The entry's :class:`~tauray.actors.llm.spec.ModelSpec`, validated at load."""
        return self._model_spec

    @property
    def speech(self) -> SpeechModelSpec | None:
        """The entry's speech model spec (``role`` tts or asr), or None for a chat model."""
        return self._speech

    @property
    def concurrency(self) -> int:
        return self._model_spec.concurrency if self._model_spec is not None else 1 << 30  # speech: metered by rpm


class JudgeEntry(BaseModel):
    """A judge: a model (a name from ``[models]``) and a prompt id (``id@version``)."""

    model_config = _STRICT
    model: str = Field(description="Name of a model in [models].")
    prompt: str = Field(min_length=1, description="Judge prompt template, 'id@version'.")
    samples: int = Field(default=1, ge=1, description="Judge samples per item.")
    nl_pack: str | None = Field(default=None, description="NL-assertion pack 'id@version' (nl prompts only).")
    structured: Literal["auto", "always", "never"] = Field(
        default="auto", description="Send the reply schema as response_format: where litellm says the model "
        "supports it (auto), always, or never.")

    @field_validator("prompt")
    @classmethod
    def _conversation_prompt(cls, v: str) -> str:
        return refuse_audit_prompt(v)

    def judge_spec(self, spec: dict[str, Any]) -> dict[str, Any]:
        """This judge in the judge's own config shape (``tauray.actors.judge.JudgeConfig``)."""
        return {"model": spec, "prompt": self.prompt, "samples": self.samples, "nl_pack": self.nl_pack,
                "structured": self.structured}


class JudgeGrid(BaseModel):
    """Judge models × prompts, as a shorthand for listing every pair."""

    model_config = _STRICT
    models: list[str] = Field(min_length=1, description="Names of models in [models].")
    prompts: list[str] = Field(min_length=1, description="Judge prompt templates, 'id@version'.")
    samples: int = Field(default=1, ge=1, description="Judge samples per item.")
    nl_pack: str | None = Field(default=None, description="NL-assertion pack 'id@version' (for the nl prompts).")
    structured: Literal["auto", "always", "never"] = Field(default="auto", description="As for one judge.")

    @field_validator("prompts")
    @classmethod
    def _conversation_prompts(cls, v: list[str]) -> list[str]:
        return [refuse_audit_prompt(p) for p in v]


class Selection(BaseModel):
    """One scenario selection; a sweep takes the union of its selections."""

    model_config = _STRICT
    patterns: list[str] = Field(default_factory=list, description="Scenario name globs; empty = all.")
    domain: str | None = Field(default=None, description="Domain filter, e.g. telecom.")
    split: str | None = Field(default=None, description="Split filter, e.g. base.")
    limit: int | None = Field(default=None, ge=1, description="Keep the first N scenarios of this selection.")


LIVE_CALLS_PER_NODE = 2
"""Live calls a node runs at once by default (docs/live-agents.md, "How many live calls a node holds")."""


class ClusterConfig(BaseModel):
    """How many actors to start and where."""

    model_config = _STRICT
    coordinators: int | None = Field(default=None, ge=1, description="Coordinator actors in all; default: per "
                                     "node, one per 8 of its CPUs (at least one), nodes that join included.")
    agent_hosts: int | None = Field(default=None, ge=1, description="Agent host actors in all; default: per node, "
                                    "one per 4 of its CPUs (at least one), nodes that join included.")
    user_hosts: int | None = Field(default=None, ge=1, description="User host actors in all; default as agent_hosts.")
    actor_cpus: float = Field(default=0.25, ge=0.0, description="CPUs each host and coordinator reserves, so Ray "
                              "places them where there is room and an autoscaler sees the demand.")
    spread: bool = Field(default=True, description="SPREAD scheduling: put actors on different nodes.")
    live_calls_per_node: int = Field(default=LIVE_CALLS_PER_NODE, ge=1, description="Live calls (a phone bot or a "
                                     "realtime model as the agent) in flight at once on one node: each paces its "
                                     "audio on the node's wall clock. Default: what a 2-core node held within the "
                                     "lateness limit (docs/live-agents.md).")
    ship_project: bool = Field(default=True, description="On a cluster, ship this project with py_modules.")
    runtime_env: dict[str, Any] = Field(default_factory=dict, description="Extra Ray runtime_env (e.g. pip).")


class SweepConfig(BaseModel):
    """The whole grid, as read from a sweep file."""

    model_config = _STRICT
    name: str = Field(description="Sweep id: names the run directory and every row's run_id.")
    models: dict[str, ModelEntry] = Field(default_factory=dict,
                                          description="Named models with their limits and prices.")
    agents: list[str] = Field(min_length=1, description="Model names (or 'oracle') for the agent role.")
    users: list[str] = Field(min_length=1, description="Model names (or 'scripted') for the user role.")
    judges: list[JudgeEntry] | JudgeGrid = Field(default_factory=list, description="Judge configs.")
    scenarios: list[Selection] = Field(min_length=1, description="Scenario selections (union).")
    policy_variants: list[str] = Field(default_factory=list, description="Policy variants; empty = all.")
    trials: int = Field(default=1, ge=1, description="Trials per scenario and cell.")
    seed: int = Field(default=0, description="Base seed; unit seeds derive from it and the unit id.")
    max_steps: int = Field(default=100, ge=1, description="Policy replies allowed per conversation.")
    max_errors: int = Field(default=10, ge=1, description="Tool errors allowed per conversation.")
    audit: bool = Field(default=True, description="Audit each conversation as it finishes (who failed: agent, "
                        "user simulator, ...; docs/audit.md); its rows are written with the conversation's.")
    max_in_flight: int = Field(default=256, ge=1, description="Conversations in flight at once, all cells.")
    max_attempts: int = Field(default=3, ge=1, description="Tries per unit when an actor dies under it.")
    budget_usd: float | None = Field(default=None, gt=0, description="Stop submitting once this much is spent.")
    judge_gates: bool = Field(default=False, description="The first overall judge's verdict (JUDGE_PASSED) "
                              "gates success, beside the scenario's own gating signals.")
    cluster: ClusterConfig = Field(default_factory=ClusterConfig, description="Actors and placement.")
    voice: VoiceConfig = Field(default_factory=VoiceConfig, description="Voice mode: the speech profiles (a sweep "
                               "axis; 'text' alone is today's text conversation) and the speech engines.")

    _source: str = PrivateAttr(default="")
    _written: dict[tuple[Any, ...], str] = PrivateAttr(default_factory=dict)

    @property
    def source(self) -> str:
        """Where the configuration came from (the sweep file, or the command line), for errors."""
        return self._source or self.name

    def where(self, field: str) -> str:
        """How an error names ``field``: the sweep file's field, or on the command line the
        option it came from."""
        if self._source != COMMAND_LINE:
            return f"field '{field}'"
        if field.startswith("scenarios"):
            return "the scenario selection (patterns, --domain, --split, --variant, --limit)"
        if field.startswith("models."):
            name = field.removeprefix("models.")
            return " and ".join(f"--{role}-model {name}" for role, names in (("agent", self.agents),
                                                                          ("user", self.users)) if name in names)
        return f"--{field.replace('_', '-')}"

    @field_validator("name")
    @classmethod
    def _plain_name(cls, v: str) -> str:
        if not _NAME.match(v):
            raise ValueError("expected a plain name of letters, digits, '.', '_' or '-' (it names files)")
        return v

    @model_validator(mode="after")
    def _known_models(self) -> SweepConfig:
        def check(where: str, names: list[str], reference: str | None) -> None:
            for i, n in enumerate(names):
                if n != reference and n not in self.models:
                    known = ", ".join(sorted(self.models)) or "a name from [models] (none defined)"
                    raise ValueError(f"{where}[{i}]: unknown model {n!r}; expected one of: {known}"
                                     + (f" (or '{reference}')" if reference else ""))

        check("agents", self.agents, ORACLE)
        check("users", self.users, SCRIPTED)
        check("judges", [j.model for j in self.judge_list], None)
        for i, j in enumerate(self.judge_list):
            _check_judge(i, j, self.models[j.model].spec)
        for field, names in (("agents", self.agents), ("users", self.users)):
            if len(set(names)) != len(names):
                raise ValueError(f"{field}: expected distinct model names, got {names}")
        check_voice(self)
        return self

    @property
    def judge_list(self) -> list[JudgeEntry]:
        if isinstance(self.judges, JudgeGrid):
            g = self.judges
            return [JudgeEntry(model=m, prompt=p, samples=g.samples, nl_pack=g.nl_pack if _is_nl(p) else None,
                                structured=g.structured) for m, p in itertools.product(g.models, g.prompts)]
        return list(self.judges)

    def probe_specs(self) -> dict[str, dict[str, Any]]:
        """The requests this sweep makes, labelled by their roles ("agent/judge (models.NAME)"),
        for the probe. A judge is probed as it calls: with the ``response_format`` its
        structured mode adds, when it adds one (a provider that refuses that fails here)."""
        roles: dict[tuple[str, str], list[str]] = {}
        specs: dict[tuple[str, str], dict[str, Any]] = {}

        def add(role: str, name: str, spec: dict[str, Any], tag: str = "") -> None:
            key = (name, tag)
            specs[key] = spec
            if role not in roles.setdefault(key, []):
                roles[key].append(role)

        for role, names in (("agent", self.agents), ("user", self.users)):
            for name in names:
                if name in self.models:
                    add(role, name, self.models[name].spec)
        for judge in self.judge_list:
            if judge.model not in self.models:
                continue
            plain = self.models[judge.model].spec
            request = _judge_request(judge, plain)
            if request == plain:
                add("judge", judge.model, plain)
            else:
                add("judge", judge.model, request, f", {judge.prompt} with response_format")
        return {f"{'/'.join(r)} (models.{name}{tag})": specs[(name, tag)] for (name, tag), r in roles.items()}

    def spec(self, name: str) -> dict[str, Any]:
        return self.models[name].spec if name in self.models else {"model": name}

    def speech_spec(self, role: Literal["tts", "asr"]) -> SpeechModelSpec:
        """The speech model ``[voice]`` binds to ``role``: a ``local/...`` name, or a [models] entry's spec."""
        name = getattr(self.voice, role)
        entry = self.models.get(name)
        if entry is not None and entry.speech is not None:
            return entry.speech
        return SpeechModelSpec(role=role, model=name)

    def price(self, name: str) -> Price | None:
        entry = self.models.get(name)
        return entry.price if entry else None


def _judge_request(judge: JudgeEntry, spec: dict[str, Any]) -> dict[str, Any]:
    """The model spec ``judge`` calls with (its structured mode may add ``response_format``)."""

    config = Judge.model_validate(judge.judge_spec(spec))
    request = config.request_spec()
    if request is config.model:
        return spec
    return {**spec, "extra_params": {**spec.get("extra_params", {}), **request.extra_params}}


def _check_judge(i: int, judge: JudgeEntry, spec: dict[str, Any]) -> None:
    """A judge config the judge can use (known prompt, a real model), checked at load."""

    try:
        Judge.model_validate(judge.judge_spec(spec))
    except ValidationError as exc:
        raise ValueError(f"judges[{i}]: " + "; ".join(e["msg"].removeprefix("Value error, ")
                                                       for e in exc.errors(include_url=False))) from None
    except Exception as exc:  # unknown prompt: the registry says what exists
        raise ValueError(f"judges[{i}]: {exc}") from None


def format_validation(exc: ValidationError) -> str:
    """A pydantic error as one line ``field 'a.b': message; field 'c': ...`` (no URLs, no
    input echo)."""
    parts = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
        msg = err["msg"].removeprefix("Value error, ")
        named = re.match(r"^([A-Za-z_][\w.\[\]]*): (.*)$", msg) if not loc else None
        if named:  # a check over several fields names the one at fault first
            loc, msg = named.groups()
        parts.append(f"field '{loc or '(top level)'}': {msg}")
    return "; ".join(parts)


def new_run_id() -> str:
    """A fresh run id: UTC time and a random suffix."""
    return datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]


def _role_name(spec: dict[str, Any], other: dict[str, Any], role: str) -> str:
    """The name ``tauray run`` gives a role's model: its model string (suffixed with the role
    when both roles use that model with different settings)."""
    model = str(spec["model"])
    return model if model != other.get("model") or spec == other else f"{model}@{role}"


def run_config(*, agent: dict[str, Any], user: dict[str, Any], name: str | None = None,
               patterns: list[str] | None = None, domain: str | None = None, split: str | None = None,
               variant: str | None = None, limit: int | None = None, judges: list[dict[str, Any]] | None = None,
               cluster: dict[str, Any] | None = None, **knobs: Any) -> SweepConfig:
    """The one-cell sweep of ``tauray run``: one agent model, one user model, one selection.
    ``knobs`` are :class:`SweepConfig` fields (trials, seed, max_steps, max_in_flight, ...)."""
    models: dict[str, Any] = {}
    names = {}
    for role, spec, other in (("agent", agent, user), ("user", user, agent)):
        if spec.get("model") in (ORACLE, SCRIPTED) and set(spec) == {"model"}:
            names[role] = spec["model"]
        else:
            names[role] = _role_name(spec, other, role)
            models[names[role]] = spec
    selection = {k: v for k, v in (("patterns", patterns or []), ("domain", domain), ("split", split),
                                   ("limit", limit)) if v}
    raw = {"name": name or new_run_id(), "models": models, "agents": [names["agent"]], "users": [names["user"]],
           "scenarios": [selection], "policy_variants": [variant] if variant else [], "judges": judges or [],
           "cluster": cluster or {}, **knobs}
    cfg = SweepConfig.model_validate(raw)  # errors: the caller names its own options
    cfg._source = COMMAND_LINE
    return cfg


class DriveOptions(BaseModel):
    """How a driver runs a configuration: where the tables go, which Ray, resume or not."""

    model_config = _STRICT
    out: Path | None = Field(default=None, description="Run directory (default runs/NAME).")
    address: str | None = Field(default=None, description="Ray cluster to join (default: RAY_ADDRESS, else "
                                "local Ray on 127.0.0.1).")
    resume: bool = Field(default=False, description="Continue in a run directory that holds results: skip "
                         "the units already done.")
    retry_errors: bool = Field(default=False, description="Resume, and rerun units whose newest row is an "
                               "infra or internal error.")
    probe: bool = Field(default=True, description="Make one real call per distinct model before any work "
                        "starts (--no-probe skips it).")

    @field_validator("out", mode="before")
    @classmethod
    def _not_empty(cls, v: Any) -> Any:
        if isinstance(v, str) and not v.strip():
            raise ValueError("expected a directory path, got an empty string (omit --out for runs/NAME)")
        return v

    def out_for(self, cfg: SweepConfig) -> Path:
        return self.out if self.out is not None else Path("runs") / cfg.name

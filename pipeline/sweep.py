"""Sweep files: a grid of models, judges, scenarios and trials in one TOML or YAML file.

A sweep names its models once (``[models.NAME]``: a ModelSpec plus an optional
price), then binds them to roles: every agent model × every user model is a
*cell*; the judge configs (judge model × prompt) are attached to every cell
as data, because a judge grades a recorded conversation and must not multiply
the conversations. Scenario selections (globs, domain, split) and policy
variants choose the scenarios; trials repeat them. Expansion is lazy, so a
sweep of a million units costs the driver no memory up front.

Every error names the file, the field and what was expected.
"""

from __future__ import annotations

import itertools
import os
import re
import tomllib
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from tauray.pipeline.plan import WorkUnit, cell_id, model_identity, unit_id, unit_seed
from tauray.scenarios.conventions import ORACLE, SCRIPTED, is_reference

_STRICT = ConfigDict(frozen=True, extra="forbid")
_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


class SweepFileError(ValueError):
    """A sweep file that cannot be used; the message names the file, the field and what was expected."""


class Price(BaseModel):
    """USD per million tokens, used when litellm has no price for the model (self-hosted, test endpoint)."""

    model_config = _STRICT
    input_per_mtok: float = Field(ge=0, description="USD per million prompt tokens.")
    output_per_mtok: float = Field(ge=0, description="USD per million completion tokens.")

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input_per_mtok + completion_tokens * self.output_per_mtok) / 1e6


class ModelEntry(BaseModel):
    """One named model: a ModelSpec (per-model limits included) and an optional price."""

    model_config = ConfigDict(frozen=True, extra="allow")
    price: Price | None = Field(default=None, description="Price used when litellm knows none.")

    @model_validator(mode="after")
    def _valid_spec(self) -> ModelEntry:
        from tauray.actors.llm import ModelSpec

        try:
            ModelSpec.model_validate(self.spec)
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
    def concurrency(self) -> int:
        from tauray.actors.llm import ModelSpec

        return ModelSpec.model_validate(self.spec).concurrency


class JudgeConfig(BaseModel):
    """A judge: a model (a name from ``[models]``) and a prompt id (``id@version``)."""

    model_config = _STRICT
    model: str = Field(description="Name of a model in [models].")
    prompt: str = Field(min_length=1, description="Judge prompt template, 'id@version'.")
    samples: int = Field(default=1, ge=1, description="Judge samples per item.")


class JudgeGrid(BaseModel):
    """Judge models × prompts, as a shorthand for listing every pair."""

    model_config = _STRICT
    models: list[str] = Field(min_length=1, description="Names of models in [models].")
    prompts: list[str] = Field(min_length=1, description="Judge prompt templates, 'id@version'.")
    samples: int = Field(default=1, ge=1, description="Judge samples per item.")


class Selection(BaseModel):
    """One scenario selection; a sweep takes the union of its selections."""

    model_config = _STRICT
    patterns: list[str] = Field(default_factory=list, description="Scenario name globs; empty = all.")
    domain: str | None = Field(default=None, description="Domain filter, e.g. telecom.")
    split: str | None = Field(default=None, description="Split filter, e.g. base.")
    limit: int | None = Field(default=None, ge=1, description="Keep the first N scenarios of this selection.")


class ClusterConfig(BaseModel):
    """How many actors to start and where."""

    model_config = _STRICT
    coordinators: int | None = Field(default=None, ge=1, description="Coordinator actors; default one per node.")
    agent_hosts: int | None = Field(default=None, ge=1, description="Agent host actors; default one per node.")
    user_hosts: int | None = Field(default=None, ge=1, description="User host actors; default one per node.")
    spread: bool = Field(default=True, description="SPREAD scheduling: put actors on different nodes.")
    ship_project: bool = Field(default=True, description="On a cluster, ship this project with py_modules.")
    runtime_env: dict[str, Any] = Field(default_factory=dict, description="Extra Ray runtime_env (e.g. pip).")


class SweepConfig(BaseModel):
    """The whole grid, as read from a sweep file."""

    model_config = _STRICT
    name: str = Field(description="Sweep id: names the run directory and every row's run_id.")
    models: dict[str, ModelEntry] = Field(min_length=1, description="Named models with their limits and prices.")
    agents: list[str] = Field(min_length=1, description="Model names (or 'oracle') for the agent role.")
    users: list[str] = Field(min_length=1, description="Model names (or 'scripted') for the user role.")
    judges: list[JudgeConfig] | JudgeGrid = Field(default_factory=list, description="Judge configs.")
    scenarios: list[Selection] = Field(min_length=1, description="Scenario selections (union).")
    policy_variants: list[str] = Field(default_factory=list, description="Policy variants; empty = all.")
    trials: int = Field(default=1, ge=1, description="Trials per scenario and cell.")
    seed: int = Field(default=0, description="Base seed; unit seeds derive from it and the unit id.")
    max_steps: int = Field(default=100, ge=1, description="Policy replies allowed per conversation.")
    max_errors: int = Field(default=10, ge=1, description="Tool errors allowed per conversation.")
    max_in_flight: int = Field(default=256, ge=1, description="Conversations in flight at once, all cells.")
    max_attempts: int = Field(default=3, ge=1, description="Tries per unit when an actor dies under it.")
    budget_usd: float | None = Field(default=None, gt=0, description="Stop submitting once this much is spent.")
    cluster: ClusterConfig = Field(default_factory=ClusterConfig, description="Actors and placement.")

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
                    known = ", ".join(sorted(self.models)) + (f" (or '{reference}')" if reference else "")
                    raise ValueError(f"{where}[{i}]: unknown model {n!r}; expected one of: {known}")

        check("agents", self.agents, ORACLE)
        check("users", self.users, SCRIPTED)
        check("judges", [j.model for j in self.judge_list], None)
        for i, j in enumerate(self.judge_list):
            _check_judge(i, j, self.models[j.model].spec)
        for field, names in (("agents", self.agents), ("users", self.users)):
            if len(set(names)) != len(names):
                raise ValueError(f"{field}: expected distinct model names, got {names}")
        return self

    @property
    def judge_list(self) -> list[JudgeConfig]:
        if isinstance(self.judges, JudgeGrid):
            g = self.judges
            return [JudgeConfig(model=m, prompt=p, samples=g.samples) for m, p in itertools.product(g.models, g.prompts)]
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

    def price(self, name: str) -> Price | None:
        entry = self.models.get(name)
        return entry.price if entry else None


def _judge_request(judge: JudgeConfig, spec: dict[str, Any]) -> dict[str, Any]:
    """The model spec ``judge`` calls with (its structured mode may add ``response_format``)."""
    try:
        from tauray.actors.judge import JudgeConfig as Judge
    except ImportError:  # no judge in this build
        return spec
    config = Judge.model_validate({"model": spec, "prompt": judge.prompt, "samples": judge.samples})
    request = config.request_spec()
    if request is config.model:
        return spec
    return {**spec, "extra_params": {**spec.get("extra_params", {}), **request.extra_params}}


def _check_judge(i: int, judge: JudgeConfig, spec: dict[str, Any]) -> None:
    """A judge config the judge can use (known prompt, a real model), checked at load."""
    try:
        from tauray.actors.judge import JudgeConfig as Judge
    except ImportError:  # no judge in this build: carried as data only
        return
    try:
        Judge.model_validate({"model": spec, "prompt": judge.prompt, "samples": judge.samples})
    except ValidationError as exc:
        raise ValueError(f"judges[{i}]: " + "; ".join(e["msg"].removeprefix("Value error, ")
                                                       for e in exc.errors(include_url=False))) from None
    except Exception as exc:  # unknown prompt: the registry says what exists
        raise ValueError(f"judges[{i}]: {exc}") from None


# --------------------------------------------------------------------------- loading


def _expand_env(value: Any, where: str, path: Path) -> Any:
    """``${VAR}`` in any string is replaced by the environment variable (e.g. an endpoint URL)."""
    if isinstance(value, dict):
        return {k: _expand_env(v, f"{where}.{k}" if where else str(k), path) for k, v in value.items()}
    if isinstance(value, list):
        return [_expand_env(v, f"{where}[{i}]", path) for i, v in enumerate(value)]
    if isinstance(value, str):
        def sub(m: re.Match[str]) -> str:
            if m.group(1) not in os.environ:
                raise SweepFileError(f"{path}: field '{where}': environment variable {m.group(1)} is not set "
                                     f"(expected it to hold the value for ${{{m.group(1)}}})")
            return os.environ[m.group(1)]
        return _ENV_REF.sub(sub, value)
    return value


def _format_errors(path: Path, exc: ValidationError) -> str:
    lines = []
    for err in exc.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"] if p not in ("function-after[_valid_spec()]",))
        msg = err["msg"].removeprefix("Value error, ")
        lines.append(f"{path}: field '{loc or '(top level)'}': {msg}")
    return "\n".join(lines)


def load_sweep(path: Path | str) -> SweepConfig:
    """Read and validate a sweep file (``.toml``, ``.yaml`` or ``.yml``)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise SweepFileError(f"{path}: cannot read the sweep file: {exc.strerror or exc}") from None
    try:
        if path.suffix == ".toml":
            raw = tomllib.loads(text)
        elif path.suffix in (".yaml", ".yml"):
            import yaml

            raw = yaml.safe_load(text)
        else:
            raise SweepFileError(f"{path}: expected a .toml, .yaml or .yml file")
    except (tomllib.TOMLDecodeError, ImportError) as exc:
        raise SweepFileError(f"{path}: not valid TOML: {exc}") from None
    except Exception as exc:  # yaml.YAMLError without importing yaml up front
        if isinstance(exc, SweepFileError):
            raise
        raise SweepFileError(f"{path}: not valid YAML: {exc}") from None
    if not isinstance(raw, dict):
        raise SweepFileError(f"{path}: expected a mapping of sweep fields at the top level")
    raw = _expand_env(raw, "", path)
    raw.setdefault("name", path.stem)
    try:
        return SweepConfig.model_validate(raw)
    except ValidationError as exc:
        raise SweepFileError(_format_errors(path, exc)) from None


# --------------------------------------------------------------------------- expansion


class Cell(BaseModel):
    """One agent model × user model, with the sweep's judge configs and options."""

    model_config = ConfigDict(frozen=True)
    cell_id: str
    agent_name: str
    user_name: str
    agent: dict[str, Any]
    user: dict[str, Any]
    judge_configs: list[dict[str, Any]]
    judge_labels: list[str]


class SweepPlan:
    """The expanded grid: cells, scenarios, and units generated on demand."""

    def __init__(self, cfg: SweepConfig, scenarios: list[str], rpm_split: dict[str, int] | None = None):
        self.cfg = cfg
        self.scenarios = scenarios
        # in the judge's own config shape (tauray.actors.judge.JudgeConfig), so the
        # coordinator can judge each conversation with them
        judges = [{"model": cfg.spec(j.model), "prompt": j.prompt, "samples": j.samples}
                  for j in cfg.judge_list]
        self.judge_labels = [f"{j.model}:{j.prompt}" for j in cfg.judge_list]
        self.cells: list[Cell] = []
        for a, u in itertools.product(cfg.agents, cfg.users):
            agent, user = _paced(cfg.spec(a), rpm_split, "agent"), _paced(cfg.spec(u), rpm_split, "user")
            identity = {"agent": _identity(agent), "user": _identity(user),
                        "judges": [{"model": _identity(j["model"]), "prompt": j["prompt"], "samples": j["samples"]}
                                   for j in judges],
                        "max_steps": cfg.max_steps, "max_errors": cfg.max_errors, "seed": cfg.seed}
            self.cells.append(Cell(cell_id=cell_id(identity), agent_name=a, user_name=u, agent=agent, user=user,
                                   judge_configs=judges, judge_labels=self.judge_labels))

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
                           trial=trial, seed=unit_seed(uid, cfg.seed), agent=cell.agent, user=cell.user,
                           judge_configs=cell.judge_configs, max_steps=cfg.max_steps, max_errors=cfg.max_errors)


def _identity(spec: dict[str, Any]) -> dict[str, Any]:
    if is_reference(spec.get("model")):
        return {"model": spec["model"]}
    return model_identity(spec)


def _paced(spec: dict[str, Any], split: dict[str, int] | None, side: str) -> dict[str, Any]:
    """Each host process enforces rpm/tpm on its own Router, so a sweep's limit is split
    evenly over the hosts of the side that uses the model."""
    n = (split or {}).get(side, 1)
    if n <= 1:
        return spec
    out = dict(spec)
    for key in ("rpm", "tpm"):
        if out.get(key):
            out[key] = max(1, out[key] // n)
    return out


def select(cfg: SweepConfig) -> list[str]:
    """Scenario names of the sweep: the union of its selections, in policy variants, in order."""
    from tauray.scenarios import select_scenarios

    names: dict[str, None] = {}
    variants = cfg.policy_variants or [None]
    for i, sel in enumerate(cfg.scenarios):
        for variant in variants:
            try:
                entries = select_scenarios(sel.patterns or None, domain=sel.domain, split=sel.split, variant=variant)
            except (KeyError, ValueError) as exc:
                raise SweepFileError(f"{cfg.name}: field 'scenarios[{i}]': {exc}") from None
            for e in entries[: sel.limit] if sel.limit else entries:
                names[e.name] = None
    if not names:
        raise SweepFileError(f"{cfg.name}: field 'scenarios': the selections match no scenario")
    return list(names)


def plan_sweep(cfg: SweepConfig, host_counts: dict[str, int] | None = None) -> SweepPlan:
    return SweepPlan(cfg, select(cfg), host_counts)

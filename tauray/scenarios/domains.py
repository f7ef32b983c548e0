"""Per-domain wiring to upstream: DB and toolkit classes, data files, policy,
tool surfaces, sync. One ``DomainSpec`` per domain; no class per task."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from tauray.scenarios import conventions, telecom, telecom_sync
from tauray.scenarios.model import Side, ToolSpec
from tauray.scenarios.prompts import DEFAULT_USER_GUIDELINES, DEFAULT_USER_SCRIPT
from tauray.scenarios.state import DualState, SideState
from tauray.scenarios.upstream import data_file, read_text, upstream_attr

END_CONVERSATION = ToolSpec(
    name=conventions.END_CONVERSATION,
    description="End the conversation once the customer's request is handled or cannot be handled.",
    parameters={
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "One sentence on why the conversation ends."}},
        "required": [],
    },
    kind="harness",
    side="agent",
)


@dataclass(frozen=True)
class SideWiring:
    db_module: str
    db_class: str
    db_file: str
    tools_module: str
    tools_class: str


@dataclass(frozen=True, eq=False)
class DomainSpec:
    name: str
    variants: tuple[str, ...]
    agent: SideWiring
    user: SideWiring | None = None
    tasks_file: str = "tasks.json"
    split_file: str = "split_tasks.json"
    sync: Callable[[Any, Any], Any] | None = None
    apply_sync: dict[str, Callable[[Any, dict[str, Any]], None]] = field(default_factory=dict)
    # The sync reads little of each DB: ``sync_view[side](db)`` is that part, as plain values, and
    # ``sync_views(agent_view, user_view)`` equals ``sync(agent_db, user_db)``. Hosts hand the
    # coordinator their views (when changed), never their DBs.
    sync_view: dict[str, Callable[[Any], dict[str, Any]]] = field(default_factory=dict)
    sync_views: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None
    # Parity on perturbed sequences too (not only gold): for domains whose DBs are small enough
    # for upstream to replay many sequences quickly.
    perturbed_parity: bool = False

    @property
    def has_user_state(self) -> bool:
        return self.user is not None

    # --- data ---------------------------------------------------------------
    def policy(self, variant: str) -> str:
        if self.name == "telecom":
            return telecom.telecom_policy(variant)
        return read_text(self.name, "policy.md").strip()

    def agent_addenda(self, variant: str) -> tuple[str, ...]:
        if self.name != "telecom":
            return ()
        agent_tools = [t.name for t in self.tool_specs("agent")] + [END_CONVERSATION.name]
        phone_tools = [t.name for t in self.tool_specs("user")]
        return (
            telecom.tool_availability_note(agent_tools, phone_tools),
            telecom.STAY_ON_TASK_NOTE,
            telecom.HOME_NETWORK_NOTE,
        )

    def user_script(self) -> tuple[str, ...]:
        return telecom.USER_SCRIPT if self.name == "telecom" else DEFAULT_USER_SCRIPT

    def user_guidelines(self) -> tuple[str, ...]:
        return telecom.USER_GUIDELINES if self.name == "telecom" else DEFAULT_USER_GUIDELINES

    # --- state --------------------------------------------------------------
    def wiring(self, side: Side) -> SideWiring | None:
        return self.agent if side == "agent" else self.user

    def fresh_db(self, side: Side) -> Any:
        wiring = self.wiring(side)
        cls = upstream_attr(wiring.db_module, wiring.db_class)
        return cls.model_validate(_base_dump(self.name, wiring))

    def toolkit(self, side: Side, db: Any | None = None) -> Any:
        wiring = self.wiring(side)
        return upstream_attr(wiring.tools_module, wiring.tools_class)(db if db is not None else self.fresh_db(side))

    def tool_specs(self, side: Side) -> tuple[ToolSpec, ...]:
        return _tool_specs(self, side)

    def tool_kinds(self, side: Side) -> Mapping[str, str]:
        """Tool name -> kind (read, write, ...); computed once per process (read-only)."""
        return _tool_kinds(self, side)

    def fresh_side(self, side: Side) -> SideState:
        return SideState(side, self.toolkit(side), self.tool_kinds(side))

    def side_from_db(self, side: Side, db: Any) -> SideState:
        """A side over a given DB: an upstream DB object, or its ``model_dump()``."""
        if isinstance(db, dict):
            wiring = self.wiring(side)
            db = upstream_attr(wiring.db_module, wiring.db_class).model_validate(db)
        return SideState(side, self.toolkit(side, db), self.tool_kinds(side))

    def fresh_state(self) -> DualState:
        user = self.fresh_side("user") if self.user else None
        return DualState(self.fresh_side("agent"), user, self.sync, self.apply_sync)

    def functions(self, side: Side) -> frozenset[str]:
        """Public toolkit methods: what initialization actions and assertions may call."""
        return _functions(self, side)


# Loading the registry checks every task's calls against these (thousands of lookups in each
# process that loads it: the driver and every actor), so each is computed once per process.
@functools.cache
def _functions(spec: DomainSpec, side: Side) -> frozenset[str]:
    wiring = spec.wiring(side)
    if wiring is None:
        return frozenset()
    cls = upstream_attr(wiring.tools_module, wiring.tools_class)
    return frozenset(n for n in dir(cls) if not n.startswith("_") and callable(getattr(cls, n, None)))


@functools.cache
def _tool_kinds(spec: DomainSpec, side: Side) -> Mapping[str, str]:
    return MappingProxyType({t.name: t.kind for t in spec.tool_specs(side)})


@functools.cache
def _base_dump(domain: str, wiring: SideWiring) -> dict[str, Any]:
    """Each DB file is parsed once per process; fresh copies are validated from this dump."""
    cls = upstream_attr(wiring.db_module, wiring.db_class)
    return cls.load(str(data_file(domain, wiring.db_file))).model_dump()


@functools.cache
def _tool_specs(spec: DomainSpec, side: Side) -> tuple[ToolSpec, ...]:
    if spec.wiring(side) is None:
        return ()
    toolkit = spec.toolkit(side)
    specs = []
    for name, tool in sorted(toolkit.get_tools().items()):
        schema = tool.openai_schema["function"]
        kind = getattr(toolkit.tool_type(name), "value", str(toolkit.tool_type(name)))
        specs.append(ToolSpec(name=name, description=schema.get("description") or name,
                              parameters=schema["parameters"], kind=kind, side=side))
    return tuple(specs)


def _telecom() -> DomainSpec:
    return DomainSpec(
        name="telecom",
        variants=("manual", "workflow"),
        agent=SideWiring("domains.telecom.data_model", "TelecomDB", "db.toml",
                         "domains.telecom.tools", "TelecomTools"),
        user=SideWiring("domains.telecom.user_data_model", "TelecomUserDB", "user_db.toml",
                        "domains.telecom.user_tools", "TelecomUserTools"),
        sync=telecom_sync.compute_sync,
        apply_sync={"agent": telecom_sync.apply_agent_sync, "user": telecom_sync.apply_user_sync},
        sync_view={"agent": telecom_sync.agent_view, "user": telecom_sync.user_view},
        sync_views=telecom_sync.sync_views,
        perturbed_parity=True,
    )


DOMAINS: dict[str, DomainSpec] = {
    "telecom": _telecom(),
    "airline": DomainSpec(
        name="airline", variants=("default",),
        agent=SideWiring("domains.airline.data_model", "FlightDB", "db.json", "domains.airline.tools", "AirlineTools"),
    ),
    "retail": DomainSpec(
        name="retail", variants=("default",),
        agent=SideWiring("domains.retail.data_model", "RetailDB", "db.json", "domains.retail.tools", "RetailTools"),
    ),
    # Upstream's small task-tracker domain: a short policy and short tasks, the right size for
    # tests with real (small) models.
    "mock": DomainSpec(
        name="mock", variants=("default",),
        agent=SideWiring("domains.mock.data_model", "MockDB", "db.json", "domains.mock.tools", "MockTools"),
        perturbed_parity=True,
    ),
}


def domain_spec(name: str) -> DomainSpec:
    try:
        return DOMAINS[name]
    except KeyError:
        raise KeyError(f"unknown domain {name!r}; known domains: {', '.join(sorted(DOMAINS))}") from None

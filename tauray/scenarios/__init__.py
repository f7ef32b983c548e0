"""What is evaluated: scenarios, their registry, dual state, sync, gold replay and scoring."""

from tauray.scenarios.domains import DOMAINS, DomainSpec, domain_spec
from tauray.scenarios.gold import GoldReplay, fresh_state, gold_replay, replay
from tauray.scenarios.loader import ScenarioLoadError
from tauray.scenarios.model import (
    EnvCall,
    Predicate,
    ReferenceAction,
    Scenario,
    Side,
    SuccessSignal,
    SuccessSignals,
    ToolSpec,
    UserProfile,
)
from tauray.scenarios.registry import (
    Registry,
    ScenarioEntry,
    UnknownScenarioError,
    default_registry,
    get_scenario,
    select_scenarios,
)
from tauray.scenarios.scoring import (
    ExecutedCall,
    PredicateVerdict,
    Score,
    SideCheck,
    Verdict,
    check_side,
    combine,
    score,
    score_checks,
)
from tauray.scenarios.state import DualState, SideState, SyncEvent, ToolOutcome
from tauray.scenarios.telecom_sync import TelecomSync, compute_sync
from tauray.scenarios.upstream import UpstreamError

__all__ = [name for name in dir() if not name.startswith("_")]

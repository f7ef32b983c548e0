"""The one classification of failures, and the coordinator's bounded initial-state cache."""

from __future__ import annotations

import pytest
import ray.exceptions as rx

from tauray.actors.failures import classify, is_actor_death
from tauray.actors.llm import ModelCallError, ModelConfigError


def _raised_in_a_task(exc: BaseException) -> BaseException:
    """What ``ray.get`` raises when a remote call raised ``exc``."""
    try:
        raise exc
    except BaseException as e:  # noqa: BLE001 - building Ray's wrapper of it
        return rx.RayTaskError("run", "remote traceback", e).as_instanceof_cause()


@pytest.mark.parametrize("exc, kind, death", [
    (rx.ActorDiedError(), "infra", True),
    (rx.RayActorError(), "infra", True),
    (rx.WorkerCrashedError(), "infra", True),
    (rx.NodeDiedError("node gone"), "infra", True),
    (rx.OwnerDiedError("00" * 28, "", ""), "infra", True),
    (ModelCallError("infra", "openai/x: RateLimitError: 429"), "infra", False),
    (ModelCallError("model", "openai/x: BadRequestError: 400"), "model", False),
    (ModelConfigError("model 'openai/x': KEY_VAR is not set"), "config", False),
    (KeyError("deliberate bug"), "internal", False),
    (ZeroDivisionError("division by zero"), "internal", False),
])
def test_one_classification_also_through_a_remote_call(exc, kind, death):
    for seen in (exc, _raised_in_a_task(exc)):
        failure = classify(seen)
        assert (failure.kind, failure.actor_death) == (kind, death), (seen, failure)
        assert failure.message
        assert is_actor_death(failure.kind, failure.message) is death


def test_a_bug_keeps_its_name_and_the_message_is_bounded():
    failure = classify(_raised_in_a_task(KeyError("deliberate bug " + "x" * 50_000)))
    assert failure.kind == "internal" and failure.message.startswith("KeyError")
    assert len(failure.message) < 10_000


def test_initial_state_cache_is_bounded_lru():
    from tauray.scenarios import initial, select_scenarios
    from tauray.scenarios.registry import default_registry

    reg = default_registry()
    limit = initial.INITIAL_CACHE_TASKS
    seen: dict[object, object] = {}
    for entry in select_scenarios(domain="telecom", split="full", variant="manual"):
        s = reg.get(entry.name)
        key = initial._Start(s).key  # tasks that start alike share an entry
        if key not in seen:
            seen[key] = s
        if len(seen) > limit + 10:
            break
    tasks = list(seen.values())
    initial.clear_initial_cache()
    first = initial.initial_state(tasks[0])
    assert initial.initial_state(tasks[0]) is first  # a hit
    for s in tasks[1:]:
        initial.initial_state(s)
        assert initial.initial_cache_size() <= limit
    assert initial.initial_cache_size() == limit
    assert initial.initial_state(tasks[0]) is not first  # the least recently used went first
    assert initial.initial_state(tasks[-1]) is initial.initial_state(tasks[-1])

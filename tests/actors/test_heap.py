"""Long-lived actors keep their read-only state out of the cycle collector (actors/heap.py);
everything else keeps Python's defaults."""

from __future__ import annotations

import gc
import subprocess
import sys
import textwrap

import pytest

from tauray.actors import heap


def test_the_actor_class_is_the_same_class_with_a_settling_constructor(monkeypatch):
    started = []
    monkeypatch.setattr(heap, "start_long_lived", lambda: started.append(True))

    class Host:
        """A host."""

        def __init__(self, name: str) -> None:
            self.name = name

    Remote = heap.long_lived(Host)
    made = Remote("a")
    assert started == [True] and made.name == "a" and isinstance(made, Host)
    assert Remote.__name__ == "Host" and Remote.__doc__ == "A host."
    Host("b")  # the class itself, in process: no settling
    assert started == [True]


def test_outside_a_long_lived_actor_nothing_is_frozen():
    frozen, threshold = gc.get_freeze_count(), gc.get_threshold()
    heap.loaded("domain:telecom")
    assert (gc.get_freeze_count(), gc.get_threshold()) == (frozen, threshold)


_PROBE = textwrap.dedent("""
    import gc, json, sys
    from tauray.actors import heap
    from tauray.actors.llm.providers import litellm_module
    before = gc.get_freeze_count()
    heap.start_long_lived()
    started = gc.get_freeze_count()
    assert "litellm" not in sys.modules  # settling imports nothing
    litellm_module()  # a model client's first build: litellm's model table, frozen at its import
    with_litellm = gc.get_freeze_count()
    keep = [[i] for i in range(5000)]  # state loaded later: a domain's scenarios
    heap.loaded("domain:x")
    first = gc.get_freeze_count()
    more = [[i] for i in range(5000)]
    heap.loaded("domain:x")  # the same key again: no second freeze
    litellm_module()
    print(json.dumps([before, started, with_litellm, first, gc.get_freeze_count(), gc.get_threshold()[0]]))
""")


@pytest.mark.slow  # a fresh interpreter: the freeze must not touch pytest's own process
def test_a_long_lived_process_freezes_litellm_and_each_new_load_once():
    import json

    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120,
                         env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    before, started, with_litellm, first, again, young = json.loads(out.stdout.strip().splitlines()[-1])
    assert before == 0 and started > 0
    assert with_litellm > started + 200_000  # litellm's model table is in the permanent generation
    assert first >= with_litellm + 5000  # the load after it is frozen at its first mention
    assert again == first  # each key once
    assert young == heap.YOUNG_THRESHOLD


def test_the_hosts_coordinators_and_judges_run_as_long_lived_actors(ray_local):
    import ray

    from tauray.actors.coordinator import coordinator_class
    from tauray.actors.hosts import remote_classes
    from tauray.actors.judge import judge_actor_class

    agent_cls, user_cls = remote_classes()
    agent, user = agent_cls.remote(), user_cls.remote()
    coordinator, judge = coordinator_class().remote([agent], [user]), judge_actor_class().remote()
    try:
        probe = lambda self: (gc.get_freeze_count(), gc.get_threshold()[0])  # noqa: E731
        for actor in (agent, user, coordinator, judge):
            frozen, young = ray.get(actor.__ray_call__.remote(probe), timeout=120)
            assert frozen > 50_000 and young == heap.YOUNG_THRESHOLD  # what the actor had imported
    finally:
        for actor in (agent, user, coordinator, judge):
            ray.kill(actor)

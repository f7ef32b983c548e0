"""Keep CPython's cycle collector off the read-only state a long-lived actor holds.

A host, coordinator or judge actor holds two large read-only loads for its whole life:
litellm's model table (about 350,000 objects the collector tracks, at import) and each
domain's scenarios (about 250,000 for telecom, at the first conversation of the domain).
Every full collection walks all of them, and a busy host runs one every few hundred calls:
in one process running 128 telecom conversations (1,698 model calls, `bench engine`'s
load without Ray), the collector took 15-16% of the CPU, 1.36 s of it in three full
collections. :func:`settle` moves what a process holds at that moment into the permanent
generation (``gc.freeze``), which the collector no longer walks; together with a higher
first threshold (fewer young collections; a young collection's cost does not grow with
the heap) the collector's share fell to 2-3% in the same run.

Freezing is safe for state that lives as long as the process: frozen objects are still
freed by reference counting, only a cycle among them would never be collected. A settle
during a run also freezes what the conversations in flight hold at that moment (and any
cyclic garbage an older collection left): their cycles are never collected, a one-off cost
bounded by one settle per key, not one that grows. So a process settles only where its
long-lived state has just grown (its start, litellm's first
import, a domain's first load), and only in Ray actors (:func:`long_lived`): a test process
or a user's script keeps Python's defaults. Settling costs a young collection and the
freeze, not a full collection (which would cost a host 0.3-0.45 s each time), and nothing is
imported for it: an actor that never calls a model (the reference policies) never imports
litellm.
"""

from __future__ import annotations

import gc
from typing import Any

YOUNG_THRESHOLD = 10_000
"""First-generation threshold in a long-lived actor (Python's default is 700)."""

_long_lived = False
_settled: set[str] = set()


def settle() -> None:
    """Collect the young garbage, then freeze everything else out of future collections."""
    gc.collect(1)
    gc.freeze()


def start_long_lived() -> None:
    """Mark this process as a long-lived actor and settle what it has loaded so far."""
    global _long_lived
    _long_lived = True
    gc.set_threshold(YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    settle()


def loaded(key: str) -> None:
    """Say that this process has just loaded ``key`` (litellm, a domain's scenarios) to keep for
    its life: a long-lived actor settles the first time it hears of each key; elsewhere nothing."""
    if _long_lived and key not in _settled:
        _settled.add(key)
        settle()


def long_lived(cls: type) -> type:
    """``cls`` as a Ray actor class would have it: the same class, whose instances first
    mark their process long-lived (:func:`start_long_lived`). ``cls`` itself is unchanged,
    so it still runs in-process with Python's defaults."""

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        start_long_lived()
        cls.__init__(self, *args, **kwargs)

    return type(cls.__name__, (cls,), {"__init__": __init__, "__doc__": cls.__doc__,
                                       "__module__": cls.__module__, "__qualname__": cls.__qualname__})

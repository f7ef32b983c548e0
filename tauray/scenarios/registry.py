"""The scenario registry: every upstream task of every domain, in each of the
domain's policy variants, under a stable name. Data-driven: the entries come
from the installed upstream task files; scenarios are built on first use."""

from __future__ import annotations

import difflib
import fnmatch
import functools
import re
import threading
from typing import Iterable

from tauray.scenarios import loader
from tauray.scenarios.domains import DOMAINS, DomainSpec, domain_spec
from tauray.scenarios.model import Scenario, ScenarioEntry
from tauray.scenarios.names import parse_issue_type, parse_persona, scenario_name
from tauray.scenarios.upstream import read_json

ALL_TASKS_SPLIT = "full"


class UnknownScenarioError(KeyError):
    def __str__(self) -> str:  # KeyError would repr() the message
        return str(self.args[0])


class Registry:
    def __init__(self, domains: dict[str, DomainSpec] | None = None):
        self._domains = dict(domains or DOMAINS)
        self._lock = threading.RLock()
        self._by_domain: dict[str, dict[str, ScenarioEntry]] = {}  # domains loaded so far
        self._entries: dict[str, ScenarioEntry] | None = None  # all of them, in domain order
        self._tasks: dict[tuple[str, str], loader._RawTask] = {}
        self._built: dict[str, Scenario] = {}

    # --- loading ------------------------------------------------------------
    def _load_domain(self, spec: DomainSpec) -> dict[str, ScenarioEntry]:
        entries: dict[str, ScenarioEntry] = {}
        raw_tasks = read_json(spec.name, spec.tasks_file)
        raw_splits = read_json(spec.name, spec.split_file)
        membership: dict[str, list[str]] = {}
        for split, ids in raw_splits.items():
            for task_id in ids:
                membership.setdefault(str(task_id), []).append(split)
        for raw in raw_tasks:
            task = loader.parse_task(raw)
            loader.check_functions(spec, task)
            if (spec.name, task.id) in self._tasks:
                raise loader.ScenarioLoadError(task.id, "id", f"duplicate task id in domain {spec.name!r}")
            self._tasks[(spec.name, task.id)] = task
            splits = tuple(dict.fromkeys([*membership.get(task.id, []), ALL_TASKS_SPLIT]))
            for variant in spec.variants:
                name = scenario_name(spec.name, variant, task.id)
                if name in entries:
                    raise loader.ScenarioLoadError(
                        task.id, "id", f"its name {name!r} collides with task {entries[name].upstream_id!r}")
                entries[name] = ScenarioEntry(
                    name=name, domain=spec.name, upstream_id=task.id, policy_variant=variant, splits=splits,
                    issue_type=parse_issue_type(task.id), persona=parse_persona(task.id),
                )
        return entries

    def domain_entries(self, domain: str) -> dict[str, ScenarioEntry]:
        """One domain's entries, loading only that domain's task files (each domain is read
        once per process, on first use: an actor of a telecom sweep never reads airline's)."""
        with self._lock:
            if domain not in self._by_domain:
                self._by_domain[domain] = self._load_domain(self._domains[domain])
            return self._by_domain[domain]

    def entries(self) -> dict[str, ScenarioEntry]:
        with self._lock:
            if self._entries is None:
                self._entries = {name: entry for domain in self._domains
                                 for name, entry in self.domain_entries(domain).items()}
            return self._entries

    def _domains_of(self, pattern: str) -> set[str] | None:
        """The domains a scenario name or glob pattern can match, read off its literal head
        (``tau2_<domain>__...``, ``tau2_<domain>_<variant>__...``, ``tau2_tel*``); None: any."""
        literal = re.split(r"[*?\[]", pattern, maxsplit=1)[0]
        if not literal.startswith("tau2_"):
            return None
        rest = literal[len("tau2_"):]
        if "_" in rest:  # the domain is spelled out in full
            return {rest.split("_", 1)[0]} & set(self._domains)
        return {d for d in self._domains if d.startswith(rest)}

    # --- lookup -------------------------------------------------------------
    def entry(self, name: str) -> ScenarioEntry:
        for domain in self._domains_of(name) or ():
            if name in (found := self.domain_entries(domain)):
                return found[name]
        entries = self.entries()
        if name not in entries:
            close = difflib.get_close_matches(name, list(entries), n=5, cutoff=0.5)
            hint = ("; did you mean: " + ", ".join(close)) if close else (
                f"; {len(entries)} scenarios are registered (see `tauray scenarios list`)")
            raise UnknownScenarioError(f"unknown scenario {name!r}{hint}")
        return entries[name]

    def get(self, name: str) -> Scenario:
        entry = self.entry(name)
        with self._lock:
            scenario = self._built.get(name)
            if scenario is None:
                spec = self._domains[entry.domain]
                task = self._tasks[(entry.domain, entry.upstream_id)]
                scenario = loader.build_scenario(spec, task, entry)
                self._built[name] = scenario
            return scenario

    def raw_task(self, entry: ScenarioEntry) -> loader._RawTask:
        self.domain_entries(entry.domain)
        return self._tasks[(entry.domain, entry.upstream_id)]

    def select(self, pattern: str | Iterable[str] | None = None, domain: str | None = None,
               split: str | None = None, variant: str | None = None) -> list[ScenarioEntry]:
        """Entries matching all given filters, in registry order. Filters naming
        something that does not exist are errors, not empty selections."""
        patterns = [] if not pattern else [pattern] if isinstance(pattern, str) else list(pattern)
        if domain is not None:
            if domain not in self._domains:
                raise UnknownScenarioError(f"unknown domain {domain!r}; known: {', '.join(sorted(self._domains))}")
            entries = list(self.domain_entries(domain).values())
        elif patterns and None not in (of := [self._domains_of(p) for p in patterns]):
            # every pattern says which domains it can match: read only those (in registry order)
            domains = set().union(*of)
            entries = [e for d in self._domains if d in domains for e in self.domain_entries(d).values()]
        else:
            entries = list(self.entries().values())
        if split is not None:
            known = sorted({s for e in entries for s in e.splits})
            if split not in known:
                raise UnknownScenarioError(f"unknown split {split!r}; available here: {', '.join(known)}")
            entries = [e for e in entries if split in e.splits]
        if variant is not None:
            known = sorted({e.policy_variant for e in entries})
            if variant not in known:
                raise UnknownScenarioError(f"unknown policy variant {variant!r}; available here: {', '.join(known)}")
            entries = [e for e in entries if e.policy_variant == variant]
        if patterns:
            entries = [e for e in entries if any(fnmatch.fnmatchcase(e.name, p) for p in patterns)]
            if not entries and len(patterns) == 1 and not any(c in patterns[0] for c in "*?["):
                self.entry(patterns[0])  # a plain unknown name: raise with close matches
        return entries


@functools.cache
def default_registry() -> Registry:
    return Registry()


def get_scenario(name: str) -> Scenario:
    return default_registry().get(name)


def select_scenarios(pattern: str | Iterable[str] | None = None, domain: str | None = None,
                     split: str | None = None, variant: str | None = None) -> list[ScenarioEntry]:
    return default_registry().select(pattern, domain=domain, split=split, variant=variant)


__all__ = ["Registry", "ScenarioEntry", "UnknownScenarioError", "default_registry", "get_scenario",
           "select_scenarios", "domain_spec", "ALL_TASKS_SPLIT"]

"""The evaluation set of faulty-customer phrasings: hand-written sentences and grammar paraphrases,
each with a frozen dev/test split.

Why it exists: the audit's accuracy must be measured on words written apart from the rules that
read them. The sources (``phrasings/claims.txt``, ``phrasings/faults.txt``, ``phrasings/grammar.json``)
were written for this set only; :func:`freeze` turns them into ``phrasings/frozen/*.jsonl`` with an
id and a split per item, and the SHA-256 of every file goes into this folder's README. The split of
an item is decided by the SHA-256 of its id (of its *template's* id for a grammar expansion, so all
paraphrases of one template stay on one side): about 30% dev, 70% test.

Run ``python -m tests.audit_eval.eval_set --freeze`` only to (re)write the frozen files from the
sources; the test checks the frozen files equal a fresh expansion and match the manifest.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

HERE = Path(__file__).parent
SOURCES = HERE / "phrasings"
FROZEN = SOURCES / "frozen"
FROZEN_FILES = ("claims.jsonl", "faults.jsonl")
SOURCE_FILES = ("claims.txt", "faults.txt", "grammar.json")
DEV_PERCENT = 30
CAP_PER_TEMPLATE = 24
"""At most this many expansions of one template (per claim value), taken evenly over its products."""

Split = Literal["dev", "test"]
RUNTIME_SLOTS = frozenset({"setting", "claim"})
"""Slots the customer fills during a conversation (the asked setting, a claim sentence)."""

FAULT_CLASSES = ("unasked_action", "fake_done", "ignored_request", "bundled", "wrong_action", "hang_up",
                 "invented_constraint", "misreport", "state_without_tool", "new_problem")
"""The issue's fault classes, in this set's own names (the measurement maps them to the audit's)."""


class Phrasing(BaseModel):
    """One sentence (or frame) of the set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable id: h.* hand-written (kind.type.n), g.* grammar (template id + #n).")
    split_key: str = Field(description="What the split hashes: the id itself, or a grammar expansion's template id.")
    split: Split = Field(description="dev or test, from sha256(split_key).")
    source: Literal["hand", "grammar"] = Field(description="Written by hand or expanded from a template.")
    kind: Literal["claim", "fault"] = Field(description="A claim about the phone, or a fault class's phrasing.")
    type: str = Field(description="Claim type (airplane_mode, signal, ...) or fault class (fake_done, ...).")
    variant: str = Field(description="Claim value (on, off, 3g_only, ...) or fault variant (leave, fixed, -).")
    voice: str = Field(description="terse / chatty / non-native / hedged / frustrated / elderly; 'grammar' for expansions.")
    text: str = Field(description="The words; {setting} and {claim} are filled in during a conversation.")


def split_of(key: str) -> Split:
    """The frozen split rule: the first 8 bytes of sha256(key), mod 100, below 30 is dev."""
    return "dev" if int(hashlib.sha256(key.encode()).hexdigest()[:16], 16) % 100 < DEV_PERCENT else "test"


def _hand(path: Path, kind: Literal["claim", "fault"]) -> list[Phrasing]:
    out: list[Phrasing] = []
    counts: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split("|", 3)
        if len(parts) != 4:
            raise ValueError(f"{path.name}:{number}: expected type|variant|voice|text, got {line!r}")
        type_, variant, voice, text = (p.strip() for p in parts)
        if kind == "fault" and type_ not in FAULT_CLASSES:
            raise ValueError(f"{path.name}:{number}: unknown fault class {type_!r}")
        group = f"{type_}.{variant}" if variant != "-" else type_
        counts[group] = counts.get(group, 0) + 1
        pid = f"h.{kind}.{group}.{counts[group]:02d}"
        out.append(Phrasing(id=pid, split_key=pid, split=split_of(pid), source="hand", kind=kind, type=type_,
                            variant=variant, voice=voice, text=text))
    return out


_SLOT = re.compile(r"\{(\w+)\}")


def _tidy(text: str) -> str:
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"\s+([.,!?:])", r"\1", text)
    return text[:1].upper() + text[1:] if text and text[0] != "{" else text


def expand(template: str, slots: dict[str, list[str]], cap: int = CAP_PER_TEMPLATE) -> list[str]:
    """Every filling of the template's grammar slots (runtime slots kept), deduplicated, in a fixed
    order, thinned evenly to at most ``cap``: deterministic, so the frozen files can be rebuilt."""
    names = [n for n in dict.fromkeys(_SLOT.findall(template)) if n not in RUNTIME_SLOTS]
    missing = [n for n in names if n not in slots]
    if missing:
        raise ValueError(f"template {template!r} uses unknown slots {missing}")
    seen: dict[str, None] = {}
    for combo in itertools.product(*(slots[n] for n in names)):
        text = template
        for name, word in zip(names, combo):
            text = text.replace("{" + name + "}", word)
        seen.setdefault(_tidy(text), None)
    texts = list(seen)
    if len(texts) <= cap:
        return texts
    step = len(texts) / cap
    return [texts[int(i * step)] for i in range(cap)]


def _grammar(path: Path) -> tuple[list[Phrasing], list[Phrasing]]:
    g = json.loads(path.read_text(encoding="utf-8"))
    shared: dict[str, list[str]] = g["shared"]
    claims: list[Phrasing] = []
    for ctype, spec in g["claims"].items():
        for t_index, template in enumerate(spec["templates"]):
            key = f"g.claim.{ctype}.t{t_index}"
            for value, words in spec["values"].items():
                slots = {**shared, "setting": spec["setting"], "v": words}
                template_v = template.replace("{setting}", "{setting_}")
                slots["setting_"] = spec["setting"]
                for n, text in enumerate(expand(template_v, slots)):
                    claims.append(Phrasing(id=f"{key}.{value}#{n:03d}", split_key=key, split=split_of(key),
                                           source="grammar", kind="claim", type=ctype, variant=value,
                                           voice="grammar", text=text))
    faults: list[Phrasing] = []
    for name, templates in g["faults"].items():
        cls, _, variant = name.partition(":")
        if cls not in FAULT_CLASSES:
            raise ValueError(f"grammar.json: unknown fault class {cls!r}")
        for t_index, template in enumerate(templates):
            key = f"g.fault.{name.replace(':', '.')}.t{t_index}"
            for n, text in enumerate(expand(template, shared)):
                faults.append(Phrasing(id=f"{key}#{n:03d}", split_key=key, split=split_of(key), source="grammar",
                                       kind="fault", type=cls, variant=variant or "-", voice="grammar", text=text))
    return claims, faults


def build() -> dict[str, list[Phrasing]]:
    """The whole set from the sources: file name -> items."""
    g_claims, g_faults = _grammar(SOURCES / "grammar.json")
    return {"claims.jsonl": [*_hand(SOURCES / "claims.txt", "claim"), *g_claims],
            "faults.jsonl": [*_hand(SOURCES / "faults.txt", "fault"), *g_faults]}


def render(items: list[Phrasing]) -> str:
    return "".join(json.dumps(p.model_dump(), ensure_ascii=False, sort_keys=True) + "\n" for p in items)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def manifest() -> dict[str, str]:
    """Relative path -> SHA-256 of every source and frozen file."""
    paths = [SOURCES / n for n in SOURCE_FILES] + [FROZEN / n for n in FROZEN_FILES]
    return {str(p.relative_to(HERE)): sha256_file(p) for p in paths}


def freeze() -> dict[str, str]:
    """Write the frozen files from the sources; their manifest."""
    FROZEN.mkdir(exist_ok=True)
    for name, items in build().items():
        (FROZEN / name).write_text(render(items), encoding="utf-8")
    return manifest()


@lru_cache(maxsize=None)
def load(split: Split | None = None) -> tuple[Phrasing, ...]:
    """The frozen items (of one split, when given). Reads the frozen files, never the sources."""
    if split not in (None, "dev", "test"):
        raise ValueError(f"split must be 'dev' or 'test', got {split!r}")
    items: list[Phrasing] = []
    for name in FROZEN_FILES:
        for line in (FROZEN / name).read_text(encoding="utf-8").splitlines():
            items.append(Phrasing.model_validate_json(line))
    return tuple(p for p in items if split is None or p.split == split)


if __name__ == "__main__":
    if sys.argv[1:] != ["--freeze"]:
        sys.exit("usage: python -m tests.audit_eval.eval_set --freeze")
    for path, digest in freeze().items():
        print(f"| `{path}` | `{digest}` |")

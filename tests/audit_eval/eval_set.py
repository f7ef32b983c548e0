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

The holdout set (``holdout/``, issue 38) is a second, independent set written after the first was
used for tuning: its own hand-written claims, faithful reports and fault phrasings, its own grammar,
every item in split ``holdout`` (test only, nobody tunes on it). ``load("holdout")`` reads it;
``python -m tests.audit_eval.eval_set --freeze-holdout`` (re)writes its frozen files.

The talk set (``talk/``) is a third, independent set: faithful talk (negations of one's situation or
means, hedges, questions, conditionals, reported results, circumstances, small talk) and fault phrasings
in the same voices, with its own frozen dev/test split by the same sha256 rule. ``load("talk-dev")``,
``load("talk-test")`` and ``load("talk")`` read it; ``python -m tests.audit_eval.eval_set --freeze-talk``
(re)writes its frozen files.

The talk2 set (``talk2/``) is a fourth, independent set in the talk set's formats, written later by someone who
had not read the detectors, every item a test item (no dev side): ``load("talk2")`` reads it;
``python -m tests.audit_eval.eval_set --freeze-talk2`` (re)writes its frozen files. The loader, the expander and
the freezer are the talk set's, taking the set (:data:`TALK_SETS`).

The talk3 set (``talk3/``) is a fifth, independent set in the same formats, written after talk2 (which is to be used
for tuning) by someone who had not read the detectors, every item a test item: ``load("talk3")`` reads it;
``python -m tests.audit_eval.eval_set --freeze-talk3`` (re)writes its frozen files.

The talk4 set (``talk4/``) is a sixth, independent set in the same formats, written after talk3 by someone who had not
read the detectors, every item a test item: ``load("talk4")`` reads it; ``python -m tests.audit_eval.eval_set
--freeze-talk4`` (re)writes its frozen files.

The talk5 set (``talk5/``) is a seventh, independent set in the same formats, written after talk4 by someone who had
not read the detectors, every item a test item: ``load("talk5")`` reads it; ``python -m tests.audit_eval.eval_set
--freeze-talk5`` (re)writes its frozen files.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
import sys
from dataclasses import dataclass
from functools import cache, lru_cache
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
SetSplit = Literal["dev", "test", "holdout", "talk", "talk-dev", "talk-test", "talk2", "talk3", "talk4", "talk5"]
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
def load(split: SetSplit | None = None) -> tuple[Phrasing, ...]:
    """The frozen items (of one split, when given; None: the whole first set, dev and test). Reads the
    frozen files, never the sources. ``holdout`` is the separate holdout set (its own files)."""
    if split == "holdout":
        return tuple(HoldoutPhrasing.model_validate_json(line) for name in HOLDOUT_FILES
                     for line in (HOLDOUT_FROZEN / name).read_text(encoding="utf-8").splitlines())
    if split in ALL_TALK_SPLITS:
        return load_talk(split)
    if split not in (None, "dev", "test"):
        raise ValueError(f"split must be 'dev', 'test', 'holdout' or one of {TALK_SPLITS}, {TALK2_SPLITS}, "
                         f"{TALK3_SPLITS}, {TALK4_SPLITS} or {TALK5_SPLITS}, got {split!r}")
    items: list[Phrasing] = []
    for name in FROZEN_FILES:
        for line in (FROZEN / name).read_text(encoding="utf-8").splitlines():
            items.append(Phrasing.model_validate_json(line))
    return tuple(p for p in items if split is None or p.split == split)


# ----------------------------------------------------------------- the holdout set
HOLDOUT = HERE / "holdout"
HOLDOUT_FROZEN = HOLDOUT / "frozen"
HOLDOUT_SOURCES = ("claims.txt", "reports.txt", "faults.txt", "grammar.json")
HOLDOUT_FILES = ("claims.jsonl", "reports.jsonl", "faults.jsonl")
HOLDOUT_VOICES = ("terse", "chatty", "non-native", "hedged", "frustrated", "elderly", "texting")
FORMS = ("direct", "indirect", "negation", "symptom")
"""How a claim or report says it: names the setting and value, says what is seen, says what it is not,
or names an effect (symptoms: only for a state claimed without a tool, never for a misreport)."""
CLAIM_VALUES: dict[str, tuple[str, ...]] = {
    "airplane_mode": ("on", "off"), "mobile_data": ("on", "off"), "roaming": ("on", "off"),
    "wifi_calling": ("on", "off"), "network_mode": ("4g_5g_preferred", "4g_only", "3g_only", "2g_only"),
    "signal": ("none", "poor", "fair", "good", "excellent"), "sim": ("active", "missing", "locked_pin", "locked_puk"),
    "apn": ("default", "broken"), "vpn": ("on", "off"), "app_permission": ("granted", "missing"),
    "data_saver": ("on", "off"), "mms": ("can", "cannot"), "payment": ("request", "none", "paid"),
    "line": ("active", "suspended"), "wifi": ("on", "off"), "speed": ("fast", "slow")}
"""Every claim type the customer knows (``readings.CLAIM_KEYWORDS``) and its values in the holdout set:
the values ``readings.readings`` gives, and for the APN and the line (no phone tool reads them) two of
their own."""
UNREAD_TYPES = ("apn", "line")
"""Claim types no phone tool result shows: no faithful report can be about them."""
REPORT_VALUES: dict[str, tuple[str, ...]] = {
    **{t: v for t, v in CLAIM_VALUES.items() if t not in UNREAD_TYPES}, "ack": ("write", "read")}
FAULT_GROUPS = ("unasked_action", "fake_done", "ignored_request", "bundled", "wrong_action:sibling",
                "wrong_action:arguments", "hang_up:leave", "hang_up:fixed", "invented_constraint", "misreport",
                "state_without_tool", "new_problem")
"""Fault class, or class:variant where the words differ by variant."""


class HoldoutPhrasing(Phrasing):
    """One sentence (or frame) of the holdout set."""

    split: Literal["holdout"] = Field(description="Always holdout: the whole set is test-only.")
    kind: Literal["claim", "report", "fault"] = Field(
        description="A claim about the phone, a true report of a tool result, or a fault class's phrasing.")
    form: str = Field(description="Claims and reports: direct / indirect / negation / symptom; '-' otherwise.")


def _holdout_item(pid: str, key: str, source: str, kind: str, type_: str, variant: str, voice: str, form: str,
                  text: str) -> HoldoutPhrasing:
    return HoldoutPhrasing(id=pid, split_key=key, split="holdout", source=source, kind=kind,  # type: ignore[arg-type]
                           type=type_, variant=variant, voice=voice, form=form, text=text)


def _holdout_hand(path: Path, kind: Literal["claim", "report", "fault"]) -> list[HoldoutPhrasing]:
    fields = 4 if kind == "fault" else 5
    out: list[HoldoutPhrasing] = []
    counts: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", fields - 1)]
        where = f"holdout/{path.name}:{number}"
        if len(parts) != fields:
            raise ValueError(f"{where}: expected {fields} fields separated by |, got {line!r}")
        if kind == "fault":
            (type_, variant, voice, text), form = parts, "-"
            group = type_ if variant == "-" else f"{type_}:{variant}"
            if group not in FAULT_GROUPS:
                raise ValueError(f"{where}: unknown fault class or variant {group!r}")
        else:
            type_, variant, voice, form, text = parts
            values = (CLAIM_VALUES if kind == "claim" else REPORT_VALUES).get(type_, ())
            if variant not in values:
                raise ValueError(f"{where}: unknown {kind} {type_}|{variant}")
            if form not in FORMS and not (type_ == "ack" and form == "-"):
                raise ValueError(f"{where}: form must be one of {FORMS}, got {form!r}")
        if voice not in HOLDOUT_VOICES:
            raise ValueError(f"{where}: voice must be one of {HOLDOUT_VOICES}, got {voice!r}")
        group = f"{type_}.{variant}" if variant != "-" else type_
        counts[group] = counts.get(group, 0) + 1
        pid = f"ho.h.{kind}.{group}.{counts[group]:02d}"
        out.append(_holdout_item(pid, pid, "hand", kind, type_, variant, voice, form, text))
    return out


def _sample(template: str, slots: dict[str, list[str]], cap: int, key: str) -> list[str]:
    """Every filling of a holdout template, a capital after each full stop, question or exclamation mark
    (slots are written in lower case), then ``cap`` of them drawn by the SHA-256 of the template's key and
    the text (deterministic, and spread over all slots rather than along the first), kept in order."""
    texts = [re.sub(r"([.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), t)
             for t in expand(template, slots, cap=sys.maxsize)]
    texts = list(dict.fromkeys(texts))
    keep = set(sorted(texts, key=lambda t: hashlib.sha256(f"{key}|{t}".encode()).hexdigest())[:cap])
    return [t for t in texts if t in keep]


def _holdout_grammar(path: Path) -> dict[str, list[HoldoutPhrasing]]:
    g = json.loads(path.read_text(encoding="utf-8"))
    out: dict[str, list[HoldoutPhrasing]] = {"claim": [], "report": [], "fault": []}
    if set(g["types"]) != set(CLAIM_VALUES):
        raise ValueError(f"holdout/grammar.json: types must be exactly {sorted(CLAIM_VALUES)}")
    for ctype, spec in g["types"].items():
        if set(spec["values"]) != set(CLAIM_VALUES[ctype]):
            raise ValueError(f"holdout/grammar.json: {ctype} values must be exactly {CLAIM_VALUES[ctype]}")
        for kind in ("claim", "report"):
            if kind == "report" and ctype in UNREAD_TYPES:
                continue
            for t_index, template in enumerate(spec.get(f"{kind}_templates", g[f"{kind}_templates"])):
                key = f"ho.g.{kind}.{ctype}.t{t_index}"
                for value, value_slots in spec["values"].items():
                    slots = {**g["shared"], **spec["slots"], **value_slots}
                    for n, text in enumerate(_sample(template["t"], slots, g["cap_claims"], f"{key}.{value}")):
                        out[kind].append(_holdout_item(f"{key}.{value}#{n:03d}", key, "grammar", kind, ctype, value,
                                                       "grammar", template["form"], text))
    for name, templates in g["faults"].items():
        if name not in FAULT_GROUPS:
            raise ValueError(f"holdout/grammar.json: unknown fault class or variant {name!r}")
        cls, _, variant = name.partition(":")
        for t_index, template in enumerate(templates):
            key = f"ho.g.fault.{name.replace(':', '.')}.t{t_index}"
            for n, text in enumerate(_sample(template, {**g["shared"], **g["fault_slots"]}, g["cap_faults"], key)):
                out["fault"].append(_holdout_item(f"{key}#{n:03d}", key, "grammar", "fault", cls, variant or "-",
                                                  "grammar", "-", text))
    return out


def build_holdout() -> dict[str, list[HoldoutPhrasing]]:
    """The whole holdout set from its sources: file name -> items."""
    grammar = _holdout_grammar(HOLDOUT / "grammar.json")
    return {f"{kind}s.jsonl": [*_holdout_hand(HOLDOUT / f"{kind}s.txt", kind), *grammar[kind]]  # type: ignore[arg-type]
            for kind in ("claim", "report", "fault")}


def holdout_manifest() -> dict[str, str]:
    """Path relative to ``holdout/`` -> SHA-256 of every holdout source and frozen file."""
    paths = [HOLDOUT / n for n in HOLDOUT_SOURCES] + [HOLDOUT_FROZEN / n for n in HOLDOUT_FILES]
    return {str(p.relative_to(HOLDOUT)): sha256_file(p) for p in paths}


def freeze_holdout() -> dict[str, str]:
    """Write the holdout's frozen files from its sources; their manifest."""
    HOLDOUT_FROZEN.mkdir(exist_ok=True)
    for name, items in build_holdout().items():
        (HOLDOUT_FROZEN / name).write_text(render(items), encoding="utf-8")  # type: ignore[arg-type]
    return holdout_manifest()


# ----------------------------------------------------------------- the talk sets
TALK = HERE / "talk"
TALK_FROZEN = TALK / "frozen"
TALK_SOURCES = ("faithful.txt", "reports.txt", "claims.txt", "faults.txt", "grammar.json")
TALK_FILES = ("talk.jsonl", "reports.jsonl", "claims.jsonl", "faults.jsonl")
TALK_SPLITS = ("talk", "talk-dev", "talk-test")
"""``talk``: the whole talk set; ``talk-dev`` / ``talk-test``: its frozen dev / test items."""
TALK_VOICES = ("plain", "chatty", "terse", "non-native", "weary", "elderly", "texting", "formal")
TALK_CONTEXTS = ("symptom", "open", "after", "more", "close", "quote", "nosuch")
"""Where a faithful line is said (``talk/faithful.txt`` explains each)."""
TALK_FORMS = ("negation", "hedge", "question", "conditional", "reported", "situation", "smalltalk")
"""How a faithful line talks."""
REPORT_FORMS = ("reported", "negation", "hedge")
CLAIM_FORMS = ("direct", "negation", "hedge", "reported")
FAULT_FORMS = ("direct", "negation", "hedge", "question", "smalltalk", "situation")
TALK_FAULT_GROUPS = ("unasked_action", "fake_done", "ignored_request", "bundled", "wrong_action:sibling",
                     "wrong_action:arguments", "hang_up:leave", "hang_up:fixed", "invented_constraint", "misreport",
                     "state_without_tool:alone", "state_without_tool:with_call", "new_problem")
"""Fault class, or class:variant where the words differ by variant (a state said on its own, or in the
message that performs the asked step)."""
FACT_KEYS = ("any", "mms", "data", "service", "abroad", "home", "nowifi", "plan", "speedgoal", "fresh", "mms:write",
             "data:write", "service:write", "speedtest=failed", "speedtest=notexcellent")
"""Keys of a faithful line that are facts of the task or of the conversation (the others: ``about=<type>``
and ``<type>=<value>``)."""
TALK_RUNTIME = frozenset({"setting", "claim", "result"})

TALK2 = HERE / "talk2"
TALK2_FROZEN = TALK2 / "frozen"
TALK2_SPLITS = ("talk2",)
"""``talk2``: the whole second talk set, every item a test item (it has no dev side)."""
TALK2_VOICES = (*TALK_VOICES, "rambling", "anxious", "blunt")
TALK2_FORMS = (*TALK_FORMS, "doubleneg", "correction", "ramble")
"""The talk forms, and: a double negative, a speaker correcting itself, a long rambling turn."""
TALK2_REPORT_FORMS = (*REPORT_FORMS, "correction", "quoted")
TALK2_CLAIM_FORMS = (*CLAIM_FORMS, "doubleneg", "correction", "question")
"""A claim that is a question in statement form ("So roaming's off, yeah.") still commits to its value."""
TALK2_FAULT_FORMS = (*FAULT_FORMS, "conditional", "reported", "correction", "ramble")

TALK3 = HERE / "talk3"
TALK3_FROZEN = TALK3 / "frozen"
TALK3_SPLITS = ("talk3",)
"""``talk3``: the whole third talk set, every item a test item (it has no dev side)."""
TALK3_VOICES = (*TALK2_VOICES, "british", "indian", "nigerian", "australian", "teen", "codeswitch")
TALK3_FORMS = (*TALK2_FORMS, "contrast", "counterfactual", "intention", "others", "timeshift", "tag", "ellipsis",
               "list", "idiom", "interrupted", "numbers")
"""The talk2 forms, and: a contrast ("it's meant to work, but"), a counterfactual, an intention or plan, another
person's phone, a time shift, a tag question, an ellipsis, a list, an idiom, a sentence broken off, numbers said
in words."""
TALK3_REPORT_FORMS = (*TALK2_REPORT_FORMS, "tag", "ellipsis", "contrast", "timeshift")
TALK3_CLAIM_FORMS = (*TALK2_CLAIM_FORMS, "tag", "ellipsis", "contrast", "counterfactual", "intention", "timeshift",
                     "others")
"""A claim put as a tag question, an ellipsis, a counterfactual or a plan that presumes the state, or another
person's word, still commits to its value."""
TALK3_FAULT_FORMS = (*TALK2_FAULT_FORMS, "polite", "indirect", "tag", "ellipsis", "intention", "timeshift", "list",
                     "idiom", "contrast", "counterfactual", "others")

TALK4 = HERE / "talk4"
TALK4_FROZEN = TALK4 / "frozen"
TALK4_SPLITS = ("talk4",)
"""``talk4``: the whole fourth talk set, every item a test item (it has no dev side)."""
TALK4_VOICES = (*TALK3_VOICES, "scottish", "irish", "southern", "jamaican", "singlish", "spanish", "techie", "distracted")
"""The talk3 voices, and: Scottish, Irish, American Southern, Jamaican and Singaporean English, a Spanish speaker's
English, a technical caller, a caller busy with something else."""
TALK4_FORMS = (*TALK3_FORMS, "existential", "emotion", "complaint", "noise", "repeat", "spelling", "confusion", "mishear",
               "pause", "activity", "minimal")
"""The talk3 forms, and: "there's no ..." / "nothing's ...", a feeling, a complaint about the company, background
noise, asking the agent to repeat, spelling out or reading out, confusion about an instruction, a misheard word, a
long pause ("hang on... okay"), what the caller was doing, a very short turn."""
TALK4_REPORT_FORMS = (*TALK3_REPORT_FORMS, "pause", "minimal", "emotion", "list", "spelling")
TALK4_CLAIM_FORMS = (*TALK3_CLAIM_FORMS, "passing", "presupposed", "pause", "emotion", "existential", "complaint")
"""A claim said in passing ("..., by the way"), presupposed ("Seeing as ..."), after a pause, with a feeling, as
"there's no ..." or inside a complaint still commits to its value."""
TALK4_FAULT_FORMS = (*TALK3_FAULT_FORMS, "pause", "emotion", "complaint", "noise", "passing", "presupposed", "minimal",
                     "mishear", "activity", "interrupted")

TALK5 = HERE / "talk5"
TALK5_FROZEN = TALK5 / "frozen"
TALK5_SPLITS = ("talk5",)
"""``talk5``: the whole fifth talk set, every item a test item (it has no dev side)."""
TALK5_VOICES = (*TALK4_VOICES, "welsh", "kiwi", "southafrican", "filipino", "german", "academic", "sarcastic")
"""The talk4 voices, and: Welsh and New Zealand English, South African English, a Filipino caller's English, a German
speaker's English, a wordy academic caller, a dry sarcastic caller."""
TALK5_FORMS = (*TALK4_FORMS, "describe", "tried", "expect", "meaning", "aloud", "readout", "count", "repair", "humour",
               "apology")
"""The talk4 forms, and: what the caller sees and does not see, what it tried before calling, what it expected,
asking what a word means, thinking aloud, reading something out, counting, a hesitation and repair, a joke, an
apology."""
TALK5_REPORT_FORMS = (*TALK4_REPORT_FORMS, "readout", "repair", "aloud")
TALK5_CLAIM_FORMS = (*TALK4_CLAIM_FORMS, "readout", "repair", "tried", "aloud", "aside")
"""A claim read out from a screen no tool showed, said with a repair, as something the caller did before calling, while
thinking aloud, or as an aside in brackets still commits to its value."""
TALK5_FAULT_FORMS = (*TALK4_FAULT_FORMS, "readout", "repair", "aloud", "aside", "tried", "expect", "humour", "apology")


@dataclass(frozen=True)
class TalkSet:
    """One talk set: its folder, the prefix of its ids, the splits it is loaded by, its forms and voices, and
    whether it has the frozen sha256 dev / test split (the talk set) or is test only (talk2, talk3, talk4, talk5)."""

    name: str
    folder: Path
    prefix: str
    splits: tuple[str, ...]
    has_dev: bool
    voices: tuple[str, ...]
    forms: tuple[str, ...]
    report_forms: tuple[str, ...]
    claim_forms: tuple[str, ...]
    fault_forms: tuple[str, ...]

    @property
    def frozen(self) -> Path:
        return self.folder / "frozen"

    def split_of(self, key: str) -> Split:
        return split_of(key) if self.has_dev else "test"


TALK_SETS = {
    "talk": TalkSet("talk", TALK, "tk", TALK_SPLITS, True, TALK_VOICES, TALK_FORMS, REPORT_FORMS, CLAIM_FORMS,
                    FAULT_FORMS),
    "talk2": TalkSet("talk2", TALK2, "t2", TALK2_SPLITS, False, TALK2_VOICES, TALK2_FORMS, TALK2_REPORT_FORMS,
                     TALK2_CLAIM_FORMS, TALK2_FAULT_FORMS),
    "talk3": TalkSet("talk3", TALK3, "t3", TALK3_SPLITS, False, TALK3_VOICES, TALK3_FORMS, TALK3_REPORT_FORMS,
                     TALK3_CLAIM_FORMS, TALK3_FAULT_FORMS),
    "talk4": TalkSet("talk4", TALK4, "t4", TALK4_SPLITS, False, TALK4_VOICES, TALK4_FORMS, TALK4_REPORT_FORMS,
                     TALK4_CLAIM_FORMS, TALK4_FAULT_FORMS),
    "talk5": TalkSet("talk5", TALK5, "t5", TALK5_SPLITS, False, TALK5_VOICES, TALK5_FORMS, TALK5_REPORT_FORMS,
                     TALK5_CLAIM_FORMS, TALK5_FAULT_FORMS),
}
"""The talk sets by name. Each has the same file formats; the customer (``customer.TalkCustomer``) plays any."""
ALL_TALK_SPLITS = tuple(s for ts in TALK_SETS.values() for s in ts.splits)


def talk_set_of(split: str) -> TalkSet:
    """The talk set a split belongs to."""
    for ts in TALK_SETS.values():
        if split in ts.splits:
            return ts
    raise ValueError(f"split must be one of {TALK_SPLITS}, {TALK2_SPLITS}, {TALK3_SPLITS}, {TALK4_SPLITS} or {TALK5_SPLITS}, "
                     f"got {split!r}")


class TalkPhrasing(Phrasing):
    """One sentence (or frame) of a talk set. A faithful line has kind ``talk``, its context as ``type``
    and its key as ``variant``."""

    kind: Literal["talk", "report", "claim", "fault"] = Field(  # type: ignore[assignment]
        description="A faithful line, a true report of a tool result, a claim (a fault's words), a fault's phrasing.")
    form: str = Field(description="How it talks (the talk, report, claim and fault forms); '-': an acknowledgement.")


def valid_talk_key(key: str) -> bool:
    """A faithful line's key: a fact, ``about=<claim type>``, or ``<claim type>=<value>``."""
    if key in FACT_KEYS:
        return True
    name, _, value = key.partition("=")
    if name == "about":
        return value in CLAIM_VALUES
    return value in CLAIM_VALUES.get(name, ())


def _talk_item(pid: str, key: str, source: str, kind: str, type_: str, variant: str, voice: str, form: str,
               text: str, ts: TalkSet = TALK_SETS["talk"]) -> TalkPhrasing:
    return TalkPhrasing(id=pid, split_key=key, split=ts.split_of(key), source=source, kind=kind,  # type: ignore[arg-type]
                        type=type_, variant=variant, voice=voice, form=form, text=text)


def _talk_hand(path: Path, kind: Literal["talk", "report", "claim", "fault"],
               ts: TalkSet = TALK_SETS["talk"]) -> list[TalkPhrasing]:
    out: list[TalkPhrasing] = []
    counts: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split("|", 4)]
        where = f"{ts.name}/{path.name}:{number}"
        if len(parts) != 5:
            raise ValueError(f"{where}: expected 5 fields separated by |, got {line!r}")
        if kind == "talk":
            type_, variant, form, voice, text = parts
            if type_ not in TALK_CONTEXTS or not valid_talk_key(variant) or form not in ts.forms:
                raise ValueError(f"{where}: bad context, key or form in {line!r}")
        elif kind == "fault":
            type_, variant, voice, form, text = parts
            group = type_ if variant == "-" else f"{type_}:{variant}"
            if group not in TALK_FAULT_GROUPS or form not in ts.fault_forms:
                raise ValueError(f"{where}: unknown fault class, variant or form in {line!r}")
        else:
            type_, variant, form, voice, text = parts
            values = (CLAIM_VALUES if kind == "claim" else REPORT_VALUES).get(type_, ())
            forms = ts.claim_forms if kind == "claim" else (("-",) if type_ == "ack" else ts.report_forms)
            if variant not in values or form not in forms:
                raise ValueError(f"{where}: unknown {kind} {type_}|{variant} or form {form!r}")
        if voice not in ts.voices:
            raise ValueError(f"{where}: voice must be one of {ts.voices}, got {voice!r}")
        group = f"{type_}.{variant}" if variant != "-" else type_
        counts[group] = counts.get(group, 0) + 1
        pid = f"{ts.prefix}.h.{kind}.{group}.{counts[group]:02d}"
        out.append(_talk_item(pid, pid, "hand", kind, type_, variant, voice, form, text, ts))
    return out


def _talk_sample(template: str, slots: dict[str, list[str]], cap: int, key: str) -> list[str]:
    """Every filling of a talk template (the runtime slots {setting}, {claim} and {result} kept), tidied and
    capitalised after a full stop, question or exclamation mark; then ``cap`` of them drawn by the SHA-256 of
    the key and the text, kept in order (as the holdout's ``_sample``, with {result} kept too)."""
    names = [n for n in dict.fromkeys(_SLOT.findall(template)) if n not in TALK_RUNTIME]
    missing = [n for n in names if n not in slots]
    if missing:
        raise ValueError(f"talk template {template!r} uses unknown slots {missing}")
    texts: dict[str, None] = {}
    for combo in itertools.product(*(slots[n] for n in names)):
        text = template
        for name, word in zip(names, combo):
            text = text.replace("{" + name + "}", word)
        text = re.sub(r"([.?!] )([a-z])", lambda m: m.group(1) + m.group(2).upper(), _tidy(text))
        texts.setdefault(text, None)
    keep = set(sorted(texts, key=lambda t: hashlib.sha256(f"{key}|{t}".encode()).hexdigest())[:cap])
    return [t for t in texts if t in keep]


def _talk_grammar(path: Path, ts: TalkSet = TALK_SETS["talk"]) -> dict[str, list[TalkPhrasing]]:
    g = json.loads(path.read_text(encoding="utf-8"))
    caps, shared, where, p = g["caps"], g["shared"], f"{ts.name}/grammar.json", ts.prefix
    out: dict[str, list[TalkPhrasing]] = {"talk": [], "report": [], "claim": [], "fault": []}
    if set(g["types"]) != set(CLAIM_VALUES):
        raise ValueError(f"{where}: types must be exactly {sorted(CLAIM_VALUES)}")
    for t_index, spec in enumerate(g["talk"]):
        key = f"{p}.g.talk.{spec['context']}.t{t_index}"
        if spec["context"] not in TALK_CONTEXTS or spec["form"] not in ts.forms:
            raise ValueError(f"{where}: talk template {t_index}: bad context or form")
        targets = ([(f"about={c}", {"topic": t["topic"]}) for c, t in g["types"].items()]
                   if spec["key"] == "about={type}" else [(spec["key"], {})])
        for talk_key, extra in targets:
            if not valid_talk_key(talk_key):
                raise ValueError(f"{where}: talk template {t_index}: bad key {talk_key!r}")
            split_key = f"{key}.{talk_key}" if extra else key  # one template per setting, as a claim template
            for n, text in enumerate(_talk_sample(spec["t"], {**shared, **extra}, caps["talk"], f"{key}.{talk_key}")):
                out["talk"].append(_talk_item(f"{key}.{talk_key}#{n:03d}", split_key, "grammar", "talk",
                                              spec["context"], talk_key, "grammar", spec["form"], text, ts))
    for kind, forms in (("report", ts.report_forms), ("claim", ts.claim_forms)):
        for t_index, spec in enumerate(g[f"{kind}s"]):
            key = f"{p}.g.{kind}.t{t_index}"  # split key: per template and claim type, as in the other sets
            if spec["form"] not in forms:
                raise ValueError(f"{where}: {kind} template {t_index}: bad form {spec['form']!r}")
            used = set(_SLOT.findall(spec["t"]))
            for ctype, tspec in g["types"].items():
                if kind == "report" and ctype in UNREAD_TYPES:
                    continue
                for value, vslots in tspec["values"].items():
                    if value not in CLAIM_VALUES[ctype]:
                        raise ValueError(f"{where}: {ctype} has no value {value!r}")
                    slots = {**shared, "name": tspec["name"], **vslots}
                    if not used <= set(slots):
                        continue
                    for n, text in enumerate(_talk_sample(spec["t"], slots, caps[kind], f"{key}.{ctype}.{value}")):
                        out[kind].append(_talk_item(f"{key}.{ctype}.{value}#{n:03d}", f"{key}.{ctype}", "grammar",
                                                    kind, ctype, value, "grammar", spec["form"], text, ts))
    for name, templates in g["faults"].items():
        if name not in TALK_FAULT_GROUPS:
            raise ValueError(f"{where}: unknown fault class or variant {name!r}")
        cls, _, variant = name.partition(":")
        for t_index, spec in enumerate(templates):
            if spec["form"] not in ts.fault_forms:
                raise ValueError(f"{where}: {name} template {t_index}: bad form {spec['form']!r}")
            key = f"{p}.g.fault.{name.replace(':', '.')}.t{t_index}"
            for n, text in enumerate(_talk_sample(spec["t"], {**shared, **g["fault_slots"]}, caps["fault"], key)):
                out["fault"].append(_talk_item(f"{key}#{n:03d}", key, "grammar", "fault", cls, variant or "-",
                                               "grammar", spec["form"], text, ts))
    return out


def build_talk(name: str = "talk") -> dict[str, list[TalkPhrasing]]:
    """A whole talk set (``talk``, ``talk2``, ``talk3``, ``talk4`` or ``talk5``) from its sources: file name -> items."""
    ts = TALK_SETS[name]
    grammar = _talk_grammar(ts.folder / "grammar.json", ts)
    sources = {"talk": "faithful.txt", "report": "reports.txt", "claim": "claims.txt", "fault": "faults.txt"}
    return {f"{kind}{'' if kind == 'talk' else 's'}.jsonl":
            [*_talk_hand(ts.folder / source, kind, ts), *grammar[kind]]  # type: ignore[arg-type]
            for kind, source in sources.items()}


def talk_manifest(name: str = "talk") -> dict[str, str]:
    """Path relative to the set's folder -> SHA-256 of every source and frozen file of a talk set."""
    ts = TALK_SETS[name]
    paths = [ts.folder / n for n in TALK_SOURCES] + [ts.frozen / n for n in TALK_FILES]
    return {str(p.relative_to(ts.folder)): sha256_file(p) for p in paths}


def freeze_talk(name: str = "talk") -> dict[str, str]:
    """Write a talk set's frozen files from its sources; their manifest."""
    ts = TALK_SETS[name]
    ts.frozen.mkdir(exist_ok=True)
    for file, items in build_talk(name).items():
        (ts.frozen / file).write_text(render(items), encoding="utf-8")  # type: ignore[arg-type]
    return talk_manifest(name)


@cache
def load_talk(split: str = "talk") -> tuple[TalkPhrasing, ...]:
    """A talk set's frozen items: the whole talk set (``talk``) or its dev or test split (``talk-dev``,
    ``talk-test``), or the whole talk2, talk3, talk4 or talk5 set (``talk2`` ... ``talk5``, all test). Reads the
    frozen files, never the sources."""
    if split not in ALL_TALK_SPLITS:
        raise ValueError(f"split must be one of {TALK_SPLITS}, {TALK2_SPLITS}, {TALK3_SPLITS}, {TALK4_SPLITS} or {TALK5_SPLITS}, "
                     f"got {split!r}")
    ts = talk_set_of(split)
    items = [TalkPhrasing.model_validate_json(line) for name in TALK_FILES
             for line in (ts.frozen / name).read_text(encoding="utf-8").splitlines()]
    side = split.partition("-")[2]
    return tuple(p for p in items if not side or p.split == side)


if __name__ == "__main__":
    commands = {"--freeze": freeze, "--freeze-holdout": freeze_holdout, "--freeze-talk": freeze_talk,
                "--freeze-talk2": lambda: freeze_talk("talk2"), "--freeze-talk3": lambda: freeze_talk("talk3"),
                "--freeze-talk4": lambda: freeze_talk("talk4"), "--freeze-talk5": lambda: freeze_talk("talk5")}
    if len(sys.argv) != 2 or sys.argv[1] not in commands:
        sys.exit("usage: python -m tests.audit_eval.eval_set --freeze | --freeze-holdout | --freeze-talk | "
                 "--freeze-talk2 | --freeze-talk3 | --freeze-talk4 | --freeze-talk5")
    for path, digest in commands[sys.argv[1]]().items():
        print(f"| `{path}` | `{digest}` |")

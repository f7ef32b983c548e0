"""Judge prompts as versioned data, and NL-assertion packs.

A judge prompt is a TOML file under ``data/judge_prompts`` with an id, a
version, a kind (``overall`` or ``nl``) and its text. Prompts are data so that
a prompt ablation is a change of files, not of code, and so that every verdict
can name exactly which text produced it: the *prompt hash* is taken over the
template rendered up to the transcript with the per-conversation slots left as
their ``{{slot}}`` markers (system text, the part before the transcript, the
part after it, the kind and the reply schema). Two prompts with the same id and
version but different text would be a silent ablation, so the registry refuses
duplicates, and each data folder records the hash every ``id@version`` was
released with (``released.json``): a file whose text no longer matches its
recorded hash is refused on load, so editing a shipped prompt means a new
version (and a new line in that file), never a silent change under an old name.

Every per-conversation value placed into a prompt (ticket, goal, NL
assertions) goes through :func:`~tauray.actors.judge.render.defuse`, the same
structural defusing as the transcript, so no channel into the prompt can carry
a verdict-shaped value.

An NL-assertion pack (``data/nl_packs``) maps scenario-name globs to extra
natural-language assertions and is versioned the same way.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import re
import tomllib
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tauray.actors.judge.parse import reply_schema
from tauray.actors.judge.render import defuse

PromptKind = Literal["overall", "nl"]

SLOTS: dict[PromptKind, frozenset[str]] = {
    "overall": frozenset({"ticket", "goal", "domain"}),
    "nl": frozenset({"ticket", "goal", "domain", "assertions"}),
}
_SLOT = re.compile(r"\{\{\s*([a-z_]+)\s*\}\}")
_ID = re.compile(r"^[a-z0-9][a-z0-9_.\-]*$")


class UnknownPromptError(KeyError):
    """A prompt or pack reference that names nothing registered."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


class JudgePrompt(BaseModel):
    """One judge prompt template, as loaded from its file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(description="Stable prompt id, e.g. overall-plain.")
    version: str = Field(description="Version of the text; a changed text must get a new version.")
    kind: PromptKind = Field(description="'overall' (did the agent resolve the problem) or 'nl' (per assertion).")
    description: str = Field(description="One line on what this prompt is for and how it differs.")
    system: str = Field(description="System message text.")
    before: str = Field(description="User-message text placed before the transcript; may use {{slots}}.")
    after: str = Field("", description="User-message text placed after the transcript; may use {{slots}}.")

    @field_validator("id", "version")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not _ID.match(value):
            raise ValueError(f"{value!r}: use lowercase letters, digits, '.', '_' and '-'")
        return value

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def prompt_hash(self) -> str:
        """Hash of the template up to (and around) the transcript, slots unfilled."""
        payload = json.dumps(
            {"kind": self.kind, "system": self.system, "before": self.before, "after": self.after,
             "schema": reply_schema(self.kind)},
            sort_keys=True, ensure_ascii=False,
        )
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def check_slots(self) -> None:
        for part in (self.system, self.before, self.after):
            for slot in _SLOT.findall(part):
                if slot not in SLOTS[self.kind]:
                    raise ValueError(f"prompt {self.ref}: unknown slot {{{{{slot}}}}}; "
                                     f"slots for kind {self.kind!r}: {', '.join(sorted(SLOTS[self.kind]))}")
        if self.kind == "nl" and "assertions" not in _SLOT.findall(self.before + self.after):
            raise ValueError(f"prompt {self.ref}: an 'nl' prompt must place {{{{assertions}}}}")

    def render(self, transcript: str, values: dict[str, str]) -> list[dict[str, str]]:
        """The chat messages for one item: system, then before + transcript + after."""

        safe = {k: defuse(str(v)) for k, v in values.items()}

        def fill(text: str) -> str:
            return _SLOT.sub(lambda m: safe.get(m.group(1), ""), text)

        user = fill(self.before).rstrip() + "\n\n" + transcript + "\n\n" + fill(self.after).lstrip()
        return [{"role": "system", "content": fill(self.system)}, {"role": "user", "content": user.rstrip()}]


class PackRule(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    scenarios: list[str] = Field(min_length=1, description="Scenario-name globs the assertions apply to.")
    assertions: list[str] = Field(min_length=1, description="Assertion texts, judged one by one.")


class NLPack(BaseModel):
    """Extra NL assertions for scenarios matched by glob; versioned like a prompt."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    version: str
    description: str
    rules: list[PackRule] = Field(min_length=1)

    @property
    def ref(self) -> str:
        return f"{self.id}@{self.version}"

    @property
    def pack_hash(self) -> str:
        """Hash of the rules (globs and assertion texts): what the judge is asked."""
        payload = json.dumps([r.model_dump() for r in self.rules], sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]

    def assertions_for(self, scenario: str) -> list[str]:
        out: list[str] = []
        for rule in self.rules:
            if any(fnmatch.fnmatchcase(scenario, g) for g in rule.scenarios):
                out += [a for a in rule.assertions if a not in out]
        return out


def _data_dir(name: str) -> Path:
    return Path(str(resources.files("tauray.data") / name))


def _version_key(version: str) -> tuple[int, ...] | tuple[float, str]:
    parts = version.split(".")
    if all(p.isdigit() for p in parts):
        return tuple(int(p) for p in parts)
    return (float("inf"), version)


class _Registry:
    def __init__(self, what: str, items: list[BaseModel]):
        self.what = what
        self.items: dict[tuple[str, str], BaseModel] = {}
        for item in items:
            key = (item.id, item.version)  # type: ignore[attr-defined]
            if key in self.items:
                raise ValueError(f"duplicate {what} {key[0]}@{key[1]}")
            self.items[key] = item

    def refs(self) -> list[str]:
        return [f"{i}@{v}" for i, v in sorted(self.items, key=lambda k: (k[0], _version_key(k[1])))]

    def get(self, ref: str) -> BaseModel:
        ident, _, version = ref.strip().partition("@")
        if version:
            item = self.items.get((ident, version))
        else:
            versions = [v for i, v in self.items if i == ident]
            item = self.items[(ident, max(versions, key=_version_key))] if versions else None
        if item is None:
            raise UnknownPromptError(f"unknown {self.what} {ref!r}; available: {', '.join(self.refs()) or 'none'}")
        return item


RELEASED = "released.json"
"""Per data folder: ``{"id@version": hash}`` of every released prompt or pack."""


def content_hash(item: BaseModel) -> str:
    return item.prompt_hash if isinstance(item, JudgePrompt) else item.pack_hash  # type: ignore[attr-defined]


class UnversionedEditError(ValueError):
    """A prompt or pack whose text changed while its version did not."""


def _check_released(folder: Path, path: Path, item: BaseModel, released: dict[str, str] | None) -> None:
    if released is None:
        return  # a folder without a release record (a user's own prompts under development)
    ref, digest = item.ref, content_hash(item)  # type: ignore[attr-defined]
    if ref not in released:
        raise UnversionedEditError(
            f"{path.name}: {ref} is not recorded in {folder / RELEASED}; add \"{ref}\": \"{digest}\" there "
            "when releasing it")
    if released[ref] != digest:
        raise UnversionedEditError(
            f"{path.name}: the text of {ref} was edited without bumping its version (hash {digest}, released as "
            f"{released[ref]}); give the edited text a new version and record that version's hash in {RELEASED}, "
            "so verdicts under the old name keep meaning what they meant")


def _load(folder: Path, model: type[BaseModel]) -> list[BaseModel]:
    lock = folder / RELEASED
    released = json.loads(lock.read_text(encoding="utf-8")) if lock.is_file() else None
    out = []
    for path in sorted(folder.glob("*.toml")):
        try:
            item = model.model_validate(tomllib.loads(path.read_text(encoding="utf-8")))
            if isinstance(item, JudgePrompt):
                item.check_slots()
        except Exception as exc:
            raise ValueError(f"{path.name}: {exc}") from None
        _check_released(folder, path, item, released)
        out.append(item)
    return out


@lru_cache(maxsize=None)
def prompt_registry(folder: str | None = None) -> _Registry:
    """Every judge prompt under ``data/judge_prompts`` (or ``folder``)."""
    return _Registry("judge prompt", _load(Path(folder) if folder else _data_dir("judge_prompts"), JudgePrompt))


@lru_cache(maxsize=None)
def pack_registry(folder: str | None = None) -> _Registry:
    """Every NL-assertion pack under ``data/nl_packs`` (or ``folder``)."""
    return _Registry("NL-assertion pack", _load(Path(folder) if folder else _data_dir("nl_packs"), NLPack))


def get_prompt(ref: str) -> JudgePrompt:
    """``id@version``, or ``id`` for its highest version; fails naming what exists."""
    return prompt_registry().get(ref)  # type: ignore[return-value]


def get_pack(ref: str) -> NLPack:
    return pack_registry().get(ref)  # type: ignore[return-value]


def list_prompts() -> list[JudgePrompt]:
    reg = prompt_registry()
    return [reg.get(r) for r in reg.refs()]  # type: ignore[misc]


__all__ = ["RELEASED", "JudgePrompt", "NLPack", "PackRule", "PromptKind", "UnknownPromptError", "UnversionedEditError",
           "content_hash", "get_pack", "get_prompt",
           "list_prompts", "pack_registry", "prompt_registry"]

"""Reading a config file (TOML or YAML) into a dict, with bounded work and one-line errors.

``read_config_file(path)`` refuses a bad file with a :class:`ConfigFileError` whose
message is one line that starts with the file's path, e.g.::

    sweep.toml: not valid TOML: Invalid value (at line 3, column 5)
    sweep.yaml: not UTF-8 text (byte 0xff at offset 12, line 2); save the file as UTF-8
    sweep.yaml: YAML aliases expand to more than 10000 nodes (an alias bomb?); write the values out

The work is bounded before any value is built: the file is refused unread past
``MAX_BYTES``; YAML is composed by a pure-Python ``SafeLoader`` that counts the nodes
aliases add (an alias bomb stops after a few hundred nodes, not a billion), limits the
nesting to ``MAX_DEPTH`` levels (aliases included) and all nodes to ``MAX_NODES``, refuses alias cycles, duplicate keys,
keys that are not text, and tags ``SafeLoader`` has no constructor for; TOML nesting
past the recursion limit is a depth error, not a syntax error, and is checked again
after parsing. PyYAML's C loader composes in C, out of reach of these counters, so it
is not used (config files are small).

A pure module: it imports only the standard library and PyYAML.
"""

from __future__ import annotations

import codecs
import stat
import tomllib
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import SafeConstructor

MAX_BYTES = 5_000_000
"""Larger files are refused before they are read."""
MAX_DEPTH = 64
"""Most levels of nested mappings/lists/tables, the top-level mapping being level 1."""
MAX_ALIAS_NODES = 10_000
"""Most YAML nodes that aliases may add (each alias counts the whole node it repeats)."""
MAX_NODES = 100_000
"""Most YAML nodes in all, aliases expanded (about 2 s of pure-Python parsing)."""

SUFFIXES = {".toml": "toml", ".yaml": "yaml", ".yml": "yaml"}
_ACCEPTED = ".toml, .yaml or .yml"

_YAML_TAG = "tag:yaml.org,2002:"
_STR, _MERGE = _YAML_TAG + "str", _YAML_TAG + "merge"
_ALLOWED_TAGS = frozenset(tag for tag in SafeConstructor.yaml_constructors if tag) | {_MERGE}
_TAG_KIND = {"bool": "true/false", "int": "a number", "float": "a number", "null": "null",
             "timestamp": "a date", "binary": "binary data"}


class ConfigFileError(ValueError):
    """A config file that cannot be used; ``str()`` is one line: ``f"{path}: {reason}"``.

    ``kind`` says which check refused it: missing, unreadable, directory, extension,
    not_regular, too_large, empty, encoding, syntax, tab, documents, top_level,
    duplicate_key, key_type, tag, aliases, nodes, cycle or depth.
    """

    def __init__(self, path: Path | str, reason: str, kind: str = "invalid"):
        self.path = str(path)
        self.reason = " ".join(str(reason).split())   # one line, whatever the parser said
        self.kind = kind
        super().__init__(f"{self.path}: {self.reason}")

    def __reduce__(self):  # pickles (Ray) with the three fields, not ValueError's args
        return type(self), (self.path, self.reason, self.kind)


def read_config_file(path: Path | str) -> dict[str, Any]:
    """Read and parse a ``.toml``, ``.yaml`` or ``.yml`` file into a (non-empty) dict.

    Raises :class:`ConfigFileError` (one line, naming the file) for anything else.
    """
    shown = path
    path = Path(path)
    fmt, data = _read_bytes(path, shown)
    text = _decode(data, shown)
    result = _parse_toml(text, shown) if fmt == "toml" else _parse_yaml(text, shown)
    if not result:
        raise ConfigFileError(shown, "the file holds no settings", "empty")
    return result


# --------------------------------------------------------------------------- bytes and text


def _read_bytes(path: Path, shown: Path | str) -> tuple[str, bytes]:
    try:
        st = path.stat()
    except FileNotFoundError:
        raise ConfigFileError(shown, "no such file", "missing") from None
    except OSError as exc:
        raise ConfigFileError(shown, f"cannot read the file: {exc.strerror or exc}", "unreadable") from None
    if stat.S_ISDIR(st.st_mode):
        raise ConfigFileError(shown, f"is a directory, not a file; give the path of a {_ACCEPTED} file", "directory")
    suffix = path.suffix
    fmt = SUFFIXES.get(suffix.lower())
    if fmt is None:
        what = f"unsupported file type {suffix!r}" if suffix else "no file extension"
        raise ConfigFileError(shown, f"{what}; a config file is {_ACCEPTED}", "extension")
    if not stat.S_ISREG(st.st_mode):
        raise ConfigFileError(shown, "not a regular file", "not_regular")
    if st.st_size > MAX_BYTES:
        raise ConfigFileError(shown, _too_large(f"{st.st_size:,} bytes"), "too_large")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_BYTES + 1)   # bounded even if the file grew since stat()
    except OSError as exc:
        raise ConfigFileError(shown, f"cannot read the file: {exc.strerror or exc}", "unreadable") from None
    if len(data) > MAX_BYTES:
        raise ConfigFileError(shown, _too_large(f"more than {MAX_BYTES:,} bytes"), "too_large")
    return fmt, data


def _too_large(size: str) -> str:
    return f"the file is {size}, over the {MAX_BYTES / 1e6:g} MB limit for a config file"


def _decode(data: bytes, shown: Path | str) -> str:
    for bom, label in ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
                       (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16")):
        if data.startswith(bom):
            raise ConfigFileError(shown, f"saved as {label} (it starts with a {label} byte-order mark); "
                                         "save the file as UTF-8", "encoding")
    skip = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0   # Notepad's UTF-8 BOM: fine
    if not data[skip:].strip():
        raise ConfigFileError(shown, "the file is empty", "empty")
    try:
        text = data[skip:].decode("utf-8")
    except UnicodeDecodeError as exc:
        at = skip + exc.start
        raise ConfigFileError(shown, f"not UTF-8 text (byte 0x{data[at]:02x} at offset {at}, "
                                     f"line {_line(data, at)}); save the file as UTF-8",
                              "encoding") from None
    nul = data.find(b"\x00")
    if nul >= 0:
        raise ConfigFileError(shown, f"not a text file (a NUL byte at offset {nul}, line {_line(data, nul)}); "
                                     "save the file as UTF-8 text", "encoding")
    return text


def _line(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


# --------------------------------------------------------------------------- TOML


def _parse_toml(text: str, shown: Path | str) -> dict[str, Any]:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigFileError(shown, f"not valid TOML: {exc}", "syntax") from None
    except RecursionError:
        raise ConfigFileError(shown, f"nested more than {MAX_DEPTH} levels deep", "depth") from None
    under = _too_deep(data)
    if under is not None:
        raise ConfigFileError(shown, f"nested more than {MAX_DEPTH} levels deep (under {under!r})", "depth")
    return data


def _too_deep(data: dict[str, Any]) -> str | None:
    """The top-level key under which nesting passes MAX_DEPTH, if it does (no recursion)."""
    stack: list[tuple[Any, int, str]] = [(value, 2, key) for key, value in data.items()]
    while stack:
        value, depth, top = stack.pop()
        if isinstance(value, dict | list):
            if depth > MAX_DEPTH:
                return top
            children = value.values() if isinstance(value, dict) else value
            stack.extend((child, depth + 1, top) for child in children)
    return None


# --------------------------------------------------------------------------- YAML


def _at(mark: Any) -> str:
    return f"line {mark.line + 1}, column {mark.column + 1}" if mark is not None else "unknown position"


def _short_tag(tag: str | None) -> str:
    tag = tag or "?"
    return "!!" + tag[len(_YAML_TAG):] if tag.startswith(_YAML_TAG) else tag


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader (pure Python) that checks while composing, before any object is built:
    nodes added by aliases, nesting depth (aliases included), alias cycles, tags,
    duplicate and non-text mapping keys, and a single document."""

    def __init__(self, text: str, shown: Path | str):
        super().__init__(text)
        self._shown = shown
        self._depth = 0                 # collections open around the node being composed
        self._heights: list[int] = []   # per open node: the deepest collection nesting under it so far
        self._size: dict[int, int] = {}     # id(node) -> nodes in it, aliases expanded
        self._height: dict[int, int] = {}   # id(node) -> collection levels in it, aliases expanded
        self._count = 0                 # nodes so far, aliases expanded
        self.aliased = 0                # nodes added by aliases

    def _refuse(self, reason: str, kind: str) -> ConfigFileError:
        return ConfigFileError(self._shown, reason, kind)

    def _check_count(self, event: yaml.Event) -> None:
        if self._count > MAX_NODES:
            raise self._refuse(f"more than {MAX_NODES} YAML nodes ({_at(event.start_mark)}); "
                               "a config file holds settings, not bulk data", "nodes")

    def get_single_node(self) -> yaml.Node | None:
        self.get_event()                                   # StreamStart
        document = None
        if not self.check_event(yaml.StreamEndEvent):
            document = self.compose_document()
        if not self.check_event(yaml.StreamEndEvent):
            event = self.peek_event()
            raise self._refuse(f"more than one YAML document (another starts at {_at(event.start_mark)}); "
                               "a config file is a single document", "documents")
        self.get_event()
        return document

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            node = super().compose_node(parent, index)     # the anchored node (or undefined-alias error)
            size = self._size.get(id(node))
            if size is None:
                raise self._refuse(f"the alias *{event.anchor} refers to a node that contains it "
                                   f"({_at(event.start_mark)}); YAML cycles are not allowed", "cycle")
            height = self._height[id(node)]
            if self._depth + height > MAX_DEPTH:
                raise self._refuse(f"nested more than {MAX_DEPTH} levels deep ({_at(event.start_mark)})", "depth")
            self.aliased += size
            if self.aliased > MAX_ALIAS_NODES:
                raise self._refuse(f"YAML aliases expand to more than {MAX_ALIAS_NODES} nodes (an alias bomb?); "
                                   "write the values out", "aliases")
            self._count += size
            self._check_count(event)
            if self._heights:
                self._heights[-1] = max(self._heights[-1], height)
            return node
        event = self.peek_event()
        if event.anchor is not None and event.anchor in self.anchors:
            first = self.anchors[event.anchor].start_mark
            raise self._refuse(f"the anchor &{event.anchor} is defined twice ({_at(event.start_mark)}; first at "
                               f"line {first.line + 1}); give each anchor its own name", "syntax")
        collection = isinstance(event, yaml.SequenceStartEvent | yaml.MappingStartEvent)
        if collection:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                raise self._refuse(f"nested more than {MAX_DEPTH} levels deep ({_at(event.start_mark)})", "depth")
        start = self._count
        self._count += 1
        self._check_count(event)
        self._heights.append(0)
        node = super().compose_node(parent, index)
        height = self._heights.pop() + collection
        if collection:
            self._depth -= 1
        if self._heights:
            self._heights[-1] = max(self._heights[-1], height)
        self._size[id(node)] = self._count - start
        self._height[id(node)] = height
        if node.tag not in _ALLOWED_TAGS:
            raise self._refuse(f"the YAML tag {_short_tag(node.tag)!r} is not allowed ({_at(node.start_mark)}); "
                               "write plain values", "tag")
        return node

    def compose_mapping_node(self, anchor: str | None) -> yaml.MappingNode:
        node = super().compose_mapping_node(anchor)
        first: dict[str, Any] = {}
        for key, _ in node.value:
            if key.tag == _MERGE:
                continue
            if not isinstance(key, yaml.ScalarNode):
                what = "a list" if isinstance(key, yaml.SequenceNode) else "a mapping"
                raise self._refuse(f"{what} used as a key ({_at(key.start_mark)}); keys are text", "key_type")
            if key.tag != _STR:
                kind = _TAG_KIND.get(key.tag.removeprefix(_YAML_TAG), f"{_short_tag(key.tag)!r}")
                raise self._refuse(f"the key {key.value or '~'!r} reads as {kind}, not text "
                                   f"({_at(key.start_mark)}); quote it", "key_type")
            if key.value in first:
                raise self._refuse(f"duplicate key {key.value!r} ({_at(key.start_mark)}; first at line "
                                   f"{first[key.value].line + 1}); a key may appear once in a mapping", "duplicate_key")
            first[key.value] = key.start_mark
        return node


def _parse_yaml(text: str, shown: Path | str) -> dict[str, Any]:
    loader = None
    try:
        loader = _BoundedLoader(text, shown)   # checks for control characters up front
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        raise ConfigFileError(shown, *_yaml_reason(exc)) from None
    except yaml.reader.ReaderError as exc:
        before = text[:exc.position]
        where = f"line {before.count(chr(10)) + 1}, column {exc.position - before.rfind(chr(10))}"
        raise ConfigFileError(shown, f"the control character U+{exc.character:04X} is not allowed in YAML "
                                     f"({where}); remove it", "syntax") from None
    except yaml.YAMLError as exc:
        raise ConfigFileError(shown, f"not valid YAML: {exc}", "syntax") from None
    except RecursionError:   # not expected past the depth check; never a traceback all the same
        raise ConfigFileError(shown, f"nested more than {MAX_DEPTH} levels deep", "depth") from None
    finally:
        if loader is not None:
            loader.dispose()
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigFileError(shown, f"the top level is {_kind(data)}, not a mapping of settings (key: value lines)",
                              "top_level")
    return _tree(data) if loader is not None and loader.aliased else data


def _yaml_reason(exc: yaml.MarkedYAMLError) -> tuple[str, str]:
    problem, mark = exc.problem, exc.problem_mark
    if problem and "'\\t'" in problem and "cannot start any token" in problem:
        return f"a tab character ({_at(mark)}); YAML indents and separates with spaces, not tabs", "tab"
    reason = f"not valid YAML: {problem or exc.context} ({_at(mark or exc.context_mark)})"
    if problem and exc.context:
        reason += f" {exc.context}" + (f" ({_at(exc.context_mark)})" if exc.context_mark else "")
    return reason, "syntax"


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a text value"
    if isinstance(value, list):
        return "a list"
    return f"a {type(value).__name__} value"


def _tree(value: Any) -> Any:
    """A copy in which no dict or list appears twice (aliases share them); the size and
    depth are bounded by the loader, so recursion is fine."""
    if isinstance(value, dict):
        return {k: _tree(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tree(v) for v in value]
    return value

"""Command-line flags generated from the config models, so a knob exists in the config
and on the command line under one name, with one default and one description.

``add_fields(parser, Model, names)`` adds ``--field-name`` for each named pydantic
field (type, help and the default shown from the model, the argparse default left
``None``), and ``given(args, names)`` collects the flags the user actually gave, so
every default stays the model's.
"""

from __future__ import annotations

import argparse
import json
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def flag(name: str, prefix: str = "") -> str:
    return "--" + (f"{prefix}-" if prefix else "") + name.replace("_", "-")


def dest(name: str, prefix: str = "") -> str:
    return (f"{prefix}_" if prefix else "") + name


def _scalar(annotation: Any) -> Any:
    """The scalar type behind ``X | None`` / ``Literal[...]``; None for anything else."""
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        return _scalar(args[0])
    if typing.get_origin(annotation) is typing.Literal:
        return ("choices", list(typing.get_args(annotation)))
    if annotation is Path:  # validated by the model (an empty path is refused there)
        return str
    return annotation if annotation in (int, float, str, bool) else None


def add_fields(parser: argparse.ArgumentParser | Any, model: type[BaseModel], names: list[str], prefix: str = "",
               rename: dict[str, str] | None = None) -> None:
    """Add a flag for each field ``names`` of ``model`` (``rename``: field -> flag name)."""
    for name in names:
        field = model.model_fields[name]
        kind = _scalar(field.annotation)
        fixed = not field.is_required() and field.default_factory is None and field.default is not None
        shown = f" (default: {field.default})" if fixed else ""
        kwargs: dict[str, Any] = {"dest": dest(name, prefix), "default": None,
                                  "help": (field.description or "").rstrip(".") + shown}
        if kind is bool:
            kwargs["action"] = argparse.BooleanOptionalAction
        elif isinstance(kind, tuple):
            kwargs["choices"] = kind[1]
        elif kind is not None:
            kwargs["type"] = kind
            kwargs["metavar"] = (rename or {}).get(name, name).upper()
        else:
            raise TypeError(f"{model.__name__}.{name}: no command-line type for {field.annotation}")
        parser.add_argument(flag((rename or {}).get(name, name), prefix), **kwargs)


def given(args: argparse.Namespace, names: list[str], prefix: str = "") -> dict[str, Any]:
    """The fields among ``names`` whose flags were given, by field name."""
    out = {}
    for name in names:
        value = getattr(args, dest(name, prefix), None)
        if value is not None:
            out[name] = value
    return out


def key_values(pairs: list[str], flag_name: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as a dict; values that parse as JSON (numbers, booleans, objects) are typed."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{flag_name}: expected KEY=VALUE, got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except ValueError:
            value = raw
        params[key.strip()] = value
    return params

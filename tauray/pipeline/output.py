"""How commands print a result record: one JSON document, or aligned lines.

With ``--json`` stdout carries that document and nothing else: while the command
runs (``json_only_stdout``), whatever else would reach stdout goes to stderr —
Ray's forwarded worker and raylet lines, a library's log handler bound to
stdout, a stray print — and ``print_json`` writes the document to the real stdout.
"""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from typing import Any, Iterator, TextIO

from pydantic import BaseModel

_REAL_STDOUT: list[TextIO] = []  # the stdout that json_only_stdout set aside, innermost last


@contextlib.contextmanager
def json_only_stdout(enabled: bool = True) -> Iterator[None]:
    """Send everything written to stdout to stderr until the block ends (see the module)."""
    if not enabled or _REAL_STDOUT:  # off, or already inside one
        yield
        return
    real, err = sys.stdout, sys.stderr
    moved = [h for h in _stream_handlers() if h.stream is real]
    _REAL_STDOUT.append(real)
    sys.stdout = err
    for handler in moved:
        handler.setStream(err)
    try:
        yield
    finally:
        sys.stdout = real
        _REAL_STDOUT.pop()
        for handler in moved:
            if handler.stream is err:  # not re-pointed by the command itself
                handler.setStream(real)


def _stream_handlers() -> list[logging.StreamHandler]:
    loggers = [logging.getLogger(), *(lg for lg in logging.Logger.manager.loggerDict.values()
                                      if isinstance(lg, logging.Logger))]
    return [h for lg in loggers for h in lg.handlers
            if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler)]


def print_json(data: Any, indent: int = 2) -> None:
    """The command's JSON document, on the real stdout."""
    out = _REAL_STDOUT[-1] if _REAL_STDOUT else sys.stdout
    print(json.dumps(data, indent=indent, default=str), file=out, flush=True)


def print_figures(result: BaseModel | dict[str, Any], as_json: bool) -> None:
    data = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    if as_json:
        print_json(data)
        return
    for key, value in data.items():
        print(f"{key:28} {value}")

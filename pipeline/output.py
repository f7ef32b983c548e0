"""How commands print a result record: one JSON document, or aligned lines."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel


def print_figures(result: BaseModel | dict[str, Any], as_json: bool) -> None:
    data = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
    if as_json:
        print(json.dumps(data, indent=2, default=str))
        return
    for key, value in data.items():
        print(f"{key:28} {value}")

"""``tauray models check MODEL… [--json]``: what tauray will send each model, offline
(:mod:`tauray.actors.llm.check`)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``models`` command to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("models", help="inspect models offline: what is sent, dropped, priced, adapted")
    sub = p.add_subparsers(dest="models_command", required=True)
    c = sub.add_parser("check", help="per model: provider, parameters sent and left out, cost, context window, "
                       "tool and structured-output support, history adaptations (no call is made)")
    c.add_argument("models", nargs="+", metavar="MODEL",
                   help='litellm model string (e.g. "openai/gpt-5") or a JSON model spec')
    c.add_argument("--json", action="store_true", help="print one JSON document")
    c.set_defaults(func=cmd_check)
    return p


def cmd_check(args: argparse.Namespace) -> int:
    from tauray.actors.llm.check import check_model, describe
    from tauray.pipeline.output import print_json

    checks = [check_model(m) for m in args.models]
    if args.json:
        print_json([c.model_dump(mode="json") for c in checks])
    else:
        print("\n\n".join(describe(c) for c in checks))
    return 2 if any(c.error for c in checks) else 0

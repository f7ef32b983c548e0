"""``tauray models check MODEL… [--json]``: what tauray will send each model, offline
(:mod:`tauray.actors.llm.check`). Exits 2 when a model cannot be used as configured: a name
litellm's model map does not have (unless a server of yours answers it), a setting or
combination the provider refuses. A phone bot (a spec with ``phone``) is probed instead: its
websocket opened and closed, no call placed; one line, ``unreachable`` or ``wrong_protocol``
when it cannot be called. So is a realtime model (a spec with ``realtime``): a session opened and
closed at ``session.created``, no audio sent, with its audio prices."""

from __future__ import annotations

import argparse
import json
from typing import Any


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``models`` command to the ``tauray`` sub-command parsers."""
    p = subparsers.add_parser("models", help="inspect models offline: what is sent, dropped, priced, adapted")
    sub = p.add_subparsers(dest="models_command", required=True)
    c = sub.add_parser("check", help="per model: provider, whether litellm's model map has the name (if not: the "
                       "nearest names, exit 2), parameters sent and left out (a combination the provider refuses: "
                       "exit 2), cost, context window, tool and structured-output support, history adaptations "
                       "(no call is made)")
    c.add_argument("models", nargs="+", metavar="MODEL",
                   help='litellm model string (e.g. "openai/gpt-5") or a JSON model spec; a spec with '
                   '"role": "tts" or "asr" is a speech model; one with "phone" is a phone bot, probed (its '
                   'websocket opened and closed, no call); one with "realtime" a realtime model, probed (a session '
                   'opened and closed)')
    c.add_argument("--json", action="store_true", help="print one JSON document")
    c.add_argument("--offline", action="store_true",
                   help="do not deploy `serve:` models for one generation each (by default they are: "
                   "a served model is free to call, and a build that crashes on this CPU shows only then)")
    c.set_defaults(func=cmd_check)
    return p


def cmd_check(args: argparse.Namespace) -> int:
    from tauray.actors.llm.check import check_model
    from tauray.actors.llm.spec import ModelSpec
    from tauray.actors.llm.usable import check_served_lines
    from tauray.actors.voice.spec import check_speech_model, is_speech_spec
    from tauray.pipeline.output import print_json
    from tauray.pipeline.ray_runtime import connect

    phones = {i: spec for i, m in enumerate(args.models) if (spec := _phone(m)) is not None}
    probed: dict[int, Any] = {}
    if phones:  # a phone bot is called, not a model: its socket is opened and closed (docs/live-agents.md)
        from tauray.actors.voice.live.agent import probe_phones

        probed = dict(zip(phones, probe_phones(list(phones.values()))))
    models = [m for i, m in enumerate(args.models) if i not in phones]
    # a spec with "role": "tts" or "asr" is a speech model (docs/voice.md), checked as one
    checks = [check_speech_model(json.loads(m)) if is_speech_spec(m) else check_model(m) for m in models]
    if not args.offline:
        served = [i for i, (m, c) in enumerate(zip(models, checks))
                  if not c.error and not is_speech_spec(m) and _served(m)]
        if served:  # deployed on local Ray (or the cluster in RAY_ADDRESS) for one generation each
            connect()
        for i, live in zip(served, check_served_lines([ModelSpec.parse(models[i]) for i in served])):
            checks[i] = checks[i].model_copy(update={"served": live.line} if live.ok else {"error": live.line})
    told = iter(zip(models, checks))
    if args.json:
        print_json([probed[i].model_dump(mode="json") if i in probed else next(told)[1].model_dump(mode="json")
                    for i in range(len(args.models))])
    else:
        print("\n\n".join(probed[i].line if i in probed else _described(*next(told))
                           for i in range(len(args.models))))
    return 2 if any(c.error for c in checks) or any(not c.ok for c in probed.values()) else 0


def _described(model: str, check: Any) -> str:
    from tauray.actors.llm.check import describe
    from tauray.actors.voice.spec import describe_speech, is_speech_spec

    if is_speech_spec(model):
        return describe_speech(check)
    return describe(check) + (f"\n  {check.served}" if check.served else "")


def _phone(value: str) -> Any:
    """The model spec of ``value`` when it is a live agent's (a phone bot, a realtime model), else None."""
    from tauray.actors.llm.spec import ModelSpec

    if not value.lstrip().startswith("{"):
        return None
    try:
        spec = ModelSpec.parse(value)
    except Exception:
        return None
    return spec if spec.is_live else None


def _served(value: str) -> bool:
    from tauray.actors.llm.spec import ModelSpec

    try:
        return ModelSpec.parse(value).serve is not None
    except Exception:
        return False

"""The LLM judge: per-assertion (NL) and overall verdicts over recorded conversations.

:mod:`.config` (what a judge is and what it is asked), :mod:`.prompts` (versioned
prompts and NL packs), :mod:`.render` (the transcript as the judge reads it, with
verdict-like text marked as quoted), :mod:`.parse` (a reply read into a verdict, or
unscored with a reason), :mod:`.host` (samples through litellm, with a cache; in
process or as a Ray actor) and :mod:`.verdicts` (a conversation's judge signals and
its recomputed verdict).
"""

from tauray.actors.judge.config import JudgeConfig, JudgeItem, JudgeOutcome, public_api_base
from tauray.actors.judge.host import JudgeHost, call_judge, judge_actor_class
from tauray.actors.judge.verdicts import (
    assertions_for,
    build_item,
    conversation_signals,
    judge_result,
    nl_signal,
    overall_signal,
    scenario_context,
    with_judge_verdict,
)
from tauray.results.stats.metrics import majority, tally_votes

__all__ = ["JudgeConfig", "JudgeHost", "JudgeItem", "JudgeOutcome", "assertions_for", "build_item", "call_judge",
           "conversation_signals", "judge_actor_class", "judge_result", "majority", "nl_signal", "overall_signal",
           "public_api_base", "scenario_context", "tally_votes", "with_judge_verdict"]

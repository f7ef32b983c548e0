"""Every verdict word reads as its own polarity (issue 27: mapping "failed" to a pass
passed every judge test, which only tried positive synonyms). Failed on that mutant."""

from __future__ import annotations

import json

import pytest

from tauray.actors.judge.parse import parse_nl, parse_overall


@pytest.mark.parametrize("word, verdict", [
    ("pass", True), ("passed", True), ("PASS", True), ("Passed", True),
    ("fail", False), ("failed", False), ("FAIL", False), ("Failed", False),
])
def test_every_overall_verdict_word_reads_as_its_polarity(word, verdict):
    parsed = parse_overall(json.dumps({"reasoning": "r", "verdict": word}))
    assert parsed.verdict is verdict and parsed.unscored_reason is None
    assert parsed.reasoning == "r"


@pytest.mark.parametrize("word, verdict", [
    ("met", True), ("MET", True), ("not_met", False), ("not met", False), ("not-met", False), ("Not_Met", False),
])
def test_every_nl_verdict_word_reads_as_its_polarity(word, verdict):
    reply = json.dumps({"results": [{"id": "A1", "reasoning": "r1", "verdict": word},
                                    {"id": "A2", "reasoning": "r2", "verdict": "met"}]})
    first, second = parse_nl(reply, 2)
    assert first.verdict is verdict and first.unscored_reason is None and first.reasoning == "r1"
    assert second.verdict is True and second.reasoning == "r2"


@pytest.mark.parametrize("said", ['"failed"', '"fail"'])
def test_a_negative_voice_beside_a_pass_makes_the_reply_ambiguous(said):
    parsed = parse_overall('{"reasoning": "r", "verdict": "pass", "status": ' + said + '}')
    assert parsed.verdict is None and parsed.unscored_reason.startswith("ambiguous")

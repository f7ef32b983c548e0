"""Everything one conversation adds to the tables, and the tables it adds to."""

from __future__ import annotations

from pydantic import BaseModel, Field, model_validator

from tauray.results.tables.records.audit import SimAttributionRecord, SimFindingRecord
from tauray.results.tables.records.columns import _ROW_CONFIG
from tauray.results.tables.records.conversation import CellRecord, ConversationRecord
from tauray.results.tables.records.detail import ActionRecord, PredicateRecord
from tauray.results.tables.records.judge import JudgeVerdictRecord, NLAssertionRecord
from tauray.results.tables.records.message import MessageRecord
from tauray.results.tables.records.segment import Segment
from tauray.results.tables.records.utterance import UtteranceRecord


class ConversationResult(BaseModel):
    """Everything one conversation adds to the tables, sent back as one message."""

    model_config = _ROW_CONFIG

    conversation: ConversationRecord = Field(description="The conversation row.")
    predicates: list[PredicateRecord] = Field(description="Predicate verdict rows.")
    actions: list[ActionRecord] = Field(description="Action rows.")
    messages: list[MessageRecord] = Field(description="Message rows.")
    nl_assertions: list[NLAssertionRecord] = Field(default=[], description="NL-assertion verdict rows.")
    judge_verdicts: list[JudgeVerdictRecord] = Field(default=[], description="Overall judge verdict rows.")
    sim_findings: list[SimFindingRecord] = Field(default=[], description="The audit's findings (none when not audited).")
    sim_attributions: list[SimAttributionRecord] = Field(default=[], description="The audit's attribution: one row "
                                                         "when audited, none otherwise.")
    utterances: list[UtteranceRecord] = Field(default=[], description="Utterances carried over the speech channel "
                                              "(voice cells only), in the order spoken.")
    segments: list[Segment] = Field(default=[], description="Speech segments on the simulated clock (duplex cells "
                                    "only), both sides, in timeline order.")
    audio: dict[str, bytes] = Field(default={}, description="Audio files the run folder keeps for this "
                                    "conversation (content hash -> FLAC bytes, both sides of every utterance; a "
                                    "duplex call's stereo recording, and its label track as '<hash>.txt'); "
                                    "empty unless the sweep's keep policy keeps them (tauray/results/tables/layout.py, "
                                    "audio_path). Written by the table writer, never a table.")

    @model_validator(mode="after")
    def _rows_belong_to_conversation(self) -> ConversationResult:
        # Detail rows that point at another conversation would be orphaned
        # (or worse, attached to the wrong one) once written.
        key = (self.conversation.run_id, self.conversation.conversation_id)
        for name in ("predicates", "actions", "messages", "nl_assertions", "judge_verdicts", "sim_findings",
                     "sim_attributions"):
            for row in getattr(self, name):
                if (row.run_id, row.conversation_id) != key:
                    raise ValueError(
                        f"{name} row for {row.run_id}/{row.conversation_id} "
                        f"does not belong to {key[0]}/{key[1]}"
                    )
        return self


TABLES: dict[str, type[BaseModel]] = {
    "conversations": ConversationRecord,
    "predicate_verdicts": PredicateRecord,
    "actions": ActionRecord,
    "messages": MessageRecord,
    "nl_assertion_verdicts": NLAssertionRecord,
    "judge_verdicts": JudgeVerdictRecord,
    "sim_findings": SimFindingRecord,
    "sim_attributions": SimAttributionRecord,
    "cells": CellRecord,
    "utterances": UtteranceRecord,
    "segments": Segment,
}


def records_by_table(result: ConversationResult) -> dict[str, list[BaseModel]]:
    """Split a result into the rows of each table (every table present)."""
    return {
        "conversations": [result.conversation],
        "predicate_verdicts": list(result.predicates),
        "actions": list(result.actions),
        "messages": list(result.messages),
        "nl_assertion_verdicts": list(result.nl_assertions),
        "judge_verdicts": list(result.judge_verdicts),
        "sim_findings": list(result.sim_findings),
        "sim_attributions": list(result.sim_attributions),
        "utterances": list(result.utterances),
        "segments": list(result.segments),
    }


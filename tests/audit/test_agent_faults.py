"""The agent-side detectors: the agent's moves against the scenario's reference actions.
Each faulty move is found once, at its turn, with its class; the reference policies'
conversations, and customers' faults, give no agent finding."""

from __future__ import annotations

import json

from tauray.actors.audit.agent_faults import (
    AGENT_DETECTORS,
    alone_calls,
    corrected_calls,
)
from tauray.actors.audit.counterfactual import replay_success
from tauray.actors.audit.finding import detect_all
from tauray.actors.audit.trajectory import Message, Trajectory, task_facts
from tauray.actors.policies import phone_request
from tauray.scenarios.conventions import STOP
from tauray.scenarios.model import ReferenceAction

# reference: toggle_data (customer), refuel_data, enable_roaming (agent), toggle_roaming (customer)
SCENARIO = "tau2_telecom__mobile_data_issue__data_mode_off__data_usage_exceeded__user_abroad_roaming_disabled_off__persona_hard"
TRANSFER_ONLY = "tau2_telecom__service_issue__airplane_mode_on__lock_sim_card_pin__persona_easy"
IDS = {"customer_id": "C1001", "line_id": "L1002"}
REFUEL = ("refuel_data", {**IDS, "gb_amount": 2.0})
ROAMING = ("enable_roaming", IDS)
CLOSING = "That was the last step on my side; everything should work now. Is there anything else I can do?"


def ask(tool, args=None):
    return phone_request(ReferenceAction(action_id="x", side="user", name=tool, arguments=args or {}))


class Conv:
    """A conversation written turn by turn, the way the writer stores it."""

    def __init__(self):
        self.msgs = [Message(seq=0, turn=0, side="agent", role="assistant", content="Hello, how can I help?")]
        self.actions = []
        self.turn = 0

    def _add(self, side, role, content, calls=()):
        calls = tuple({"id": f"c{len(self.msgs)}-{i}", "name": n, "arguments": json.dumps(a)}
                      for i, (n, a) in enumerate(calls))
        self.msgs.append(Message(seq=len(self.msgs), turn=self.turn, side=side, role=role, content=content,
                                 tool_calls=calls))
        for c in calls:
            self.actions.append({"kind": "tool_call", "turn": self.turn, "side": side, "tool": c["name"],
                                 "arguments": c["arguments"], "error": False, "is_write": True})

    def user(self, text="Hi, my data does not work."):
        self.turn += 1
        self._add("user", "user", text)
        return self

    def agent_calls(self, *calls):
        self.turn += 1
        for call in calls:
            self._add("agent", "assistant", None, [call])
            self._add("agent", "tool", "ok")
        self.turn -= 1  # the text that ends the agent's turn comes next
        return self

    def agent_says(self, text):
        if self.msgs[-1].side != "agent" or self.msgs[-1].role == "assistant" and self.msgs[-1].turn == 0:
            self.turn += 1
        else:
            self.turn = self.msgs[-1].turn
        self._add("agent", "assistant", text)
        return self

    def agent_ends(self, tool, args):
        self.turn += 1
        self._add("agent", "assistant", None, [(tool, args)])
        return self

    def performs(self, tool):
        self.turn += 1
        self._add("user", "user", None, [(tool, {})])
        self._add("user", "tool", f"{tool} done")
        self._add("user", "user", f"Done. My phone now shows: {tool} done")
        return self

    def stops(self, text="Thanks, that is all I needed."):
        self.turn += 1
        self._add("user", "user", f"{text} {STOP}")
        return self

    def build(self, scenario=SCENARIO, success=False, termination="user_stop"):
        row = {"run_id": "r", "conversation_id": "c", "unit_id": "c", "attempt": 0, "scenario": scenario,
               "success": success, "error_kind": None, "user_model": "t", "seed": 1,
               "termination_reason": termination}
        actions = tuple({**a, "seq": i} for i, a in enumerate(self.actions))
        return Trajectory(row=row, messages=tuple(self.msgs), actions=actions, task=task_facts(scenario),
                          keys={k: row[k] for k in ("run_id", "conversation_id", "unit_id", "attempt", "scenario")})


def reference(**change):
    """The reference conversation; ``change`` swaps pieces of it for a faulty agent's."""
    c = Conv().user()
    c.agent_says(change.get("ask1", ask("toggle_data")))
    if change.get("stop_after_ask1"):
        return c.stops("I have to go.")
    c.performs(change.get("done1", "toggle_data"))
    c.agent_calls(*change.get("calls", (REFUEL, ROAMING)))
    if "exit" in change:
        kind, what = change["exit"]
        return c.agent_says(what).stops() if kind == "text" else c.agent_ends(*what)
    c.agent_says(ask("toggle_roaming")).performs("toggle_roaming")
    return c.agent_says(CLOSING).stops()


def agent_findings(t):
    return [(f.fault_class, f.turn, f.blamed_side, f.effect) for f in detect_all(t, AGENT_DETECTORS)]


def test_the_reference_conversation_has_no_agent_finding():
    assert agent_findings(reference().build(success=True)) == []


def test_a_skipped_agent_write_is_found_at_the_move_that_went_past_it():
    t = reference(calls=(ROAMING,)).build()
    turn = next(m.turn for m in t.messages if m.tool_calls and m.tool_calls[0]["name"] == "enable_roaming")
    assert agent_findings(t) == [("skipped_write", turn, "agent", "outcome")]


def test_a_skipped_instruction_is_found_where_the_agent_moved_on():
    t = reference(ask1=ask("toggle_roaming"), done1="toggle_roaming", calls=(REFUEL, ROAMING),
                  exit=("text", CLOSING)).build()
    assert [x[0] for x in agent_findings(t)] == ["skipped_instruction"]
    assert agent_findings(t)[0][1] == 2  # the first request, which should have been toggle_data


def test_wrong_arguments_unrequested_write_and_wrong_instruction():
    wrong = reference(calls=(("refuel_data", {**IDS, "gb_amount": 5.0}), ROAMING)).build()
    assert [x[0] for x in agent_findings(wrong)] == ["wrong_arguments"]
    extra = reference(calls=(REFUEL, ("suspend_line", {**IDS, "reason": "x"}), ROAMING)).build()
    assert [x[0] for x in agent_findings(extra)] == ["unrequested_agent_write"]
    instead = reference(ask1=ask("toggle_wifi"), done1="toggle_wifi").build()
    assert agent_findings(instead) == [("wrong_instruction", 2, "agent", "outcome")]  # one fault, not a skip too


def test_early_exits_while_reference_steps_remain():
    by_call = reference(calls=(REFUEL,), exit=("call", ("transfer_to_human_agents", {"summary": "help"}))).build(
        termination="agent_transfer")
    assert [x[0] for x in agent_findings(by_call)] == ["premature_transfer"]
    ended = reference(calls=(REFUEL,), exit=("call", ("end_conversation", {"reason": "done"}))).build(
        termination="agent_end")
    assert [x[0] for x in agent_findings(ended)] == ["premature_end"]
    in_words = reference(calls=(REFUEL, ROAMING), exit=("text", "You're all set, goodbye!")).build()
    findings = agent_findings(in_words)
    assert [x[0] for x in findings] == ["premature_end"]
    assert findings[0][1] == in_words.messages[-2].turn


def test_the_reference_transfer_is_no_fault_and_a_customer_stop_is_not_the_agents():
    t = Conv().user().agent_ends("transfer_to_human_agents", {"summary": "I cannot fix the issue."}).build(
        scenario=TRANSFER_ONLY, success=True, termination="agent_transfer")
    assert agent_findings(t) == []
    assert agent_findings(reference(stop_after_ask1=True).build()) == []  # the customer hung up: not the agent
    # the customer did something else than asked: the agent asked right, so it is not the agent's
    assert agent_findings(reference(done1="toggle_wifi").build()) == []


def test_the_non_solving_agent_is_found_ending_early():
    t = Conv().user().agent_calls(("get_customer_by_phone", {"phone_number": "555-123-2002"})).agent_says(
        "I looked that up in our system and have the details now. Is there anything else you need?").stops().build()
    assert [x[0] for x in agent_findings(t)] == ["premature_end"]


def test_corrections_replay_to_success_and_the_fault_alone_decides():
    t = reference(calls=(ROAMING,)).build()
    assert replay_success(t, [(s, n, a, 0) for s, n, a, _ in corrected_calls(t, detect_all(t, AGENT_DETECTORS)[0])])
    extra = reference(calls=(REFUEL, ("suspend_line", {**IDS, "reason": "x"}), ROAMING)).build()
    f = detect_all(extra, AGENT_DETECTORS)[0]
    assert replay_success(extra, corrected_calls(extra, f)) is True
    assert replay_success(extra, alone_calls(extra, f)) is False  # a suspended line fails the task alone
    ended = reference(calls=(REFUEL,), exit=("call", ("end_conversation", {"reason": "done"}))).build(
        termination="agent_end")
    f = detect_all(ended, AGENT_DETECTORS)[0]
    assert corrected_calls(ended, f) is None and replay_success(ended, alone_calls(ended, f)) is False


def test_a_wrong_instruction_in_place_of_the_last_step_is_one_fault_not_an_early_end():
    c = Conv().user()
    c.agent_says(ask("toggle_data")).performs("toggle_data").agent_calls(REFUEL, ROAMING)
    t = c.agent_says(ask("toggle_wifi")).performs("toggle_wifi").agent_says(CLOSING).stops().build()
    findings = detect_all(t, AGENT_DETECTORS)
    assert [f.fault_class for f in findings] == ["wrong_instruction"]
    assert "toggle_roaming" in findings[0].evidence  # it stood in for the step that was due
    assert replay_success(t, corrected_calls(t, findings[0])) is True
    assert replay_success(t, alone_calls(t, findings[0])) is False


def test_a_wrong_instruction_the_customer_did_not_carry_out_cannot_be_corrected():
    t = reference(ask1=ask("toggle_wifi"), stop_after_ask1=True).build()
    f = next(f for f in detect_all(t, AGENT_DETECTORS) if f.fault_class == "wrong_instruction")
    assert corrected_calls(t, f) is None

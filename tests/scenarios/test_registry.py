"""Registry, names, the scenario model and telecom prompt assembly."""

from __future__ import annotations

import pytest

from tauray.scenarios import SuccessSignal, default_registry, select_scenarios
from tauray.scenarios.names import scenario_name
from tauray.scenarios.registry import UnknownScenarioError
from tauray.scenarios.upstream import read_text

REG = default_registry()


def test_counts_per_domain_and_variant():
    assert len(select_scenarios(domain="telecom", split="full")) == 4570
    assert len(select_scenarios(domain="telecom", variant="manual")) == 2285
    assert len(select_scenarios(domain="telecom", split="base")) == 228
    assert len(select_scenarios(domain="airline")) == 50
    assert len(select_scenarios(domain="retail")) == 114


def test_names_follow_the_rule_and_keep_personas_apart():
    assert (scenario_name("telecom", "manual", "[mobile_data_issue]airplane_mode_on|data_mode_off[PERSONA:None]")
            == "tau2_telecom__mobile_data_issue__airplane_mode_on__data_mode_off")
    assert (scenario_name("telecom", "workflow", "[mms_issue]data_mode_off[PERSONA:Easy]")
            == "tau2_telecom_workflow__mms_issue__data_mode_off__persona_easy")
    assert scenario_name("airline", "default", "7") == "tau2_airline__task_7"
    # Every task of every domain got a distinct name (the registry refuses collisions).
    entries = REG.entries()
    assert len({(e.domain, e.upstream_id, e.policy_variant) for e in entries.values()}) == len(entries)


def test_unknown_name_lists_close_matches():
    with pytest.raises(UnknownScenarioError) as err:
        REG.get("tau2_telecom__mobile_data_issue__airplane_mode_on__data_mode_of")
    assert "tau2_telecom__mobile_data_issue__airplane_mode_on__data_mode_off" in str(err.value)


def test_selection_by_glob_and_bad_filters():
    picked = select_scenarios("tau2_telecom_workflow__mms_issue__*", split="small")
    assert picked and all(e.policy_variant == "workflow" and e.issue_type == "mms_issue" for e in picked)
    with pytest.raises(UnknownScenarioError, match="available here"):
        select_scenarios(domain="airline", split="small")
    with pytest.raises(UnknownScenarioError, match="known"):
        select_scenarios(domain="banking")


def test_side_normalisation_and_optional_fields():
    s = REG.get("tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
    assert [(c.side, c.func_name) for c in s.initialization_actions] == [
        ("user", "set_user_info"), ("user", "set_user_location"), ("user", "turn_roaming_off"),
        ("agent", "enable_roaming")]
    assert {p.side for p in s.db_state_assertions} == {"user"}
    assert s.nl_assertions is None  # absent upstream: None, not ()
    assert [(a.side, a.name) for a in s.reference_actions] == [("user", "toggle_roaming")]
    assert s.has_user_state and s.user_tools
    airline = REG.get("tau2_airline__task_0")
    assert airline.nl_assertions and not airline.has_user_state and not airline.user_tools
    assert all(a.side == "agent" for a in airline.reference_actions)


def test_success_signals_per_domain():
    s = REG.get("tau2_telecom__mobile_data_issue__user_abroad_roaming_enabled_off")
    assert s.success_signals.gating == (SuccessSignal.DB_STATE_ASSERTION,)
    assert {SuccessSignal.DB_STATE_MATCH, SuccessSignal.ACTION_MATCH, SuccessSignal.JUDGE_PASSED} <= set(
        s.success_signals.informational)
    # telecom tasks whose upstream basis includes ACTION still gate on predicates only
    with_action = [REG.get(e.name) for e in select_scenarios(domain="telecom", variant="manual")
                   if "ACTION" in REG.raw_task(e).evaluation_criteria.reward_basis]
    assert with_action and all(x.success_signals.gating == (SuccessSignal.DB_STATE_ASSERTION,) for x in with_action)
    retail = REG.get("tau2_retail__task_0")
    assert retail.success_signals.gating == (SuccessSignal.DB_STATE_MATCH, SuccessSignal.COMMUNICATE)


def test_telecom_policy_and_prompts():
    manual = REG.get("tau2_telecom__mms_issue__bad_network_preference")
    workflow = REG.get("tau2_telecom_workflow__mms_issue__bad_network_preference")
    main = read_text("telecom", "main_policy.md").strip()
    assert manual.policy == main + "\n\n---\n\n" + read_text("telecom", "tech_support_manual.md").strip()
    assert workflow.policy.endswith(read_text("telecom", "tech_support_workflow.md").strip())
    assert "<main_policy>" not in manual.policy and "<tech_support_policy>" not in manual.policy
    # the variants share everything but the policy prose
    same = ["reference_actions", "db_state_assertions", "initialization_actions", "agent_tools", "user_tools",
            "user_prompt", "upstream_id"]
    assert all(getattr(manual, f) == getattr(workflow, f) for f in same)
    assert manual.policy != workflow.policy
    prompt = manual.agent_prompt
    assert prompt.startswith(manual.policy)
    for tool in manual.agent_tools + manual.user_tools:
        assert f"`{tool.name}`" in prompt
    assert "end_conversation" in [t.name for t in manual.agent_tools]
    assert "abroad" in prompt and "United States" in prompt and "overdue bill" in prompt
    user = manual.user_prompt
    assert manual.user.known_info in user and manual.user.instructions.strip() in user
    assert "###STOP###" in user and "only right after the agent has asked" in user


ALL_DOMAINS = {"telecom", "airline", "retail", "mock"}


@pytest.mark.parametrize("patterns,domains", [
    (["tau2_telecom__mms_issue__*"], [{"telecom"}]),
    (["tau2_telecom*__service_issue__airplane_mode_on"], [{"telecom"}]),
    (["tau2_tel*"], [{"telecom"}]),
    (["tau2_airline__task_1*", "tau2_retail__task_2"], [{"airline"}, {"retail"}]),
    (["tau2_telecom_workflow__*persona_easy"], [{"telecom"}]),
    (["tau2_airline__task_7"], [{"airline"}]),
    (["tau2_mock__*"], [{"mock"}]),
    (["tau2_nosuchdomain__*"], [set()]),
    (["tau2_*__task_3"], [ALL_DOMAINS]),
    (["*mms_issue*"], [None]),
])
def test_a_selection_reads_only_the_domains_it_can_match_and_equals_a_full_scan(patterns, domains):
    """Selecting by name reads just the domains the names can match (None: any domain), so an
    actor of a telecom sweep never parses airline's tasks; the selection is what filtering
    every registered entry gives, in registry order."""
    import fnmatch

    assert [REG._domains_of(p) for p in patterns] == domains
    got = [e.name for e in REG.select(patterns)]
    assert got == [n for n in REG.entries() if any(fnmatch.fnmatchcase(n, p) for p in patterns)]


def test_a_lookup_by_name_loads_only_its_domain():
    from tauray.scenarios.registry import Registry

    reg = Registry()
    name = REG.select(domain="mock")[0].name
    assert reg.get(name).domain == "mock" and reg.select(["tau2_mock__*"])[0].name == name
    assert set(reg._by_domain) == {"mock"}  # telecom, airline and retail were never read
    with pytest.raises(UnknownScenarioError, match="did you mean"):
        reg.entry("tau2_airline__task_777")  # unknown: every domain is searched for close matches
    assert set(reg._by_domain) == ALL_DOMAINS

"""The probe before any work: one real call per distinct model, refusals named, nothing written;
and a refused request never cools the deployment down for the calls after it."""

from __future__ import annotations

import socket
import time

import pytest

from tauray.actors.llm import ModelCallError, ModelConfigError, ModelSpec, get_client
from tauray.actors.llm.usable import ProbeError, probe_models
from tauray.endpoint.behaviours import REFUSE_MARK


def _spec(endpoint, model: str, **kw) -> dict:
    return {"model": f"openai/{model}", "api_base": endpoint.base_url, **kw}


def test_unknown_model_is_refused_naming_role_model_and_answer(endpoint):
    endpoint.reset_stats()
    with pytest.raises(ProbeError) as info:
        probe_models({"agent": _spec(endpoint, "scripted-agnt"), "user": _spec(endpoint, "scripted-user")})
    text = str(info.value)
    assert "agent" in text and "'openai/scripted-agnt'" in text and "HTTP 404" in text
    assert "does not exist on this test endpoint" in text  # what the provider answered
    assert info.value.roles == ("agent",) and info.value.status_code == 404
    assert isinstance(info.value, ModelConfigError)
    assert endpoint.stats()["requests"] == 2  # one per distinct spec, no retry of a 404


def test_identical_specs_are_probed_once_and_references_never(endpoint):
    endpoint.reset_stats()
    spec = _spec(endpoint, "scripted-user")
    probe_models({"agent": "oracle", "user": spec, "judge": dict(spec)})
    stats = endpoint.stats()
    assert stats["requests"] == 1 and stats["by_behaviour"] == {"scripted-user": 1}
    probe_models({"agent": "oracle", "user": "scripted"})
    assert endpoint.stats()["requests"] == 1


def test_both_roles_named_when_a_shared_spec_is_refused(endpoint):
    spec = _spec(endpoint, "no-such-model")
    with pytest.raises(ProbeError, match="agent and user model 'openai/no-such-model'"):
        probe_models({"agent": spec, "user": spec})


def test_a_parameter_the_server_refuses_is_caught(endpoint):
    with pytest.raises(ProbeError, match="seed") as info:
        probe_models({"judge": _spec(endpoint, "no-seed")}, seed=7)
    assert info.value.status_code == 400
    probe_models({"judge": _spec(endpoint, "no-seed")}, seed=None)  # without a seed it answers


@pytest.mark.slow
def test_unreachable_endpoint_stops_within_seconds():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    started = time.perf_counter()
    with pytest.raises(ProbeError, match="could not be reached"):
        probe_models({"agent": {"model": "openai/x", "api_base": f"http://127.0.0.1:{port}/v1", "num_retries": 0}})
    assert time.perf_counter() - started < 20


def test_missing_key_variable_is_a_probe_error_before_any_call(endpoint):
    endpoint.reset_stats()
    with pytest.raises(ProbeError, match="TAURAY_TEST_UNSET_KEY"):
        probe_models({"user": _spec(endpoint, "scripted-user", api_key_env="TAURAY_TEST_UNSET_KEY")})
    assert endpoint.stats()["requests"] == 0


@pytest.mark.parametrize("status", [400, 401, 403, 404])
def test_refused_request_does_not_cool_the_deployment_down(endpoint, loop, status):
    """Before the fix a 401 or 404 put the only deployment in cooldown, and every following
    call, however good, failed as an infra error ("no deployments available")."""
    # num_retries=0: the Router retries a 403 (no RetryPolicy field covers it) with backoff, ~9 s
    # a call; the cooldown this guards against is counted per failed call, retried or not
    client = get_client(ModelSpec(model=f"openai/refuse-marked:{status}", api_base=endpoint.base_url, num_retries=0))
    bad = [{"role": "user", "content": f"please {REFUSE_MARK}"}]
    good = [{"role": "user", "content": "hello"}]
    for _ in range(3):
        with pytest.raises(ModelCallError) as info:
            loop.run_until_complete(client.complete(bad))
        assert info.value.kind == "model" and info.value.status_code == status
    for _ in range(3):
        reply = loop.run_until_complete(client.complete(good))
        assert reply.content == "ready"


def test_cli_run_with_unknown_model_exits_fast_and_writes_nothing(endpoint, tmp_path, capsys):
    from tauray.pipeline.cli.main import main

    out = tmp_path / "run"
    started = time.perf_counter()
    code = main(["run", "tau2_telecom__mms_issue__*", "--split", "small", "--agent-model", "openai/scripted-agnt",
                 "--agent-api-base", endpoint.base_url, "--user-model", "scripted", "--out", str(out)])
    assert code != 0 and time.perf_counter() - started < 30
    err = capsys.readouterr().err
    assert "openai/scripted-agnt" in err and "agent" in err and "404" in err
    assert not out.exists()


def test_parameters_the_provider_takes_not_are_reported(endpoint):
    notes: list[str] = []
    reports = probe_models({"agent": {"model": "deepinfra/scripted-agent", "api_base": endpoint.base_url}},
                           seed=3, notes=notes.append)
    assert [r.dropped for r in reports] == [("seed",)]
    assert len(notes) == 1 and "deepinfra/scripted-agent" in notes[0] and "takes no seed" in notes[0]
    assert probe_models({"agent": _spec(endpoint, "scripted-agent")}, seed=3, notes=notes.append)[0].dropped == ()
    assert len(notes) == 1

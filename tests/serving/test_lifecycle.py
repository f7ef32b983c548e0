"""Deploy, route, refuse and tear down served models on the shared local Ray.

The vLLM backend runs with its engine faked (``fake_engine``: Ray's real
``LLMConfig``, a stand-in OpenAI ingress), which is how it is verified on a
machine without a GPU; the startup failure uses llama.cpp with resources no
node has, so no model is ever loaded.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tauray.actors.llm import ModelClient, ModelSpec
from tauray.actors.serving import ServedModels, ServeStartError, lifecycle, llm_config_kwargs
from tauray.actors.serving.spec import ServeSpec

from . import fake_engine
from .conftest import smollm2_spec


def _tauray_apps() -> list[str]:
    from ray import serve

    try:
        return [a for a in serve.status().applications if a.startswith(lifecycle.APP_PREFIX)]
    except Exception:  # Serve shut down
        return []


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError:
        return 0


def test_vllm_config_follows_the_spec():
    spec = ServeSpec(backend="vllm", model_source="Qwen/Qwen2.5-0.5B-Instruct", replicas=2, num_gpus=1,
                     resources={"gpu_node": 1}, engine_kwargs={"max_model_len": 4096, "tensor_parallel_size": 1},
                     accelerator_type="A10G", health_check_timeout_s=60)
    kwargs = llm_config_kwargs("qwen-small", spec)
    config = fake_engine.module().LLMConfig(**kwargs)  # Ray Serve LLM's own validation
    assert config.model_id == "qwen-small"
    assert config.deployment_config["num_replicas"] == 2
    assert config.deployment_config["health_check_timeout_s"] == 60
    assert config.deployment_config["graceful_shutdown_timeout_s"] == 5  # tauray's default, not Serve's 20
    assert config.deployment_config["graceful_shutdown_wait_loop_s"] == 0.5
    assert config.engine_kwargs == {"max_model_len": 4096, "tensor_parallel_size": 1}
    assert config.accelerator_type == "A10G"
    assert config.placement_group_config == {"bundle_per_worker": {"GPU": 1.0, "gpu_node": 1.0, "CPU": 1.0}}


def test_vllm_backend_with_faked_engine_serves_and_tears_down(ray_local, monkeypatch):
    """With no Serve running, the run starts it (proxies on loopback) and shuts it down after."""
    from ray import serve

    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake_engine.module())
    monkeypatch.setattr(lifecycle, "check_backend", lambda spec: None)  # no vLLM on this machine
    serve.shutdown()  # whatever an earlier test left running
    spec = {"model": "openai/fake-vllm", "serve": {"backend": "vllm", "model_source": "org/some-model",
                                                   "replicas": 1, "num_cpus": 0, "startup_timeout_s": 60}}
    with ServedModels([spec]) as served:
        assert served._own_serve and lifecycle.serve_running()
        base = served.bases["fake-vllm"]
        assert base.startswith("http://127.0.0.1:") and base.endswith("/tauray-fake-vllm/v1")
        resolved = ModelSpec.model_validate(served.resolve(spec))
        reply = asyncio.run(ModelClient(resolved).complete([{"role": "user", "content": "hi"}]))
        assert reply.content == "fake engine: 1 messages" and reply.prompt_tokens == 7
        assert fake_engine.BUILT[-1].model_id == "fake-vllm"
        assert _tauray_apps() == ["tauray-fake-vllm"]
    assert not lifecycle.serve_running()
    assert _status(f"{base}/models") != 200


def test_a_run_that_found_serve_running_leaves_it_running(serve_up, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake_engine.module())
    monkeypatch.setattr(lifecycle, "check_backend", lambda spec: None)
    spec = {"model": "openai/fake-found", "serve": {"backend": "vllm", "model_source": "org/m", "num_cpus": 0}}
    with ServedModels([spec]) as served:
        assert not served._own_serve and _tauray_apps() == ["tauray-fake-found"]
    assert lifecycle.serve_running() and _tauray_apps() == []  # its application went down, Serve did not


def test_llamacpp_deployment_follows_the_spec():
    from tauray.actors.serving.llamacpp import llamacpp_app

    spec = ServeSpec.model_validate(smollm2_spec(replicas=2, resources={"llm_node": 1})["serve"])
    config = llamacpp_app("smol", spec)._bound_deployment._deployment_config
    assert config.num_replicas == 2 and config.max_ongoing_requests == 8
    # a replica that never got a node holds the teardown this long (Serve's own default: 20 s)
    assert config.graceful_shutdown_timeout_s == spec.shutdown_timeout_s == 5
    assert config.graceful_shutdown_wait_loop_s == 0.5  # nothing is in flight when a run tears down


def test_unplaceable_replica_is_refused_with_serves_reason(serve_up):
    spec = smollm2_spec("nowhere", resources={"gpu_node_that_does_not_exist": 1}, startup_timeout_s=4,
                        shutdown_timeout_s=1)
    served = ServedModels([spec])
    with pytest.raises(ServeStartError) as err:
        served.start()
    text = str(err.value)
    assert "openai/nowhere" in text and "startup_timeout_s=4" in text
    assert "gpu_node_that_does_not_exist" in text
    assert _tauray_apps() == []  # nothing left behind


def test_interrupt_tears_down(serve_up, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake_engine.module())
    monkeypatch.setattr(lifecycle, "check_backend", lambda spec: None)
    spec = {"model": "openai/fake-int", "serve": {"backend": "vllm", "model_source": "org/m", "num_cpus": 0}}
    with pytest.raises(KeyboardInterrupt):
        with ServedModels([spec]) as served:
            assert served.replicas()["fake-int"]
            raise KeyboardInterrupt
    assert _tauray_apps() == []


def test_tauray_run_serves_its_agent_model(serve_up, monkeypatch, tmp_path):
    from tauray.pipeline.config import run_config
    from tauray.pipeline.driver import execute
    from tauray.results.tables.readers import messages_df

    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake_engine.module())
    monkeypatch.setattr(lifecycle, "check_backend", lambda spec: None)
    agent = {"model": "openai/fake-run", "serve": {"backend": "vllm", "model_source": "org/m", "num_cpus": 0}}
    cfg = run_config(patterns=["tau2_telecom__*"], domain="telecom", split="small", variant="manual", limit=1,
                     agent=agent, user={"model": "scripted"}, trials=1, max_steps=3)
    summary = execute(cfg, out=tmp_path / "run", probe=False, progress=False, keep_actors=True)
    assert summary.ran == 1 and summary.infra_errors == summary.internal_errors == 0
    said = messages_df(tmp_path / "run")
    assert said[(said["side"] == "agent") & said["content"].str.startswith("fake engine", na=False)].shape[0] >= 1
    assert _tauray_apps() == []


def test_a_sweep_refused_by_the_run_lock_takes_its_deployments_down(serve_up, monkeypatch, tmp_path):
    """Another driver holds the folder: the lock is taken first, so this one is refused
    before it deploys anything (and nothing is left up when it exits)."""
    from tauray.pipeline.driver import execute as run_sweep
    from tauray.pipeline.sweep_file import load_sweep
    from tauray.results.tables.lock import RunLockedError

    monkeypatch.setitem(sys.modules, "ray.serve.llm", fake_engine.module())
    monkeypatch.setattr(lifecycle, "check_backend", lambda spec: None)
    path = tmp_path / "locked.toml"
    path.write_text('name = "locked"\nagents = ["fake"]\nusers = ["scripted"]\n'
                    '[[scenarios]]\ndomain = "mock"\nlimit = 1\n'
                    '[models.fake]\nmodel = "openai/fake-locked"\n'
                    '[models.fake.serve]\nbackend = "vllm"\nmodel_source = "org/m"\nnum_cpus = 0\n')
    out = tmp_path / "out"
    out.mkdir()
    # the lock is re-entrant within one process, so the other driver is another process
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from tauray.results.tables.lock import RunLock; "
                               f"lock = RunLock({str(out)!r}); print('held', flush=True); sys.stdin.read()"],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(RunLockedError):
            run_sweep(load_sweep(path), out=out, progress=False, probe=False, keep_actors=True)
        assert _tauray_apps() == []
    finally:
        holder.communicate("", timeout=30)


def test_a_run_that_deployed_nothing_tears_down_without_importing_serve(ray_local, monkeypatch, caplog):
    """`make demo` serves nothing: its teardown must not import Ray Serve, whose own
    dependencies (grpc) a base install lacks, and must log nothing alarming."""
    import ray

    monkeypatch.setitem(sys.modules, "ray.serve", None)  # importing it fails, as without ray[serve]'s grpc
    monkeypatch.delattr(ray, "serve", raising=False)
    with caplog.at_level("WARNING"):
        ServedModels([]).stop()
    assert [r.getMessage() for r in caplog.records] == []

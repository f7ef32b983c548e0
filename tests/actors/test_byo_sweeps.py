"""The README's bring-your-own-model sweep files load, bind the roles they say and send each
provider only what it takes (no network: the probe is not run here)."""

from __future__ import annotations

from pathlib import Path

from tauray.actors.llm import ModelSpec, request_params
from tauray.pipeline.sweep_file import load_sweep

SWEEPS = Path(__file__).resolve().parents[2] / "tauray" / "data" / "sweeps"


def test_hosted_sweep(monkeypatch):
    cfg = load_sweep(SWEEPS / "hosted.toml")
    specs = cfg.probe_specs()
    judge = "judge (models.gemini-judge, overall-plain@2 with response_format)"
    assert specs.keys() == {"agent (models.claude)", "user (models.gpt-user)", judge}
    # the judge is probed as it calls: with the reply schema its structured mode sends
    assert specs[judge]["extra_params"]["response_format"]["type"] == "json_schema"
    assert specs[judge]["model"] == cfg.spec("gemini-judge")["model"]
    claude = request_params(ModelSpec.model_validate(cfg.spec("claude")))
    assert claude.seed is False and claude.params["top_k"] == 40  # no seed at Anthropic; extras pass
    for name in ("gpt-user", "gemini-judge"):
        assert request_params(ModelSpec.model_validate(cfg.spec(name))).seed is True
    assert all(cfg.spec(n)["api_key_env"].endswith("_API_KEY") for n in cfg.models)


def test_openai_compatible_sweep(monkeypatch):
    monkeypatch.setenv("MODEL_BASE", "http://127.0.0.1:8000/v1")
    cfg = load_sweep(SWEEPS / "openai-compatible.toml")
    assert cfg.probe_specs() == {"agent/user/judge (models.local)": cfg.spec("local")}
    req = request_params(ModelSpec.model_validate(cfg.spec("local")))
    assert req.seed is True and req.dropped == () and req.params["max_tokens"] == 512

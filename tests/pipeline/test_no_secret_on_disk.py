"""Issue 23's secrets rule end to end: a sweep whose secrets come through ``${VAR}``
references, credential-like ``extra_params`` (headers) for the agent and
the judge, and the cluster's ``env_vars``; afterwards no secret value is anywhere in the
output folder (every file, Parquet included, read as bytes) or in what the command printed."""

from __future__ import annotations

import textwrap

from tauray.endpoint import start_endpoint

SECRETS = {"TAURAY_T_HEADER": "S3CRET-HEADER-2"}

SWEEP = """
name = "sec"
agents = ["a"]
users = ["scripted"]
judges = [{{model = "j", prompt = "overall-plain"}}]
[[scenarios]]
domain = "mock"
limit = 2
[models.a]
model = "openai/scripted-agent"
api_base = "{base}"
extra_params = {{extra_headers = {{X-Api-Token = "${{TAURAY_T_HEADER}}"}}}}
[models.j]
model = "openai/judge-good"
api_base = "{base}"
extra_params = {{extra_headers = {{Authorization = "Bearer ${{TAURAY_T_HEADER}}"}}}}
[cluster.runtime_env.env_vars]
OPENAI_API_KEY = "S3CRET-ENV-3"
"""


def test_no_secret_reaches_the_output_folder_or_the_output(ray_local, tmp_path, monkeypatch, capsys):
    from tauray.pipeline.cli.main import main

    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)
    out = tmp_path / "out"
    with start_endpoint() as ep:
        path = tmp_path / "sec.toml"
        path.write_text(textwrap.dedent(SWEEP.format(base=ep.base_url)))
        code = main(["sweep", str(path), "--out", str(out), "--json", "--no-progress"])
    printed = capsys.readouterr()
    assert code == 0, printed.err[-2000:]
    files = [p for p in out.rglob("*") if p.is_file()]
    assert any(p.suffix == ".parquet" for p in files) and (out / "sweep.json").exists()
    for secret in [*SECRETS.values(), "S3CRET-ENV-3"]:
        assert secret not in printed.out and secret not in printed.err
        leaked = [str(p.relative_to(out)) for p in files if secret.encode() in p.read_bytes()]
        assert not leaked, (secret, leaked)
    assert "<redacted>" in (out / "sweep.json").read_text()  # the headers and env_vars values are left out

"""Bringing ``serve:`` models up on the cluster for one run, and down again however it ends.

Each distinct served model becomes one Ray Serve application whose route is
``/tauray-<name>``, behind Serve's HTTP proxy bound to 127.0.0.1 on a free
port (Serve runs a proxy on every node, so a host on any node reaches the model
at the same loopback address). The model specs are then rewritten to point
``api_base`` at that route, and from there on a served model is an ordinary
OpenAI-compatible model to litellm: the Router retries what a dying replica
dropped, costs and tables do not know the difference. ``api_base`` is an
operational field, so unit ids (and resume) do not depend on the port.

Startup is bounded by the spec's ``startup_timeout_s``; a deployment that fails,
cannot be placed (no node has the GPUs or custom resources asked for) or does
not answer in time stops the run with Serve's own explanation, before any unit.
Teardown deletes the applications (and shuts Serve down when this run started
it) on normal exit, on an exception or Ctrl-C, and, as a backstop, at
interpreter exit, because Serve's controller outlives the driver on a cluster.
"""

from __future__ import annotations

import atexit
import importlib.util
import logging
import socket
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping
from typing import Any

from tauray.actors.serving.llama_build import amx_problem
from tauray.actors.serving.llama_worker import crash_line
from tauray.actors.serving.llamacpp import llamacpp_app
from tauray.actors.serving.spec import ServeSpec, ServeSpecError, served_name
from tauray.actors.serving.vllm import vllm_app

log = logging.getLogger(__name__)

APP_PREFIX = "tauray-"
_QUIET = {"log_level": "WARNING"}


class ServeStartError(RuntimeError):
    """A served model did not come up; the message names it and says what Serve reported."""


def collect(specs: Iterable[Mapping[str, Any]]) -> dict[str, ServeSpec]:
    """The distinct served models among model-spec dicts, by served name.

    The same name with two different ``serve`` blocks is refused: both would answer at one route.
    """
    found: dict[str, ServeSpec] = {}
    for spec in specs:
        raw = spec.get("serve")
        if not raw:
            continue
        name = served_name(str(spec.get("model", "")))
        serve = raw if isinstance(raw, ServeSpec) else ServeSpec.model_validate(raw)
        if name in found and found[name] != serve:
            raise ServeSpecError(f"model 'openai/{name}' is served with two different serve blocks; "
                                 "give them different names")
        found[name] = serve
    return found


def check_backend(spec: ServeSpec) -> None:
    """The driver can deploy ``spec``: Ray Serve and the backend's package are installed."""
    extra = "llamacpp" if spec.backend == "llamacpp" else "vllm"
    need = ["ray.serve", "starlette"] + (["llama_cpp"] if spec.backend == "llamacpp" else ["vllm"])
    for module in need:
        try:
            ok = importlib.util.find_spec(module) is not None
            if ok and module == "ray.serve":
                import ray.serve  # noqa: F401  (fails when ray[serve]'s own dependencies are missing)
        except ImportError:
            ok = False
        if not ok:
            raise ServeSpecError(f"serve backend {spec.backend!r} needs the Python module {module!r}: "
                                 f"pip install 'tauray[{extra}]'")
    if spec.backend == "llamacpp" and (problem := amx_problem()) is not None:
        raise ServeSpecError(problem)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str, timeout: float) -> int:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return int(r.status)
    except urllib.error.HTTPError as e:
        return int(e.code)
    except OSError:
        return 0


def _serve_client() -> Any:
    """Serve's client on the connected cluster, or None when no Serve controller runs there."""
    from ray.serve.context import _get_global_client

    try:
        return _get_global_client(raise_if_no_controller_running=True)
    except Exception:
        return None


def serve_running() -> bool:
    return _serve_client() is not None


def start_serve() -> tuple[int, bool]:
    """Ray Serve running on the connected cluster, its proxies on 127.0.0.1 (a free port) on
    every node; returns the proxy port and whether this call started Serve. Serve that was
    already running (started by an earlier run of this driver, or by whoever runs the
    cluster) is used as it is, and left running by the runs that found it."""
    from ray import serve

    logging.getLogger("ray.serve").setLevel(logging.WARNING)  # its INFO lines would drown the progress display
    client = _serve_client()
    started = client is None
    if started:
        serve.start(http_options={"host": "127.0.0.1", "port": _free_port()}, proxy_location="EveryNode",
                    logging_config=_QUIET)
        client = _serve_client()
    port = int(client.http_config.port)
    if client.http_config.host not in ("127.0.0.1", "localhost"):
        log.warning("Ray Serve was already running with its proxy on %s; served models are reached "
                    "through 127.0.0.1:%s", client.http_config.host, port)
    return port, started


def placement(spec: Any) -> str:
    """What a deployment's replicas ask of a node, in the words of its spec."""
    return f"num_cpus={spec.num_cpus:g}, num_gpus={spec.num_gpus:g}, resources={spec.resources}"


def deploy(app_name: str, target: Any, route_prefix: str | None, what: str, asks: str, timeout_s: float) -> str:
    """Start ``target`` as Serve application ``app_name`` and wait until it runs; returns Serve's
    account of it. A deployment that fails, or is not running after ``timeout_s`` (one that waits
    for a node offering ``asks`` never is), raises :class:`ServeStartError` naming ``what``; the
    caller deletes the application then as after a normal run."""
    from ray import serve

    serve.run_many([serve.RunTarget(target=target, name=app_name, route_prefix=route_prefix, logging_config=_QUIET)],
                   wait_for_ingress_deployment_creation=False, wait_for_applications_running=False)
    deadline = time.monotonic() + timeout_s
    detail = "not reported yet"
    while True:
        app = serve.status().applications.get(app_name)
        if app is not None:
            status = str(getattr(app.status, "value", app.status))
            notes = [f"{d}: {s.message}" for d, s in app.deployments.items() if s.message]
            detail = "; ".join([f"status {status}", *([app.message] if app.message else []), *notes])
            if status == "RUNNING":
                return detail
            if status in ("DEPLOY_FAILED", "UNHEALTHY"):
                if (crash := crash_line(detail)) is not None:
                    raise ServeStartError(crash)  # it names the model, its deployment and its file
                raise ServeStartError(f"{what} failed to start: {detail}")
        if time.monotonic() >= deadline:
            raise ServeStartError(f"{what} not running after startup_timeout_s={timeout_s:g} ({detail}); if it "
                                  f"waits for resources, no node offers {asks}")
        time.sleep(0.5)


def teardown(apps: list[str], own_serve: bool) -> None:
    """Delete Serve applications ``apps`` and, when ``own_serve`` (the run started it), Serve
    itself; every failure is a warning, so teardown never hides what ended the run."""
    if not apps and not own_serve:  # nothing deployed: Serve need not even import
        return
    try:
        import ray

        if not ray.is_initialized():
            return
        from ray import serve

        for app in apps:
            try:
                serve.delete(app)
            except Exception as exc:  # teardown goes on with the others
                log.warning("could not delete Serve application %s: %s", app, exc)
        if own_serve:
            serve.shutdown()
    except Exception as exc:
        log.warning("Ray Serve teardown failed: %s", exc)


class ServeRun:
    """What one run deployed on Ray Serve, deleted by :meth:`stop` (with Serve, when this run
    started it; safe to call twice, and at exit); a context manager around ``start()``.
    Subclasses name each application in ``_apps`` before deploying it."""

    def __init__(self) -> None:
        self._apps: list[str] = []
        self._own_serve = False
        self._stopped = False

    def start(self) -> Any:
        raise NotImplementedError

    def stop(self) -> None:
        """Delete this run's applications (and Serve, when this run started it); safe to call twice."""
        if self._stopped:
            return
        self._stopped = True
        try:
            atexit.unregister(self.stop)
        except Exception:
            pass
        teardown(self._apps, self._own_serve)

    def __enter__(self) -> Any:
        self.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class ServedModels(ServeRun):
    """The served models of one run; a context manager (``with ServedModels(specs) as s:``)."""

    def __init__(self, specs: Iterable[Mapping[str, Any]]) -> None:
        super().__init__()
        self.models = collect(specs)
        self.port: int | None = None
        self.bases: dict[str, str] = {}

    def __bool__(self) -> bool:
        return bool(self.models)

    # ------------------------------------------------------------------ start

    def start(self) -> dict[str, str]:
        """Deploy every served model and wait until each answers; returns name -> api_base."""
        if not self.models or self.bases:
            return self.bases
        for spec in self.models.values():
            check_backend(spec)
        atexit.register(self.stop)
        try:
            self._start_serve()
            for name, spec in self.models.items():
                self._deploy(name, spec)
        except BaseException:
            self.stop()
            raise
        return self.bases

    def _start_serve(self) -> None:
        self.port, self._own_serve = start_serve()

    def _deploy(self, name: str, spec: ServeSpec) -> None:
        build = llamacpp_app if spec.backend == "llamacpp" else vllm_app
        app_name = APP_PREFIX + name
        base = f"http://127.0.0.1:{self.port}/{app_name}/v1"
        deadline = time.monotonic() + spec.startup_timeout_s
        self._apps.append(app_name)  # deleted by stop() however the start ends
        last = deploy(app_name, build(name, spec), f"/{app_name}", f"served model 'openai/{name}' ({spec.backend})",
                      placement(spec), spec.startup_timeout_s)
        # The application is running; the proxy learns its route a moment later.
        while time.monotonic() < deadline:
            if _get(f"{base}/models", timeout=5.0) == 200:
                self.bases[name] = base
                return
            time.sleep(0.25)
        raise ServeStartError(f"served model 'openai/{name}': running in Serve ({last}) but {base}/models "
                              f"did not answer within startup_timeout_s={spec.startup_timeout_s:g}")

    # ------------------------------------------------------------------ use

    def resolve(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """``spec`` with ``api_base`` pointing at its deployment (unchanged when it is not served)."""
        out = dict(spec)
        if out.get("serve"):
            out["api_base"] = self.bases[served_name(str(out["model"]))]
        return out

    def replicas(self) -> dict[str, list[str]]:
        """Names of the live replica actors (namespace ``serve``) per served model, for fault tests."""
        import ray

        named = ray.util.list_named_actors(all_namespaces=True)
        return {name: sorted(a["name"] for a in named if a.get("namespace") == "serve"
                             and a["name"].startswith(f"SERVE_REPLICA::{APP_PREFIX}{name}#"))
                for name in self.models}


def unserved(specs: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
    """``specs`` without the served models that have no address yet (probed once deployed)."""
    return {k: v for k, v in specs.items() if not (v.get("serve") and not v.get("api_base"))}


__all__ = ["APP_PREFIX", "ServeRun", "ServeStartError", "ServedModels", "check_backend", "collect", "deploy",
           "placement", "start_serve", "teardown", "unserved"]

"""`make mutate`: mutation testing of tauray's pure core with mutmut, and its score.

Why a wrapper: mutmut works in a copy of the tree and puts it first on ``sys.path``, ahead
of the editable install. This script lays that copy out (``build/mutation/tauray/...``, the
package folder as it is, with the test pool beside it) and runs mutmut there (mutmut copies
it once more into ``build/mutation/mutants/``), so the working tree is never
touched and other test runs in it are not disturbed. It then reads mutmut's results,
takes out the mutants listed in ``dev/mutation/equivalent.toml`` (each with its reason,
checked against the mutant's actual diff), and prints a score per module and the
closing line::

    mutation score: P% (killed K of N, equivalent E)

where N counts every mutant made, E the listed equivalents among them, K those a test
failed on (a timeout counts as killed, as mutmut counts it), and P = K / (N - E).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time
import tomllib
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
WORK = Path(os.environ.get("MUTATE_WORK") or ROOT / "build" / "mutation").resolve()  # mutmut's working folder
PACKAGE = "tauray"
KILLED = {"killed", "timeout", "caught by type check", "segfault"}


def _toml(value) -> str:
    """TOML for the few value shapes this script writes (strings, numbers, bools, lists)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    return "[" + ", ".join(_toml(v) for v in value) + "]"


def stage(scope: dict, project: dict, jobs: int) -> None:
    """Lay the package out as imported (the folder ``tauray/`` as it is), the test pool beside it, and
    mutmut's config."""
    if WORK.exists():
        shutil.rmtree(WORK)
    WORK.mkdir(parents=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / PACKAGE, WORK / PACKAGE, ignore=ignore)
    shutil.copytree(ROOT / "tests", WORK / "tests", ignore=ignore)
    for extra in scope.get("also_copy", []):  # repository files the tests read (docs/tables.md)
        src = ROOT / extra
        (shutil.copytree(src, WORK / extra, ignore=ignore) if src.is_dir()
         else shutil.copy2(src, WORK / extra))

    only = list(scope["modules"])
    selection = list(scope["tests"])
    for d in scope.get("deselect", []):
        selection += ["--deselect", d]
    pytest_cfg = project["tool"].get("pytest", {}).get("ini_options", {})
    lines = [
        "# Written by dev/mutation/run.py for one run; edit dev/mutation/scope.toml instead.",
        "[tool.mutmut]",
        f"source_paths = {_toml([PACKAGE])}",
        f"only_mutate = {_toml(only)}",
        f"also_copy = {_toml(scope.get('also_copy', []))}",
        f"pytest_add_cli_args = {_toml(['-p', 'no:cacheprovider', '-q'])}",
        f"pytest_add_cli_args_test_selection = {_toml(selection)}",
        "",
        "[tool.pytest.ini_options]",
    ]
    for key, value in pytest_cfg.items():
        if key == "addopts":
            continue  # mutmut passes its own flags; -ra summaries only slow it down
        lines.append(f"{key} = {_toml(value)}")
    (WORK / "pyproject.toml").write_text("\n".join(lines) + "\n")


def load_equivalents() -> dict[str, dict]:
    path = HERE / "equivalent.toml"
    if not path.exists():
        return {}
    data = tomllib.loads(path.read_text())
    out = {}
    for entry in data.get("mutant", []):
        for field in ("name", "mutated", "reason"):
            if not entry.get(field):
                raise SystemExit(f"{path}: an [[mutant]] entry lacks '{field}': {entry}")
        out[entry["name"]] = entry
    for entry in data.get("import_time", []):
        for field in ("function", "reason"):
            if not entry.get(field):
                raise SystemExit(f"{path}: an [[import_time]] entry lacks '{field}': {entry}")
        out[entry["function"] + "__mutmut_*"] = entry
    return out


def _equivalent(name: str, diff: str, equivalents: dict[str, dict]) -> tuple[bool, bool]:
    """(listed as equivalent and still matching, listed but stale) for one surviving mutant."""
    function = name.rsplit("__mutmut_", 1)[0] + "__mutmut_*"
    if function in equivalents:  # every mutant of a function that runs only at import
        return True, False
    eq = equivalents.get(name)
    if eq is None:
        return False, False
    matches = eq["mutated"].strip() in _mutated_lines(diff)
    return matches, not matches


@contextmanager
def _cwd(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def collect(scope: dict, project: dict) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """mutmut's verdict of every mutant, by repo module, and each survivor's diff."""
    with _cwd(WORK):
        sys.path.insert(0, str(WORK))
        from mutmut.mutation.data import SourceFileMutationData
        from mutmut.mutation.diff_apply import get_diff_for_mutant
        from mutmut.stats import status_by_exit_code

        by_module: dict[str, dict[str, str]] = {}
        diffs: dict[str, str] = {}
        for module in scope["modules"]:
            path = Path(module)
            data = SourceFileMutationData(path=path)
            data.load()
            by_module[module] = {k: status_by_exit_code[v] for k, v in data.exit_code_by_key.items()}
            for name, status in by_module[module].items():
                if status not in KILLED and status != "not checked":
                    diffs[name] = get_diff_for_mutant(name, path=path)
    return by_module, diffs


def _mutated_lines(diff: str) -> list[str]:
    return [line[1:].strip() for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]


def report(by_module: dict[str, dict[str, str]], diffs: dict[str, str], equivalents: dict[str, dict],
           seconds: float | None, survivors_file: Path) -> float:
    stale = []
    rows = []
    tot = Counter()
    survivors: list[str] = []
    unchecked = 0
    for module, statuses in by_module.items():
        unchecked += sum(s == "not checked" for s in statuses.values())
        statuses = {name: s for name, s in statuses.items() if s != "not checked"}
        n = len(statuses)
        k = sum(s in KILLED for s in statuses.values())
        e = 0
        for name, status in statuses.items():
            if status in KILLED:
                continue
            listed, is_stale = _equivalent(name, diffs[name], equivalents)
            if listed:
                e += 1
                continue
            if is_stale:
                stale.append(name)
            survivors.append(f"# {name}: {status}\n{diffs[name]}\n")
        score = 100.0 * k / (n - e) if n - e else (100.0 if n else math.nan)
        rows.append((module, n, k, e, score))
        tot.update(n=n, k=k, e=e)

    survivors_file.write_text("\n".join(survivors))
    width = max(len(r[0]) for r in rows)
    print(f"\n{'module':<{width}}  {'mutants':>7}  {'killed':>6}  {'equiv':>5}  {'score':>6}")
    for module, n, k, e, score in rows:
        shown = "-" if math.isnan(score) else f"{score:.1f}%"
        print(f"{module:<{width}}  {n:>7}  {k:>6}  {e:>5}  {shown:>6}")
    if stale:
        print(f"\n{len(stale)} entries of dev/mutation/equivalent.toml no longer match their mutant's diff "
              f"(the code moved): {', '.join(stale)}")
    print(f"\nsurvivors ({len(survivors)}): {survivors_file}  (diffs; `mutmut show NAME` in {WORK})")
    print(f"time: {seconds:.0f} s" if seconds is not None else "time: run still going (or interrupted)")
    if unchecked:
        print(f"INCOMPLETE: {unchecked} mutants not checked yet (run interrupted or still going); "
              f"the score below counts only the {tot['n']} checked")
    n, k, e = tot["n"], tot["k"], tot["e"]
    p = 100.0 * k / (n - e) if n - e else (100.0 if n else 0.0)  # nothing checked proves nothing
    print(f"mutation score: {p:.1f}% (killed {k} of {n}, equivalent {e})")
    return p


def check(mutant: str, tests: list[str]) -> int:
    """One mutant against the given tests, in the last run's mutated tree (mutmut's trampolines
    switch the mutant on by name). Do not use while a run is going: it refreshes its tests."""
    mutants = WORK / "mutants"
    if not mutants.is_dir():
        raise SystemExit("no mutation run to check against: run `make mutate` first")
    shutil.copytree(ROOT / "tests", mutants / "tests", dirs_exist_ok=True,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    env = {**os.environ, "MUTANT_UNDER_TEST": mutant, "PYTHONDONTWRITEBYTECODE": "1"}
    rc = subprocess.call([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", *tests],
                         cwd=mutants, env=env)
    print(f"{mutant}: {'killed' if rc else 'survived'} by {' '.join(tests) or 'the whole suite'}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--jobs", type=int, default=int(os.environ.get("MUTATE_JOBS", "2")),
                    help="mutants checked at once (default 2, or $MUTATE_JOBS)")
    ap.add_argument("--module", action="append", default=None,
                    help="only this repo module (repeatable), e.g. scenarios/scoring.py")
    ap.add_argument("--report-only", action="store_true", help="re-read the last run's results")
    ap.add_argument("--check", metavar="MUTANT", help="run tests (the paths after --) against one mutant of the "
                    "last run, with the working tree's tests copied in: see a new test fail on its mutant")
    args, rest = ap.parse_known_args(argv)
    if args.check:
        return check(args.check, [a for a in rest if a != "--"])
    if rest:
        ap.error(f"unrecognized arguments: {' '.join(rest)}")

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    scope = tomllib.loads((HERE / "scope.toml").read_text())
    if args.module:
        unknown = sorted(set(args.module) - set(scope["modules"]))
        if unknown:
            raise SystemExit(f"--module: not in dev/mutation/scope.toml: {unknown}; known: {scope['modules']}")
        scope["modules"] = args.module
    equivalents = load_equivalents()

    t0 = time.monotonic()
    if not args.report_only:
        stage(scope, project, args.jobs)
        env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
        cmd = [sys.executable, "-m", "mutmut", "run", "--max-children", str(args.jobs)]
        log = WORK / "mutmut.log"
        print(f"mutmut over {len(scope['modules'])} modules, {args.jobs} jobs; log: {log}",
              flush=True)
        with open(log, "w") as fh:
            rc = subprocess.call(cmd, cwd=WORK, env=env, stdout=fh, stderr=subprocess.STDOUT)
        if rc != 0:
            sys.stdout.write(log.read_text()[-4000:])
            print(f"mutmut exited {rc}; see {log}")
            return rc
        (WORK / "duration_s").write_text(f"{time.monotonic() - t0:.0f}\n")
    elif args.module:
        raise SystemExit("--report-only reads the last run whole; --module does not apply")
    duration = WORK / "duration_s"
    seconds = float(duration.read_text()) if duration.exists() else None
    by_module, diffs = collect(scope, project)
    report(by_module, diffs, equivalents, seconds, WORK / "survivors.txt")
    return 0


if __name__ == "__main__":
    sys.exit(main())

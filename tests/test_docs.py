"""Every command, sub-command, option, path and module the docs name exists.

README.md and docs/*.md are scanned for ``tauray <command> [<sub>] --option …`` (and the
developer's ``python -m dev.bench …`` / ``python -m dev.calibration …``) in code blocks and in
inline code, and for ``make <target>``; each is looked up in the real argparse parser
(:func:`tauray.pipeline.cli.main.build_parser`, the dev modules' ``parser()``) and in the
Makefile. Every repository path (``tauray/…``, ``tests/…``, ``dev/…``, ``docs/…``) and every
dotted name (``tauray.actors.llm.usable.probe_models``) the docs name must exist. A doc that
names something that is gone fails here, naming the file and line.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from dev.bench.__main__ import parser as bench_parser
from dev.calibration.__main__ import parser as calibration_parser
from tauray.pipeline.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

# Where a command line ends: a pipe, a chained command, a redirection, a comment.
_END = {"|", "||", "&&", ";", ">", ">>", "2>&1", "&"}
_NAME = re.compile(r"[a-z][a-z0-9-]*")
_OPTION = re.compile(r"(--[a-z0-9][a-z0-9-]*|-[a-zA-Z])(=.*)?")
# A command line: ``tauray`` first (after a prompt or VAR=value settings), or run as a module or
# from a bin folder, or after ``--`` (``ray job submit -- …``); not the word in a sentence.
_TAURAY = re.compile(r"(?:^\s*(?:\$\s+)?(?:[A-Za-z_]+=\S*\s+)*|-m\s+|/bin/|--\s+)tauray\s+(.*)")
_MAKE = re.compile(r"(?:^|(?<=[\s(`]))make\s+([a-z][a-z0-9-]*)")
_DEV = re.compile(r"-m\s+(dev\.bench|dev\.calibration)\b(.*)")
DEV_PARSERS = {"dev.bench": bench_parser, "dev.calibration": calibration_parser}


def code_lines(text: str) -> list[tuple[int, str]]:
    """(line number, text) of what is code: lines of fenced blocks without their ``#``
    comments (a trailing ``\\`` joins the next line), and every inline code span of the
    prose (one may run over a line break)."""
    out: list[tuple[int, str]] = []
    prose: list[str] = []
    fenced = False
    pending: tuple[int, str] | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            prose.append("")
            continue
        prose.append("" if fenced else line)
        if not fenced:
            continue
        line = re.sub(r"(^|\s)#.*", "", line)
        if pending is not None:
            line, number = pending[1] + " " + line.strip(), pending[0]
            pending = None
        if line.rstrip().endswith("\\"):
            pending = (number, line.rstrip()[:-1])
            continue
        out.append((number, line))
    joined = "\n".join(prose)
    for span in re.finditer(r"`([^`]+)`", joined):
        out.append((joined.count("\n", 0, span.start()) + 1, span.group(1).replace("\n", " ")))
    return sorted(out)


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def check_command(parser: argparse.ArgumentParser, words: list[str], prog: str = "tauray") -> list[str]:
    """What of one ``tauray …`` (or ``prog …``) command line does not exist (empty: all of it does)."""
    problems: list[str] = []
    command: list[str] = []
    current = parser
    for word in words:
        if word in _END or word.startswith("#"):
            break
        word = word.strip(",.;:)`'\"")
        choices = subparsers(current)
        if choices and not word.startswith("-"):
            if not _NAME.fullmatch(word):  # a placeholder (<command>, COMMAND, …): nothing to check
                break
            if word not in choices:
                problems.append(f"`{prog} {' '.join(command + [word])}`: no such command "
                                f"(there are: {', '.join(choices)})")
                break
            command.append(word)
            current = choices[word]
            continue
        option = _OPTION.fullmatch(word)
        if option and option.group(1) not in current._option_string_actions:
            problems.append(f"`{' '.join([prog, *command])}` has no option {option.group(1)}")
    return problems


def make_targets(makefile: Path) -> set[str]:
    text = makefile.read_text()
    targets = set(re.findall(r"^([a-z][a-z0-9-]*)\s*:(?!=)", text, re.M))
    for phony in re.findall(r"^\.PHONY:(.*)$", text, re.M):
        targets |= set(phony.split())
    return targets


def doc_problems(text: str, parser: argparse.ArgumentParser, targets: set[str]) -> list[str]:
    """Every command, option and make target a doc's code names that does not exist."""
    problems: list[str] = []
    for number, line in code_lines(text):
        for match in _TAURAY.finditer(line):
            problems += [f"line {number}: {p}" for p in check_command(parser, match.group(1).split())]
        for match in _DEV.finditer(line):
            dev = DEV_PARSERS[match.group(1)]()
            problems += [f"line {number}: {p}" for p in check_command(dev, match.group(2).split(),
                                                                      f"python -m {match.group(1)}")]
        for target in _MAKE.findall(line):
            if target not in targets:
                problems.append(f"line {number}: `make {target}`: no such target in the Makefile")
    return problems


def test_every_documented_command_option_and_make_target_exists():
    parser, targets = build_parser(), make_targets(ROOT / "Makefile")
    problems = [f"{doc.relative_to(ROOT)} {p}" for doc in DOCS for p in doc_problems(doc.read_text(), parser, targets)]
    assert not problems, "the docs name what does not exist:\n" + "\n".join(problems)


def test_the_scan_finds_what_the_docs_name_and_fails_on_what_is_missing():
    parser, targets = build_parser(), make_targets(ROOT / "Makefile")
    good = ("Run `tauray sweep my.toml --resume` or\n```\ntauray scenarios validate --domain telecom \\\n"
            "    --split full --json | jq .\nmake test-fast\n```\n")
    assert doc_problems(good, parser, targets) == []
    bad = ("Try `tauray sweep my.toml --no-such-flag`.\n```\ntauray scenarios validat --domain telecom\n"
           "tauray bench engine \\\n  --bogus 3\nmake no-such-target\n```\n")
    problems = doc_problems(bad, parser, targets)
    assert problems == [
        "line 1: `tauray sweep` has no option --no-such-flag",
        "line 3: `tauray scenarios validat`: no such command (there are: list, validate)",
        "line 4: `tauray bench engine` has no option --bogus",
        "line 6: `make no-such-target`: no such target in the Makefile",
    ], problems


# --- paths and dotted names -------------------------------------------------------------------

_TOPS = ("tauray", "tests", "dev", "docs", "cmake", ".ci")
_PATH = re.compile(r"(?<![\w./-])((?:%s)/[\w./*-]*[\w*/])" % "|".join(re.escape(t) for t in _TOPS))
_DOTTED = re.compile(r"(?<![\w./-])(tauray(?:\.\w+)+)")


def _top_names(path: Path) -> set[str]:
    """What a module defines or imports at its top level (what ``module.name`` can reach)."""
    tree = ast.parse(path.read_text())
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return out


def dotted_exists(name: str, root: Path = ROOT) -> bool:
    """``tauray.a.b`` names a package or module, or a top-level name of one (``….Class``)."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        base = root.joinpath(*parts[:i])
        for source in (base.with_suffix(".py"), base / "__init__.py"):
            if source.is_file():
                rest = parts[i:]
                return not rest or rest[0] in _top_names(source)
        if i == len(parts) and base.is_dir():
            return True
    return False


def path_problems(text: str, root: Path = ROOT) -> list[str]:
    """Every repository path and dotted ``tauray.…`` name a doc names that does not exist."""
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        for m in _PATH.finditer(line):
            path = m.group(1).rstrip(".")
            found = any(root.glob(path)) if "*" in path else (root / path).exists()
            if not found:
                problems.append(f"line {number}: {path}: no such path")
        for m in _DOTTED.finditer(line):
            if not dotted_exists(m.group(1).rstrip("."), root):
                problems.append(f"line {number}: {m.group(1)}: no such module or name")
    return problems


def test_every_path_and_module_a_doc_names_exists():
    problems = [f"{doc.relative_to(ROOT)} {p}" for doc in DOCS for p in path_problems(doc.read_text())]
    assert not problems, "the docs name what does not exist:\n" + "\n".join(problems)


def test_the_path_check_fails_on_what_is_gone():
    text = ("See `tauray/actors/hosts.py`, `tauray/actors/voice_pool.py` and `tauray.actors.llm.usable.probe_models`,\n"
            "`tauray.actors.llm.readiness`, `tests/house/*.py`, `dev/nothing/`.\n")
    assert path_problems(text) == [
        "line 1: tauray/actors/voice_pool.py: no such path",
        "line 2: dev/nothing/: no such path",
        "line 2: tauray.actors.llm.readiness: no such module or name",
    ]

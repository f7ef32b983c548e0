"""The product's import graph read from its source (ast): which module imports which, where.

The package is the folder ``tauray/`` as it is installed, so a module's name is its path.
"""

from __future__ import annotations

import ast
import functools
import gc
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tauray"


@dataclass(frozen=True)
class Import:
    importer: str          # module name
    path: str              # file, relative to the repository
    line: int
    target: str            # the imported module (or the package a name came from)
    local: bool            # inside a function body
    lazy_reason: str | None  # the `# lazy: ...` comment on its line, if any
    typing_only: bool = False  # under `if TYPE_CHECKING:` (never run, so no cycle and no cost)


@functools.cache
def modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        found[name.removesuffix(".__init__")] = path
    return found


def _inside_function(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    p = parents.get(node)
    while p is not None:
        if isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return True
        p = parents.get(p)
    return False


def _typing_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    p = parents.get(node)
    while p is not None:
        if isinstance(p, ast.If) and "TYPE_CHECKING" in ast.unparse(p.test):
            return True
        p = parents.get(p)
    return False


@functools.cache
def parse(text: str) -> ast.Module:
    """``ast.parse`` with the garbage collector held off. CPython 3.11.7's AST constructor is not
    re-entrant: a collection mid-parse whose finalizers build an AST (in the suite: the asyncio
    tasks earlier tests' litellm calls left pending, logged as they are destroyed) makes it raise
    ``SystemError: AST constructor recursion depth mismatch`` (reproduced with a finalizer that
    parses: 318 errors in 400 files without this, none with it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(text)
    finally:
        if enabled:
            gc.enable()


def imports() -> tuple[Import, ...]:
    known = modules()
    out = []
    for name, path in known.items():
        text = path.read_text()
        lines = text.splitlines()
        tree = parse(text)
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                # `from pkg import sub` imports the submodule when there is one
                targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                           for a in node.names]
            else:
                continue
            segment = " ".join(lines[node.lineno - 1: node.end_lineno])
            reason = segment.split("# lazy:", 1)[1].strip() if "# lazy:" in segment else None
            for target in dict.fromkeys(targets):
                out.append(Import(name, str(path.relative_to(ROOT)), node.lineno, target,
                                  _inside_function(node, parents), reason, _typing_only(node, parents)))
    return tuple(out)


def cycles(edges: list[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    graph: dict[str, set[str]] = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    break
                if child in on:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def product_edges(local: bool | None = None) -> list[tuple[str, str]]:
    """Edges between product modules; ``local`` True/False: only function-local / top-level imports."""
    known = modules()
    return [(i.importer, i.target) for i in imports()
            if i.target in known and not i.typing_only and (local is None or i.local == local)]

"""docs/architecture.md's layout is the tree: every package and module of the product (``tauray/``)
and of the developer folder (``dev/``) is named there, and nothing named there is absent. README's
layout section names every top-level folder of the repository."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

from tests.house.imports import ROOT

DOC = ROOT / "docs" / "architecture.md"
ROOMS = ("tauray", "dev")
_ENTRY = re.compile(r"^( *)([\w.-]+/|[\w.-]+\.py)(?:\s|$)")


def layout_block(text: str) -> str:
    """The first fenced block under ``## Layout``."""
    section = text.split("\n## Layout", 1)[1].split("\n## ", 1)[0]
    return section.split("```", 2)[1]


def named(block: str) -> set[str]:
    """Paths the layout tree names (folders end in ``/``), from the nesting by indentation."""
    stack: list[tuple[int, str]] = []
    out: set[str] = set()
    for line in block.splitlines():
        m = _ENTRY.match(line)
        if not m:
            continue
        depth, name = len(m.group(1)), m.group(2)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        path = "".join(n for _, n in stack) + name
        out.add(path)
        if name.endswith("/"):
            stack.append((depth, name))
    return out


def tree() -> set[str]:
    """The packages (folders holding Python) and modules (not ``__init__``/``__main__``) of the rooms."""
    out: set[str] = set()
    for room in ROOMS:
        for path in (ROOT / room).rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(ROOT)
            for i in range(1, len(rel.parts)):
                out.add("/".join(rel.parts[:i]) + "/")
            if not path.name.startswith("__"):
                out.add(rel.as_posix())
    return out


def test_the_layout_names_every_package_and_module_and_nothing_else():
    doc = {p for p in named(layout_block(DOC.read_text())) if p.split("/", 1)[0] in ROOMS}
    have = tree()
    assert sorted(have - doc) == [], "in the tree, missing from docs/architecture.md's layout"
    folders_without_code = {p for p in doc - have if p.endswith("/") and (ROOT / p).is_dir()}
    assert sorted(doc - have - folders_without_code) == [], "named in docs/architecture.md's layout, not in the tree"


def test_the_check_sees_a_missing_and_an_extra_module():
    block = "tauray/   x\n  actors/   y\n    conversation.py   z\n    imaginary.py   q\n"
    got = named(block)
    assert got == {"tauray/", "tauray/actors/", "tauray/actors/conversation.py", "tauray/actors/imaginary.py"}
    assert "tauray/actors/imaginary.py" not in tree() and "tauray/actors/hosts.py" in tree() - got


def top_level_folders() -> list[str]:
    """The repository's top-level folders that git does not ignore (.gitignore's plain patterns)."""
    ignored = [line.strip().rstrip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    def has_files(folder: Path) -> bool:  # a folder git would see: some file outside a bytecode cache
        return any(f.is_file() and "__pycache__" not in f.parts for f in folder.rglob("*"))

    return sorted(f"{p.name}/" for p in ROOT.iterdir() if p.is_dir() and p.name != ".git"
                  and not any(fnmatch.fnmatch(p.name, pattern) for pattern in ignored) and has_files(p))


def test_readme_names_every_top_level_folder():
    tops = top_level_folders()
    assert "tauray/" in tops and "tests/" in tops
    readme = (ROOT / "README.md").read_text().split("\n## Layout", 1)
    assert len(readme) == 2, "README.md has no '## Layout' section"
    section = readme[1].split("\n## ", 1)[0]
    missing = [t for t in tops if f"`{t}`" not in section]
    assert missing == [], f"README's layout does not name {missing}"

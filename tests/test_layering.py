"""Imports flow one way, stage by stage: cli → the consumers → run → writers → spans/items → validate/output →
adapters → config → layouts → units → model (DESIGN.md §1, docs/architecture.md), with no module and no
function too large to read."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import ROOT

PACKAGE = ROOT / "unitize"

#: the layers, lowest first; a module may import only from lower layers (or within its own package)
LAYERS = [
    {"_version", "errors", "plugins", "cells"},
    {"runtime", "schema", "metrics"},
    {"model"},
    {"names", "units"},
    {"layouts"},
    {"config"},
    {"adapters"},
    {"validate", "output"},
    {"spans", "items", "dataset"},
    {"writers"},
    {"run"},
    {"agree", "export", "report", "adjudicate", "estimate"},
    {"cli"},
    {"__init__", "__main__"},
]
RANK = {name: i for i, layer in enumerate(LAYERS) for name in layer}


def top(path: Path) -> str:
    """The top-level module or subpackage of ``unitize`` a file belongs to."""
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def imported(path: Path) -> list[tuple[str, int]]:
    """(top-level unitize module, line) of every import of a file, relative or absolute."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    depth = len(path.relative_to(PACKAGE).parts) - 1
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                parts = list(path.relative_to(PACKAGE).parts[:depth])[: depth - node.level + 1] if node.level <= depth + 1 else []
                parts += (node.module or "").split(".") if node.module else []
                if not parts:  # `from .. import x` at the package root: x itself names the module
                    parts = [a.name for a in node.names]
                out.append((parts[0], node.lineno))
            elif node.module and node.module.split(".")[0] == "unitize":
                rest = node.module.split(".")[1:]
                out.append((rest[0] if rest else "__init__", node.lineno))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("unitize."):
                    out.append((alias.name.split(".")[1], node.lineno))
    return out


FILES = sorted(PACKAGE.rglob("*.py"))


def test_every_module_has_a_layer() -> None:
    assert {top(p) for p in FILES} <= set(RANK), {top(p) for p in FILES} - set(RANK)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_flow_one_way(path: Path) -> None:
    own = top(path)
    upward = [(m, line) for m, line in imported(path) if m != own and RANK[m] >= RANK[own]]
    assert not upward, f"{path.relative_to(ROOT)} imports from its own layer or above: {upward}"
#: the most lines of a module, and of a function (its signature, docstring and body): one screen
MODULE_LINES, FUNCTION_LINES = 400, 60


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_is_too_large_to_read(path: Path) -> None:
    assert len(path.read_text(encoding="utf-8").splitlines()) <= MODULE_LINES


def long_functions(source: str) -> list[tuple[str, int]]:
    """(name, lines) of every function or method of ``source`` longer than :data:`FUNCTION_LINES`."""
    return [(node.name, node.end_lineno - node.lineno + 1) for node in ast.walk(ast.parse(source))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > FUNCTION_LINES]


def test_the_function_length_check_finds_a_long_function() -> None:
    body = "\n".join(f"    x{i} = {i}" for i in range(FUNCTION_LINES))
    assert long_functions(f"def f():\n{body}\n") == [("f", FUNCTION_LINES + 1)]
    assert long_functions("class C:\n    def g(self):\n        return 1\n") == []


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_function_fits_on_a_screen(path: Path) -> None:
    assert not long_functions(path.read_text(encoding="utf-8")), f"{path.relative_to(ROOT)}: split these into named steps"


def _siblings(path: Path) -> set[str]:
    """The modules of its own package a file imports (``from .x import …``, ``from . import x``), by stem."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    here = {p.stem for p in path.parent.glob("*.py")} | {p.name for p in path.parent.iterdir() if (p / "__init__.py").is_file()}
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            names = [node.module.split(".")[0]] if node.module else [a.name for a in node.names]
            out |= {n for n in names if n in here}
    return out - {path.stem}


PACKAGES = sorted({p.parent for p in FILES if p.parent != PACKAGE})


@pytest.mark.parametrize("package", PACKAGES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_circle_of_imports_inside_a_package(package: Path) -> None:
    """Inside a package too, imports flow one way: no module reaches itself through its siblings
    (``__init__`` aside, which gathers the package's names)."""
    graph = {p.stem: _siblings(p) - {"__init__"} for p in package.glob("*.py") if p.stem != "__init__"}

    def reaches(start: str, target: str, seen: set[str]) -> bool:
        for nxt in graph.get(start, ()):
            if nxt == target or (nxt not in seen and reaches(nxt, target, seen | {nxt})):
                return True
        return False

    circles = sorted(m for m in graph if reaches(m, m, {m}))
    assert not circles, f"{package.relative_to(ROOT)}: modules that import themselves through their siblings: {circles}"


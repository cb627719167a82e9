"""No import circle among the modules of `tools/` (nor of `policies/`, `components/` and `bench/`).

Every `import` / `from ... import` statement counts, at any depth (an import deferred into a function
body to dodge a circle is still a circle), except those under `if TYPE_CHECKING:`. A circle is a strongly
connected component of more than one module (a module importing itself, as a `__main__` that imports its
own name, is not one). `from package import name` leads to the submodule when `name` is one, else to the
package's `__init__`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
ROOTS = ("tools", "policies", "components", "bench")


def _module_name(path: Path, base: Path) -> str:
    parts = list(path.relative_to(base).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _type_checking_nodes(tree: ast.AST) -> set[int]:
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If):
            test = node.test
            name = test.id if isinstance(test, ast.Name) else test.attr if isinstance(test, ast.Attribute) else ""
            if name == "TYPE_CHECKING":
                skipped.update(id(child) for stmt in node.body for child in ast.walk(stmt))
    return skipped


def _imported(tree: ast.AST, module: str, is_package: bool, modules: set[str]) -> Iterator[str]:
    skipped = _type_checking_nodes(tree)
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:  # `from pkg import submodule` imports the submodule, else the package
                sub = f"{target}.{alias.name}"
                yield sub if sub in modules else target


def import_graph(base: Path, roots: tuple[str, ...]) -> dict[str, set[str]]:
    """module -> the modules of `roots` it imports (packages by their `__init__`)."""
    files = {}
    for root in roots:
        for path in sorted((base / root).rglob("*.py")) if (base / root).is_dir() else ():
            files[_module_name(path, base)] = path
    # `import gpu_guard.x` inside the pack: the pack runs with policies/ as its working directory.
    aliases = {name.removeprefix("policies."): name for name in files if name.startswith("policies.")}
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        edges = set()
        known = set(files) | set(aliases)
        for imported in _imported(tree, name, path.name == "__init__.py", known):
            target = aliases.get(imported, imported)
            if target in files and target != name:
                edges.add(target)
        graph[name] = edges
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components that are circles (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


@pytest.mark.parametrize("root", ROOTS)
def test_no_import_circle(root: str) -> None:
    graph = import_graph(REPO, ROOTS)
    mine = [c for c in circles(graph) if any(m == root or m.startswith(f"{root}.") for m in c)]
    assert mine == [], f"import circles in {root}/: " + "; ".join(" <-> ".join(c) for c in mine)


def test_the_check_finds_a_deferred_import_circle(tmp_path: Path) -> None:
    pkg = tmp_path / "tools" / "engine"
    pkg.mkdir(parents=True)
    (tmp_path / "tools" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "gate.py").write_text("def run():\n    from tools.engine.warm_pack import WarmPack\n    return WarmPack\n")
    (pkg / "warm_pack.py").write_text("from tools.engine import gate\n\nclass WarmPack:\n    pass\n")
    (pkg / "view.py").write_text("from __future__ import annotations\nfrom typing import TYPE_CHECKING\n"
                                 "if TYPE_CHECKING:\n    from . import records\n")
    (pkg / "records.py").write_text("from .view import x\n")
    assert circles(import_graph(tmp_path, ("tools",))) == [["tools.engine.gate", "tools.engine.warm_pack"]]


def test_the_check_finds_a_relative_import_circle(tmp_path: Path) -> None:
    pkg = tmp_path / "tools"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from .b import thing\n")
    (pkg / "b.py").write_text("from . import a\nthing = 1\n")
    assert circles(import_graph(tmp_path, ("tools",))) == [["tools.a", "tools.b"]]

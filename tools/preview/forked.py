"""One function run in a forked child while this process does something else; its result comes back pickled.

A first preview runs the program twice (`command.run_program` for the preview, `command.known_recording` for
the stack the first `pulumi up` leaves). The two runs share nothing, and the Pulumi runtime keeps global
state, so they cannot run side by side in one interpreter; a child forked before either run, once the
program's own imports are done (`preload_program`, as watch mode's runner preloads them), has every SDK module
imported already (copy-on-write) and runs the second on another core while this process runs the first.
Where `os.fork` does not exist, or the child dies without an answer, the work runs here instead.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

T = TypeVar("T")


def preload_program(main: Path) -> None:
    """Import what the program's main file imports at its top level, as the run would find it (its folder
    first on sys.path). A module that fails to import here fails again, properly, in the run.

    A module of the program's own folder is imported only when importing it registers nothing
    (`inert_module`): the run must execute a module like pulumi/examples aws-py-eks's `vpc.py`, which creates
    the network at its top level, under the run's mocks; imported here it would register before the runtime
    is set up and hand the run futures of another event loop ("attached to a different loop").
    """
    try:
        tree = ast.parse(main.read_text(encoding="utf-8"), filename=str(main))
    except (OSError, SyntaxError, ValueError):
        return  # the run reports it
    names = [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    sys.path.insert(0, str(main.parent))
    try:
        for name in names:
            if program_module_file(name, main.parent) is not None and not inert_module(name, main.parent):
                continue
            with contextlib.suppress(Exception):
                importlib.import_module(name)
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(main.parent))


def program_module_file(name: str, program_dir: Path) -> Path | None:
    """The file of module `name` when it lies in the program's folder (`a.b` -> a/b.py or a/b/__init__.py)."""
    base = program_dir.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _imported_roots(tree: ast.Module, program_dir: Path, package: str) -> tuple[set[str], set[str]]:
    """(names bound at the top level to a Pulumi SDK or one of the program's own modules, those modules)."""
    bound: set[str] = set()
    local: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root == "pulumi" or root.startswith("pulumi_"):
                    bound.add(alias.asname or root)
                elif program_module_file(alias.name, program_dir) is not None:
                    bound.add(alias.asname or root)
                    local.add(alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                parts = package.split(".") if package else []
                parts = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
                module = ".".join([*parts, module] if module else parts)
            root = module.split(".")[0]
            sdk = root == "pulumi" or root.startswith("pulumi_")
            mine = bool(module) and program_module_file(module, program_dir) is not None
            if mine:
                local.add(module)
            for alias in node.names:
                if mine and program_module_file(f"{module}.{alias.name}", program_dir) is not None:
                    local.add(f"{module}.{alias.name}")
                if sdk or mine:
                    bound.add(alias.asname or alias.name)
    return bound, local


def _top_level(body: list[ast.stmt]) -> list[ast.AST]:
    """What runs when the module is imported: every statement outside a function body (class bodies run)."""
    out: list[ast.AST] = []
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            out.extend(node.decorator_list)
            out.extend(d for d in node.args.defaults + node.args.kw_defaults if d is not None)
        elif isinstance(node, ast.ClassDef):
            out.extend([*node.decorator_list, *node.bases, *node.keywords])
            out.extend(_top_level(node.body))
        else:
            out.append(node)
    return out


def _call_root(func: ast.expr) -> str | None:
    while isinstance(func, ast.Attribute | ast.Call | ast.Subscript):
        func = func.func if isinstance(func, ast.Call) else func.value
    return func.id if isinstance(func, ast.Name) else None


def inert_module(name: str, program_dir: Path, _seen: set[str] | None = None) -> bool:
    """Whether importing the program's own module `name` registers nothing: no call at its top level reaches
    a Pulumi SDK, one of the program's modules or a function of its own, and so for every program module
    it imports. A static reading: unsure (a syntax error, a file that cannot be read) counts as not inert."""
    seen = _seen if _seen is not None else set()
    if name in seen:
        return True
    seen.add(name)
    path = program_module_file(name, program_dir)
    if path is None:
        return True
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return False
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bound, local = _imported_roots(tree, program_dir, package)
    bound |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    for stmt in _top_level(tree.body):
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and _call_root(node.func) in bound:
                return False
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return all(inert_module(m, program_dir, seen) for m in sorted(local | parents))


class Forked(Generic[T]):
    """`work()` started in a forked child now; `result()` waits for its value or re-raises its exception."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._pid = 0
        self._read = -1
        if not hasattr(os, "fork"):
            return
        sys.stdout.flush()
        sys.stderr.flush()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, answer, and leave without running the parent's exit handlers
            os.close(read)
            try:
                try:
                    payload = pickle.dumps((True, work()))
                except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
                    payload = pickle.dumps((False, exc))
                with os.fdopen(write, "wb") as out:
                    out.write(payload)
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> T:
        if not self._pid:
            return self._work()
        with os.fdopen(self._read, "rb") as answer:
            data = answer.read()
        os.waitpid(self._pid, 0)
        self._pid = 0
        if not data:  # the child died without an answer (killed, out of memory): run the work here
            return self._work()
        ok, value = pickle.loads(data)
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

"""Which of a program's own modules register resources when they are imported: each file read once, decided
once per run.

A program module that creates resources at its top level (pulumi/examples aws-py-eks's `vpc.py`) must be executed
by every run under that run's mocks, as each `pulumi` command executes it in a fresh interpreter: it may not be
preloaded before the runtime is set up (`forked.preload_program`), and it must be dropped from `sys.modules`
after a run so that the next run of the same process (`--phase up`'s update after its preview, watch mode)
imports it again (`program_environment`). A module that only defines things may stay cached.

The reading is static (`ast`): a module registers when a call at its top level reaches a Pulumi SDK, one of the
program's modules or a function of its own, or when a program module it imports does (a reachability over the
import graph, so cycles and shared imports are read once). Unsure (a syntax error, a file that cannot be read)
counts as registering.

Cost: each file is parsed at most once per process while its size and modification time stay the same
(`PARSED` counts the parses, for the work-count test `tests/tools/test_preview_work.py`), and each
`ProgramModules` answers every module from one graph walk.

This repository's own program (`__main__.py`, `components/`) is known: none of its modules registers at import
(`OWN_PROGRAM_REGISTERING`; tests/tools/test_program_modules.py imports every one of them under Pulumi's mocks and
sees no registration, where this cautious reading would count a dataclass built at import, `Taint(...)`, as a
call that may register), so a preview of it reads none of them.
"""

from __future__ import annotations

import ast
import contextlib
import datetime
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from components.config.issues import CONFIG_FILE_ENV
from policies.gpu_guard.calendar import TODAY_ENV

REPO = Path(__file__).resolve().parents[2]

# The modules of this repository's program whose import registers resources: none. `components/` defines
# ComponentResources and functions; `__main__.py` calls them (and is run, never imported).
OWN_PROGRAM_REGISTERING: frozenset[str] = frozenset()

# The Pulumi SDK modules a run of this repository's program loads (pulumi_aws and pulumi_kubernetes load a
# submodule on its first attribute access): `forked.preload_program` imports them before the first preview forks
# its `up` run, so that the two runs share them instead of each importing them (about 2 s of CPU each).
# tests/tools/test_preview_work.py compares it with what runs of dev and prod load.
OWN_PROGRAM_SDK_MODULES: tuple[str, ...] = (
    *(f"pulumi_aws.{m}" for m in ("cloudwatch", "ebs", "ec2", "eks", "iam", "kms", "sqs", "ssm")),
    "pulumi_eks",
    *(f"pulumi_kubernetes.{m}" for m in ("apiextensions", "apps.v1", "batch.v1", "core.v1", "helm.v3", "meta.v1",
                                         "networking.v1", "policy.v1", "storage.v1")),
)

# Files parsed by this process (`ast.parse` of a program module): the work-count test reads it.
PARSED: list[int] = [0]


def program_module_file(name: str, program_dir: Path) -> Path | None:
    """The file of module `name` when it lies in the program's folder (`a.b` -> a/b.py or a/b/__init__.py)."""
    base = program_dir.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def is_own_program(program_dir: Path) -> bool:
    return program_dir.resolve() == REPO


@dataclass(frozen=True)
class _Facts:
    """What one module file does when imported, read from its source."""

    calls: bool  # a top-level call reaches an SDK, a program module or a function of its own (or unreadable)
    imports: frozenset[str]  # the program's own modules it imports, and its parent packages


# (program folder, module name) -> ((mtime_ns, size), facts): a file is parsed again only when it changed.
_FACTS: dict[tuple[str, str], tuple[tuple[int, int], _Facts]] = {}


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


def _read(name: str, path: Path, program_dir: Path) -> _Facts:
    PARSED[0] += 1
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, ValueError):
        return _Facts(calls=True, imports=frozenset())
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    bound, local = _imported_roots(tree, program_dir, package)
    bound |= {n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)}
    calls = any(isinstance(node, ast.Call) and _call_root(node.func) in bound
                for stmt in _top_level(tree.body) for node in ast.walk(stmt))
    parents = {".".join(name.split(".")[:i]) for i in range(1, name.count(".") + 1)}
    return _Facts(calls=calls, imports=frozenset(local | parents))


def _facts(name: str, program_dir: Path) -> _Facts | None:
    """The module's facts (None: not one of the program's modules), read again only when its file changed."""
    path = program_module_file(name, program_dir)
    if path is None:
        return None
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
    except OSError:
        return _Facts(calls=True, imports=frozenset())
    key = (str(program_dir), name)
    cached = _FACTS.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    facts = _read(name, path, program_dir)
    _FACTS[key] = (stamp, facts)
    return facts


class ProgramModules:
    """One run's answer to "does importing this program module register resources?", for any module name."""

    def __init__(self, program_dir: Path) -> None:
        self.program_dir = program_dir
        self._own = is_own_program(program_dir)
        self._registers: dict[str, bool] = {}

    def registers(self, name: str) -> bool:
        if self._own:
            return name in OWN_PROGRAM_REGISTERING
        if name not in self._registers:
            self._walk(name)
        return self._registers[name]

    def _walk(self, start: str) -> None:
        """Read every program module reachable from `start` (each file once), then mark as registering each one
        that calls at import or reaches one that does: a fixpoint over the import graph."""
        graph: dict[str, _Facts | None] = {}
        todo = [start]
        while todo:
            name = todo.pop()
            if name in graph or name in self._registers:
                continue
            facts = graph[name] = _facts(name, self.program_dir)
            if facts is not None:
                todo.extend(facts.imports)
        registering = {n for n, f in graph.items() if f is not None and f.calls}
        registering |= {n for n in graph if self._registers.get(n)}
        changed = True
        while changed:
            changed = False
            for name, facts in graph.items():
                if name in registering or facts is None:
                    continue
                if any(m in registering or self._registers.get(m, False) for m in facts.imports):
                    registering.add(name)
                    changed = True
        for name in graph:
            self._registers[name] = name in registering


def inert_module(name: str, program_dir: Path) -> bool:
    """Whether importing the program's own module `name` registers nothing (a module that is not the program's
    is not its to judge: inert). One-off question; a run asks its `ProgramModules` instead."""
    return not ProgramModules(program_dir).registers(name)


def forget_registering_modules(program_dir: Path, before: set[str]) -> None:
    """Drop from sys.modules what this run of the program imported (not in `before`) from the program's own folder
    and whose import registers resources (`program_modules`): the next run executes them under its own mocks.
    Modules that only define things, and everything imported before the run (the gate's own), stay cached.
    This repository's own program is known to have none (`OWN_PROGRAM_REGISTERING`): nothing is read for it."""
    if is_own_program(program_dir):
        return
    root = program_dir.resolve()
    modules = ProgramModules(program_dir)
    for name in set(sys.modules) - before:
        file = getattr(sys.modules.get(name), "__file__", None)
        if file and Path(file).resolve().is_relative_to(root) and modules.registers(name):
            del sys.modules[name]


@contextlib.contextmanager
def program_environment(program_dir: Path, working_dir: Path, config_file: Path,
                        today: datetime.date | None) -> Iterator[None]:
    """One run of the program in this process, as the Pulumi Python language host runs it: the program's folder
    first on sys.path, its project folder as working directory, the stack file and judging day in the environment;
    all of it given back afterwards, and the program modules that registered at import forgotten."""
    saved_cwd = Path.cwd()
    saved_path = list(sys.path)
    saved_env = os.environ.get(CONFIG_FILE_ENV)
    saved_today = os.environ.get(TODAY_ENV)
    os.environ[CONFIG_FILE_ENV] = str(config_file)
    if today is not None:  # the program's lifecycle checks judge on the same day as the pack
        os.environ[TODAY_ENV] = today.isoformat()
    sys.path.insert(0, str(program_dir))
    os.chdir(working_dir)
    before = set(sys.modules)
    try:
        yield
    finally:
        # A second run in this process (`--phase up`: the CLI's preview, then the update) must execute them again,
        # as each `pulumi` command does in a fresh interpreter; cached, `import vpc` would register nothing.
        forget_registering_modules(program_dir, before)
        os.chdir(saved_cwd)
        sys.path[:] = saved_path
        if saved_env is None:
            os.environ.pop(CONFIG_FILE_ENV, None)
        else:
            os.environ[CONFIG_FILE_ENV] = saved_env
        if saved_today is None:
            os.environ.pop(TODAY_ENV, None)
        else:
            os.environ[TODAY_ENV] = saved_today

"""What the program uses: the data sources its code calls and the resource types it registers, per stack.

- Data sources: read from the code itself (every `aws.<module>.get_<name>(...)` and `..._output(...)` call of
  `__main__.py` and `components/`), so a call only an existing stack reaches (a node group's tags, an Auto Scaling
  group) counts as much as one the offline run reaches. pulumi-aws names the function of the data source
  `aws:<module>/get<Name>:get<Name>` `get_<name>` in `pulumi_aws.<module>` (`index` for the top-level ones).
- Resource types: the program run offline for every `Pulumi.<stack>.yaml`, as the preview of the existing stack
  (`tools.preview.command.run_program`, phase `update`, children of pulumi-eks emulated as it builds them) and as a
  first preview (phase `preview`).
"""

from __future__ import annotations

import ast
import datetime
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from tools.engine.conversation import Phase
from tools.preview.command import run_program
from tools.preview.stack_files import load_project, load_stack_config

PROVIDER_MODULE = "pulumi_aws"
PHASES: tuple[Phase, ...] = ("preview", "update")


class DerivationError(Exception):
    """The program uses something the tables of tools/ci_roles/calls.py cannot answer for; the message says what."""


@dataclass(frozen=True)
class ProgramUse:
    data_sources: dict[str, tuple[str, ...]]  # token -> where the code calls it (file:line)
    resource_types: dict[str, tuple[str, ...]]  # type -> the stacks that register it


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _token(module: str, function: str) -> str:
    name = function.removesuffix("_output")
    camel = _camel(name)
    return f"aws:{module}/{camel}:{camel}"


def _aliases(tree: ast.AST) -> set[str]:
    return {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names if alias.name == PROVIDER_MODULE}


def data_source_calls(sources: Iterable[Path], root: Path) -> dict[str, tuple[str, ...]]:
    """token -> sorted `file:line` of each call of a pulumi-aws data source in `sources`."""
    found: dict[str, set[str]] = {}
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        names = _aliases(tree)
        if any(isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == PROVIDER_MODULE
               for node in ast.walk(tree)):
            raise DerivationError(f"{path.relative_to(root)}: `from {PROVIDER_MODULE}... import`: the generator reads "
                                  f"data-source calls as `aws.<module>.get_<name>`; fix: `import {PROVIDER_MODULE} "
                                  "as aws` and call through it")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr.startswith("get_")):
                continue
            chain = node.func.value
            if isinstance(chain, ast.Name) and chain.id in names:
                module = "index"
            elif (isinstance(chain, ast.Attribute) and isinstance(chain.value, ast.Name)
                  and chain.value.id in names):
                module = chain.attr
            else:
                continue
            found.setdefault(_token(module, node.func.attr), set()).add(f"{path.relative_to(root)}:{node.lineno}")
    return {token: tuple(sorted(where)) for token, where in sorted(found.items())}


def program_sources(program_dir: Path) -> list[Path]:
    return sorted([program_dir / "__main__.py", *(program_dir / "components").rglob("*.py")])


def resource_types(program_dir: Path, today: datetime.date | None = None) -> dict[str, tuple[str, ...]]:
    """type -> stacks registering it, over every stack file, as a first preview and as the existing stack's.

    `today` is the day the program judges its lifecycles at (None: the real date); a test pins it, as every test
    that runs a shipped stack does, so a stack file refused a year ahead (Kubernetes past standard support) does
    not stop the derivation of what the program registers."""
    project = load_project(program_dir)
    found: dict[str, set[str]] = {}
    stacks = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in program_dir.glob("Pulumi.*.yaml"))
    if not stacks:
        raise DerivationError(f"{program_dir}: no Pulumi.<stack>.yaml: nothing to derive the deploy role from")
    for stack in stacks:
        config = load_stack_config(program_dir / f"Pulumi.{stack}.yaml", project.name, program_dir)
        for phase in PHASES:
            for resource in run_program(project, stack, config, phase, today).resources:
                found.setdefault(resource.type, set()).add(stack)
    return {kind: tuple(sorted(where)) for kind, where in sorted(found.items())}


def derive(program_dir: Path, today: datetime.date | None = None) -> ProgramUse:
    return ProgramUse(data_source_calls(program_sources(program_dir), program_dir),
                      resource_types(program_dir, today))

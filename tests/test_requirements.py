"""Every runtime requirement is imported by the program, the policy pack or the tools (no pinned dead weight)."""

from __future__ import annotations

import ast
import re
from importlib.metadata import packages_distributions, requires
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
_PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*==")


def requirement_names(path: Path) -> list[str]:
    """The pinned distribution names of a requirements file (`-r` includes and comments skipped)."""
    names = []
    for line in path.read_text().splitlines():
        match = _PIN.match(line.strip())
        if match:
            names.append(match["name"])
    return names


def imported_modules(*roots: Path) -> set[str]:
    """Top-level module names imported by the Python files under `roots` (files or folders)."""
    found: set[str] = set()
    for root in roots:
        files = [root] if root.is_file() else sorted(root.rglob("*.py"))
        for file in files:
            if "venv" in file.parts:
                continue
            for node in ast.walk(ast.parse(file.read_text(), str(file))):
                if isinstance(node, ast.Import):
                    found |= {alias.name.split(".")[0] for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found.add(node.module.split(".")[0])
                    if node.module == "google":
                        found |= {f"google.{alias.name}" for alias in node.names}
    return found


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def modules_of(distribution: str) -> set[str]:
    """The top-level modules an installed distribution provides."""
    wanted = _normalise(distribution)
    return {module for module, dists in packages_distributions().items() if wanted in {_normalise(d) for d in dists}}


# Pins nothing imports directly, kept because a pinned requirement imports them: the pack pins the
# Pulumi SDK that pulumi-policy runs on, so that it matches the program's.
PINNED_FOR = {"pulumi": "pulumi-policy"}


def _unused(requirements: Path, *roots: Path) -> list[str]:
    imported = imported_modules(*roots)
    names = requirement_names(requirements)
    return [name for name in names
            if not modules_of(name) & imported and PINNED_FOR.get(name) not in names]


def test_every_requirement_is_imported_by_the_program_the_pack_or_the_tools():
    roots = [REPO / "__main__.py", REPO / "components", REPO / "policies", REPO / "tools"]
    assert _unused(REPO / "requirements.txt", *roots) == []


def test_every_pack_requirement_is_imported_by_the_pack():
    assert _unused(REPO / "policies" / "requirements.txt", REPO / "policies") == []


@pytest.mark.parametrize(("pinned", "dependent"), sorted(PINNED_FOR.items()))
def test_a_pin_kept_for_its_dependent_is_a_requirement_of_it(pinned: str, dependent: str):
    wanted = [r for r in requires(dependent) or [] if _normalise(re.split(r"[ <>=!~;\[]", r)[0]) == pinned]
    assert wanted, f"{dependent} does not require {pinned}"


@pytest.mark.parametrize("name", ["pulumi-eks", "pulumi-aws", "PyYAML", "protobuf"])
def test_distribution_names_map_to_their_modules(name: str):
    expected = {"pulumi-eks": "pulumi_eks", "pulumi-aws": "pulumi_aws", "PyYAML": "yaml", "protobuf": "google"}
    assert expected[name] in modules_of(name)


def test_an_unimported_pin_is_reported(tmp_path: Path):
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# runtime\npulumi==3.272.0\npulumi-eks==4.4.0\n")
    program = tmp_path / "program.py"
    program.write_text("import pulumi\n")
    assert _unused(requirements, program) == ["pulumi-eks"]

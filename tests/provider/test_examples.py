"""The example programs of docs/component-package.md speak the package's schema: the YAML program passes Pulumi
YAML's template rules against the schema (tests/provider/languages/pulumi_yaml.py, written from pulumi-yaml's
source), and its configuration sections pass the package's validation; the TypeScript program's keys are schema
names (its compile with tsc --strict: tests/provider/languages/test_typescript.py)."""

from __future__ import annotations

import copy
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from provider.host import schema
from provider.validate import validate
from tests.components.harness import TODAY
from tests.provider.languages.pulumi_yaml import check

REPO = Path(__file__).resolve().parents[2]
PACKAGE = schema()


YAML_EXAMPLE = REPO / "examples/yaml/Pulumi.yaml"


def _yaml() -> dict[str, Any]:
    return dict(yaml.safe_load(YAML_EXAMPLE.read_text()))


def test_the_yaml_example_passes_pulumi_yamls_template_rules() -> None:
    assert check(PACKAGE, _yaml()) == []


def test_the_yaml_examples_sections_pass_the_packages_validation() -> None:
    program = _yaml()
    used = {name: r for name, r in program["resources"].items() if r.get("type", "").startswith("gpu-platform:")}
    assert used
    for name, resource in used.items():
        component = resource["type"].rsplit(":", 1)[-1]
        props = resource["properties"]
        args = {"cluster": props["cluster"], "pool": props["pool"]}
        stack = validate(component, name, args, karpenter_version=props["karpenterVersion"], today=TODAY)
        assert stack.karpenter is not None


def _broken(change: Any) -> list[str]:
    program = copy.deepcopy(_yaml())
    change(program["resources"])
    return check(PACKAGE, program)


@pytest.mark.parametrize(("change", "expected"), [
    (lambda r: r["karpenter"].pop("type"), 'Required field \'type\' is missing on resource "karpenter"'),
    (lambda r: r["karpenter"]["get"].update(resourceType="kubernetes:helm.sh/v3:Release"),
     "resources.karpenter.get: Field 'resourceType' does not exist; fields: id, state"),
    (lambda r: r["pool"]["properties"].pop("karpenterRelease"),
     "resources.pool.properties: Missing required property 'karpenterRelease'"),
    (lambda r: r["pool"]["properties"].update(karpenterRelease="${cluster}"),
     "resources.pool.properties.karpenterRelease: Cannot assign '${cluster}' to 'kubernetes:helm.sh/v3:Release' "
     "(a resource of that type)"),
    (lambda r: r["pool"]["properties"]["pool"].update(os="bottlerockt"),
     "resources.pool.properties.pool.os: 'bottlerockt' is not one of "
     "['ubuntu-22.04', 'ubuntu-24.04', 'ubuntu-26.04', 'bottlerocket', 'al2023']"),
    (lambda r: r["pool"]["properties"]["pool"].update(maxGpus="four"),
     "resources.pool.properties.pool.maxGpus: Cannot assign type 'string' to type 'integer'"),
    (lambda r: r["pool"]["properties"].update(dependsOn=["${karpenter}"]),
     "resources.pool.properties: Property dependsOn does not exist; properties: "),
    (lambda r: r["pool"].update(Options={}), "resources.pool: 'Options' looks like a miscapitalization of 'options'"),
])
def test_the_yaml_check_finds_what_pulumi_yaml_reports(change: Any, expected: str) -> None:
    problems = _broken(change)
    assert any(p.startswith(expected) for p in problems), problems


def test_every_key_of_the_typescript_example_is_a_schema_name() -> None:
    names = set()
    for resource in PACKAGE["resources"].values():
        names |= set(resource["inputProperties"]) | set(resource["properties"])
    for typ in PACKAGE["types"].values():
        names |= set(typ.get("properties", {}))
    text = (REPO / "examples/typescript/index.ts").read_text()
    block = text[text.index("new gpu.KarpenterGpuPool"):]
    keys = set(re.findall(r"[{,]\s*([a-zA-Z]+):", block)) - {"dependsOn"}
    assert keys and keys <= names, sorted(keys - names)

"""The example programs of docs/component-package.md speak the package's schema: every key they set is an input
of the schema, every required input is set, and their configuration sections pass the package's validation."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from provider.host import schema
from provider.validate import validate
from tests.components.harness import TODAY

REPO = Path(__file__).resolve().parents[2]
PACKAGE = schema()


def _check(properties: dict[str, Any], spec: dict[str, Any], where: str) -> list[str]:
    problems = [f"{where}: {key} is not an input" for key in properties if key not in spec["inputProperties"]]
    problems += [f"{where}: {key} is required" for key in spec.get("requiredInputs", []) if key not in properties]
    for key, value in properties.items():
        ref = spec["inputProperties"].get(key, {}).get("$ref", "")
        if isinstance(value, dict) and ref.startswith("#/types/"):
            typ = PACKAGE["types"][ref.removeprefix("#/types/")]
            problems += _check(value, {"inputProperties": typ["properties"], "requiredInputs": typ.get("required", [])},
                               f"{where}.{key}")
    return problems


def test_the_yaml_example_sets_the_schemas_inputs_and_passes_validation() -> None:
    program = yaml.safe_load((REPO / "examples/yaml/Pulumi.yaml").read_text())
    used = {name: r for name, r in program["resources"].items() if r.get("type", "").startswith("gpu-platform:")}
    assert used
    for name, resource in used.items():
        spec = PACKAGE["resources"][resource["type"]]
        assert _check(resource["properties"], spec, name) == []
        component = resource["type"].rsplit(":", 1)[-1]
        props = resource["properties"]
        args = {"cluster": props["cluster"], "pool": props["pool"]}
        stack = validate(component, name, args, karpenter_version=props["karpenterVersion"], today=TODAY)
        assert stack.karpenter is not None


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

"""The schema the analyzer infers: the five components with typed inputs and outputs, valid against Pulumi's
package metaschema (pkg/codegen/schema/pulumi.json, pinned in upstream.lock.json), and pinned in a golden file
so that a change of the public interface is a reviewed diff (GOLDEN_UPDATE=1 rewrites it).

The metaschema's patterns are ECMA-262 regular expressions (JSON Schema 2020-12, its `$schema`), with named
groups Python's `re` does not read (`(?<major>...)`), so `pattern` and `patternProperties` are checked with
regress, the ECMA-262 engine check-jsonschema uses.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import regress

from provider.host import schema
from tests.shared import upstream

GOLDEN = Path(__file__).parent / "schema.golden.json"
COMPONENTS = ("SystemNodeGroup", "GpuManagedNodeGroup", "KarpenterGpuPool", "GpuOperatorRelease", "InferenceService")


def _pattern(validator: Any, pattern: str, instance: Any, _schema: Any) -> Any:
    if validator.is_type(instance, "string") and regress.Regex(pattern).find(instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, _schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if regress.Regex(pattern).find(key) is not None:
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def metaschema_validator() -> Any:
    meta = json.loads(upstream("pulumi", "pulumi.json").read_text())
    base = jsonschema.validators.validator_for(meta)
    ecma = jsonschema.validators.extend(base, {"pattern": _pattern, "patternProperties": _pattern_properties})
    return ecma(meta)


def test_the_inferred_schema_validates_against_the_pinned_metaschema() -> None:
    errors = sorted(metaschema_validator().iter_errors(schema()), key=lambda e: list(e.absolute_path))
    assert not errors, [f"{list(e.absolute_path)}: {e.message}" for e in errors[:5]]


def test_the_metaschema_check_catches_a_malformed_schema() -> None:
    broken = schema()
    broken["name"] = "9 not a package name"
    broken["version"] = "v1.2"  # the semver pattern, with ECMA named groups
    messages = [e.message for e in metaschema_validator().iter_errors(broken)]
    assert any("9 not a package name" in m for m in messages), messages
    assert any("'v1.2' does not match" in m for m in messages), messages


def test_the_five_components_have_typed_inputs_and_outputs() -> None:
    resources = schema()["resources"]
    assert sorted(resources) == sorted(f"gpu-platform:index:{name}" for name in COMPONENTS)
    for token, resource in resources.items():
        assert resource["isComponent"] is True, token
        assert resource["requiredInputs"] and resource["required"], token
        for prop in (*resource["inputProperties"].values(), *resource["properties"].values()):
            assert "type" in prop or "$ref" in prop, (token, prop)
    pool = resources["gpu-platform:index:KarpenterGpuPool"]
    assert pool["inputProperties"]["pool"]["$ref"] == "#/types/gpu-platform:index:KarpenterPoolConfig"
    assert pool["properties"]["nodePoolNames"]["type"] == "array"
    assert pool["properties"]["nodePoolNames"]["items"]["type"] == "string"
    service = resources["gpu-platform:index:InferenceService"]["properties"]
    assert {"endpoint", "namespace", "deploymentName"} <= set(service)


def test_config_types_carry_the_models_fields_defaults_and_descriptions() -> None:
    from components.config import KarpenterPoolConfig  # noqa: PLC0415

    pool = schema()["types"]["gpu-platform:index:KarpenterPoolConfig"]
    required = {f.alias or n for n, f in KarpenterPoolConfig.model_fields.items() if f.is_required()}
    assert set(pool["required"]) == required
    assert pool["properties"]["maxGpus"]["description"] == KarpenterPoolConfig.model_fields["max_gpus"].description
    assert "diskSizeGib" in pool["properties"]


def test_the_schema_matches_its_golden_file() -> None:
    text = json.dumps(schema(), indent=2, sort_keys=True) + "\n"
    if os.environ.get("GOLDEN_UPDATE"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text(), "the package schema changed: review it, then GOLDEN_UPDATE=1"

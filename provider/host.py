"""The provider the plugin serves: the SDK's ComponentProvider with the models' descriptions and one-line errors.

Two additions to `pulumi.provider.experimental.component.ComponentProvider` (pulumi 3.272.0):
- The analyzer finds property descriptions by parsing the class source (analyzer.py:707-780), and the Args
  TypedDicts of provider/args.py are built at import time from the models, with no source: their
  descriptions (the model fields' own) are handed to the analyzer before it runs.
- A rejected input is answered as an input property error, not as a failed constructor. The SDK wraps any
  exception of the component's `__init__` in ComponentInitError (component.py:96-100) and Construct then
  appends a Python traceback to it (server.py:140-148); an InputPropertyError raised before the constructor
  is answered with the gRPC status INVALID_ARGUMENT and its property path and reason (server.py:133-138).
  So `construct` runs the package's validation first and the message is the stack file's one line.
"""

from __future__ import annotations

import json
from typing import Any

import pulumi
from pulumi.errors import InputPropertyError
from pulumi.provider.experimental.analyzer import Analyzer, PropertyDefinition, TypeDefinition
from pulumi.provider.experimental.component import ComponentProvider
from pulumi.provider.experimental.schema import generate_schema
from pulumi.provider.provider import ConstructResult, Provider

from provider import hosted
from provider.args import DESCRIPTIONS, NotPlainError, plain_value
from provider.validate import first_problem, resource_label

# The release this tree is: the newest entry of provider/CHANGELOG.md and, once tagged, the `v<VERSION>` git tag
# (tests/provider/test_version.py ties the three together).
VERSION = "0.1.0"
# The package namespace, set on purpose: without one, `pulumi package add` of a Git source sets it to the GitHub
# organization (pulumi v3.259.0 pkg/cmd/pulumi/packages/packages.go:366-374, `setSpecNamespace`), so the npm name
# the Node.js generator gives the SDK, `@<namespace>/<name>` (pkg/codegen/nodejs/gen.go:2525-2532), would change
# with every fork. With it, every consumer imports `@gpu-platform/gpu-platform`.
NAMESPACE = "gpu-platform"


class _Analyzer(Analyzer):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.docstrings.update({k: dict(v) for k, v in DESCRIPTIONS.items()})


class GpuPlatformProvider(ComponentProvider):
    """ComponentProvider.__init__ with the analyzer above (the SDK builds its own Analyzer inline)."""

    def __init__(self, version: str = VERSION) -> None:
        components = hosted.COMPONENTS
        name = hosted.PACKAGE
        self._name = name
        self.analyzer = _Analyzer(name)
        result = self.analyzer.analyze(components)
        self._components = {component.__name__: component for component in components}
        self._component_defs = result["component_definitions"]
        self._type_defs = result["type_definitions"]
        self._external_enum_types = result["external_enum_types"]
        self._dependencies = sorted(result["dependencies"], key=lambda d: f"{d.name}{d.version}")
        schema = generate_schema(name, version, NAMESPACE, self._component_defs, self._type_defs, self._dependencies)
        Provider.__init__(self, version, json.dumps(schema.to_json()))

    def get_type_definition(self, prop: PropertyDefinition) -> TypeDefinition | None:
        """The SDK's, except the package's enums: the component gets the raw choice, which the model judges with
        the stack file's message (the SDK would refuse it first with its own, and maps a list of enum values to
        a list of empty objects: pulumi 3.272.0 component.py:222-244 treats every `items.ref` as an object)."""
        found = super().get_type_definition(prop)
        return None if found is not None and found.enum else found

    def _plain_sections(self, component: str, name: str, inputs: pulumi.Inputs) -> dict[str, Any]:
        """Inputs with a `plain` section that arrived as one Output unwrapped (Construct wraps a whole input that
        has dependencies when the consumer's SDK sends no output values: pulumi 3.272.0 provider/server.py
        `_select_value`), or one line refusing it when it is secret or unknown; the SDK's mapping would read such an
        Output as an empty object and report its first required key missing."""
        definition = self._component_defs[component]
        out = dict(inputs)
        for key, value in inputs.items():
            prop = definition.inputs.get(key)
            if prop is None or not prop.plain or not isinstance(value, pulumi.Output):
                continue
            try:
                out[key] = plain_value(value, key)
            except NotPlainError as err:
                raise InputPropertyError(key, f"{resource_label(component, name)}: {err}") from None
        return out

    def construct(self, name: str, resource_type: str, inputs: pulumi.Inputs,
                  options: pulumi.ResourceOptions | None = None) -> ConstructResult:
        self.validate_resource_type(self._name, resource_type)
        component = resource_type.rsplit(":", maxsplit=1)[-1]
        inputs = self._plain_sections(component, name, inputs)
        mapped: dict[str, Any] = dict(self.map_inputs(inputs, self._component_defs[component]))
        rejected = first_problem(component, name, mapped, karpenter_version=mapped.get("karpenter_version"))
        if rejected is not None:
            raise InputPropertyError(*rejected)
        missing = hosted.missing_input(component, name, mapped)
        if missing is not None:
            raise InputPropertyError(*missing)
        wrong = hosted.wrong_reference(component, name, mapped)
        if wrong is not None:
            raise InputPropertyError(*wrong)
        return super().construct(name, resource_type, inputs, options)


def schema() -> dict[str, Any]:
    """The package schema the plugin serves (GetSchema)."""
    return dict(json.loads(GpuPlatformProvider().schema or "{}"))

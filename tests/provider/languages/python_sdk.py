"""The Python SDK `pulumi package add` generates for the package, written from the schema the plugin serves.

Pulumi's Python generator is Go inside the CLI (pulumi v3.259.0 pkg/codegen/python/gen.go), which the tests do not
have, so this writes the parts of its output that decide what reaches the engine, with the generator's rules:

- one class per component, `super().__init__('<token>', resource_name, __props__, opts, remote=True)` with
  `__props__` an instance of its `<Name>Args` input type (gen.go `genResource`: a component of a multi-language
  package is registered with `remote=True`), each output set to None in `__props__` and read back by a getter;
- each object type an `@pulumi.input_type` class `<Name>Args` whose getters carry the schema's property name
  (`@pulumi.getter(name="kubernetesVersion")`), so the SDK translates a dict's Python keys to the schema's
  (pulumi 3.272.0 pulumi/runtime/rpc.py `serialize_property`: `input_type_py_to_pulumi_names`);
- property names in snake case (pkg/codegen/python/python.go `PyName`), required inputs checked
  (`Missing required property '...'`), `opts.version` the schema's version (`_utilities.get_resource_opts_defaults`).

What a user does not send (docstrings, `@overload`s, `get` methods, enum classes: an enum input is a `str` on the wire)
is left out. `write_sdk(schema, folder)` writes the package `pulumi_gpu_platform` under `folder`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

MODULE = "pulumi_gpu_platform"


def py_name(name: str) -> str:
    """camelCase -> snake_case as python.go PyName does for these names (`serviceIpv4Cidr` -> `service_ipv4_cidr`)."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def _type_name(token: str) -> str:
    return token.rsplit(":", 1)[-1]


def _annotation(prop: Mapping[str, Any], types: Mapping[str, Any]) -> str:
    ref = prop.get("$ref")
    if isinstance(ref, str):
        if ref.startswith("#/types/"):
            token = ref.removeprefix("#/types/")
            return "str" if "enum" in types.get(token, {}) else f"'{_type_name(token)}Args'"
        return "Any"  # a resource of another package (pulumi_aws.eks.NodeGroup, a Helm Release)
    kind = prop.get("type")
    if kind == "array":
        return f"Sequence[pulumi.Input[{_annotation(prop['items'], types)}]]"
    if kind == "object" and "additionalProperties" in prop:
        return f"Mapping[str, pulumi.Input[{_annotation(prop['additionalProperties'], types)}]]"
    return {"string": "str", "integer": "int", "number": "float", "boolean": "bool"}.get(str(kind), "Any")


def _input_type(name: str, properties: Mapping[str, Any], required: list[str], types: Mapping[str, Any]) -> str:
    params, sets, getters = [], [], []
    for key, prop in sorted(properties.items(), key=lambda kv: (kv[0] not in required, kv[0])):
        py, ann = py_name(key), _annotation(prop, types)
        params.append(f"{py}: pulumi.Input[{ann}]" + ("" if key in required else " = None"))
        sets.append(f"        pulumi.set(__self__, \"{py}\", {py})" if key in required else
                    f"        if {py} is not None:\n            pulumi.set(__self__, \"{py}\", {py})")
        getters.append(f"    @property\n    @pulumi.getter(name=\"{key}\")\n"
                       f"    def {py}(self) -> Optional[pulumi.Input[{ann}]]:\n"
                       f"        return pulumi.get(self, \"{py}\")\n\n"
                       f"    @{py}.setter\n    def {py}(self, value: Optional[pulumi.Input[{ann}]]) -> None:\n"
                       f"        pulumi.set(self, \"{py}\", value)\n")
    head = f"@pulumi.input_type\nclass {name}:\n    def __init__(__self__, *" + "".join(f", {p}" for p in params)
    return head + "):\n" + ("\n".join(sets) or "        pass") + "\n\n" + "\n".join(getters)


def _component(token: str, resource: Mapping[str, Any], types: Mapping[str, Any], version: str) -> str:
    name = _type_name(token)
    inputs: Mapping[str, Any] = resource.get("inputProperties", {})
    required = list(resource.get("requiredInputs", []))
    params = "".join(f", {py_name(k)}: Any = None" for k in sorted(inputs))
    body = [f"        opts = pulumi.ResourceOptions.merge(pulumi.ResourceOptions(version=\"{version}\"), opts)",
            f"        __props__ = {name}Args.__new__({name}Args)"]
    for key in sorted(inputs):
        py = py_name(key)
        if key in required:
            body.append(f"        if {py} is None and not opts.urn:\n"
                        f"            raise TypeError(\"Missing required property '{py}'\")")
        body.append(f"        __props__.__dict__[\"{py}\"] = {py}")
    outputs: Mapping[str, Any] = resource.get("properties", {})
    body += [f"        __props__.__dict__[\"{py_name(k)}\"] = None" for k in sorted(outputs)]
    body.append(f"        super({name}, __self__).__init__('{token}', resource_name, __props__, opts, remote=True)")
    getters = [f"    @property\n    @pulumi.getter(name=\"{k}\")\n"
               f"    def {py_name(k)}(self) -> pulumi.Output[{_annotation(p, types)}]:\n"
               f"        return pulumi.get(self, \"{py_name(k)}\")\n" for k, p in sorted(outputs.items())]
    return (f"class {name}(pulumi.ComponentResource):\n    def __init__(__self__, resource_name: str, "
            f"opts: Optional[pulumi.ResourceOptions] = None, *{params}) -> None:\n" + "\n".join(body) + "\n\n"
            + "\n".join(getters))


def render(schema: Mapping[str, Any]) -> str:
    types: Mapping[str, Any] = schema.get("types", {})
    version = str(schema.get("version", ""))
    parts = ["# coding=utf-8\n# *** Written by tests/provider/languages/python_sdk.py from the package schema, with "
             "the rules of pulumi's Python generator. ***\n\nfrom typing import Any, Mapping, Optional, Sequence\n\n"
             "import pulumi\n"]
    for token, spec in sorted(types.items()):
        if "enum" not in spec:
            parts.append(_input_type(f"{_type_name(token)}Args", spec.get("properties", {}),
                                     list(spec.get("required", [])), types))
    for token, resource in sorted(schema.get("resources", {}).items()):
        parts.append(_input_type(f"{_type_name(token)}Args", resource.get("inputProperties", {}),
                                 list(resource.get("requiredInputs", [])), types))
        parts.append(_component(token, resource, types, version))
    return "\n\n".join(parts)


def write_sdk(schema: Mapping[str, Any], folder: Path) -> Path:
    """Write `pulumi_gpu_platform/__init__.py` under `folder`; returns the package folder."""
    package = folder / MODULE
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text(render(schema), encoding="utf-8")
    return package

"""Pulumi YAML's template rules, as a check of a Pulumi.yaml against a package schema (no Pulumi CLI needed).

Written from pulumi/pulumi-yaml v1.38.1 (the newest tag of the stored snapshot):
- a resource's fields are `type`, `name`, `defaultProvider`, `properties`, `options`, `get`
  (pkg/pulumiyaml/ast/template.go:496-512, `ResourceDecl` and `Fields`); `get` takes only `id` and `state`
  (template.go:467-472, `GetResourceDecl`); `options` are the fields of `ResourceOptionsDecl`
  (template.go:368-389); a config entry those of `ConfigParamDecl` (template.go:337-346). Keys match the Go
  field names case-insensitively and a key that matches none is reported ("Field ... does not exist"), as is a
  key in another casing (template.go:1067-1111, `parseRecord`; the field name camel-cased, template.go:1143-1150).
  A reported key is ignored at run time, so here it is an error;
- a resource without `type` is an error: "Required field 'type' is missing on resource" (pkg/pulumiyaml/run.go:
  321-331);
- the properties of a resource of the schema's package are typed structurally (pkg/pulumiyaml/analyser.go:
  204-470, `isAssignable`): every required property set, no property the type lacks, a string takes a string,
  number, boolean or resource; a number or integer takes a number; an enum takes one of its values
  (`hasValidEnumValue`, analyser.go:484-520); a resource reference takes a resource of that very type token;
  an expression `${name}` has the type of the config entry or resource it names, `${name.prop}` that output's.
Types of other packages' resources are not checked (their schemas are not here): only that they are named.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

RESOURCE_FIELDS = ("type", "name", "defaultProvider", "properties", "options", "get")
GET_FIELDS = ("id", "state")
OPTION_FIELDS = ("additionalSecretOutputs", "aliases", "customTimeouts", "deleteBeforeReplace", "dependsOn",
                 "ignoreChanges", "import", "parent", "protect", "provider", "providers", "version",
                 "pluginDownloadURL", "replaceOnChanges", "retainOnDelete", "replaceWith", "deletedWith",
                 "hideDiffs", "replacementTrigger", "envVarMappings")
CONFIG_FIELDS = ("type", "name", "secret", "default", "value", "items")
_WHOLE = re.compile(r"^\$\{([A-Za-z0-9_-]+)((?:\.[A-Za-z0-9_]+|\[\d+\])*)\}$")
_EXTERNAL = re.compile(r"^/[a-z0-9-]+/v[^/]+/schema\.json#/resources/(?P<token>.+)$")
ANY = {"kind": "any"}


def _fields(where: str, node: Any, allowed: tuple[str, ...]) -> list[str]:
    if not isinstance(node, Mapping):
        return [f"{where} must be an object"]
    problems = []
    for key in node:
        match = next((f for f in allowed if f.lower() == str(key).lower()), None)
        if match is None:
            problems.append(f"{where}: Field '{key}' does not exist; fields: {', '.join(allowed)}")
        elif match != key:
            problems.append(f"{where}: '{key}' looks like a miscapitalization of '{match}'")
    return problems


class Checker:
    def __init__(self, schema: Mapping[str, Any], template: Mapping[str, Any]) -> None:
        self.schema = schema
        self.template = template
        self.resources: Mapping[str, Any] = template.get("resources") or {}
        self.config: Mapping[str, Any] = template.get("config") or template.get("configuration") or {}

    # -- types of expressions ------------------------------------------------------------------------
    def _expr_type(self, text: str) -> dict[str, Any]:
        match = _WHOLE.match(text)
        if match is None:
            return {"kind": "string"}  # a literal or an interpolated string
        name, path = match.group(1), match.group(2)
        if name in self.resources:
            token = str((self.resources[name] or {}).get("type", ""))
            if not path:
                return {"kind": "resource", "token": token}
            resource = self.schema.get("resources", {}).get(token)
            if resource is None:
                return ANY
            prop = path.lstrip(".").split(".")[0].split("[")[0]
            spec = resource.get("properties", {}).get(prop)
            if spec is None:
                return {"kind": "missing", "what": f"{token} has no output {prop}"}
            return ANY if "." in path.lstrip(".") else {"kind": "spec", "spec": spec}
        if name in self.config:
            declared = str((self.config[name] or {}).get("type", "string"))
            return {"kind": {"integer": "number", "boolean": "boolean"}.get(declared, declared)}
        return {"kind": "missing", "what": f"${{{name}}} names no resource, config entry or variable"}

    def _value_type(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bool):
            return {"kind": "boolean"}
        if isinstance(value, (int, float)):
            return {"kind": "number"}
        if isinstance(value, str):
            return self._expr_type(value)
        return ANY

    # -- assignability -------------------------------------------------------------------------------
    def assign(self, where: str, value: Any, spec: Mapping[str, Any]) -> list[str]:
        ref = spec.get("$ref")
        if ref is not None:
            external = _EXTERNAL.match(ref)
            if external is not None:
                want = external["token"].replace("%2F", "/")
                got = self._value_type(value)
                if got.get("kind") == "resource" and got["token"] == want:
                    return []
                if got.get("kind") == "missing":
                    return [f"{where}: {got['what']}"]
                return [f"{where}: Cannot assign {value!r} to '{want}' (a resource of that type)"]
            typ = self.schema["types"][ref.removeprefix("#/types/")]
            if "enum" in typ:
                values = [e["value"] for e in typ["enum"]]
                if isinstance(value, str) and _WHOLE.match(value):
                    return self._primitive(where, value, typ.get("type", "string"))
                return [] if value in values else [f"{where}: {value!r} is not one of {values}"]
            return self.assign_object(where, value, typ.get("properties", {}), typ.get("required", []))
        kind = spec.get("type")
        if kind == "array":
            if not isinstance(value, list):
                return self._not_structured(where, value, "a list")
            return [p for i, item in enumerate(value) for p in self.assign(f"{where}[{i}]", item, spec["items"])]
        if kind == "object":
            if not isinstance(value, Mapping):
                return self._not_structured(where, value, "an object")
            inner = spec.get("additionalProperties", {})
            return [p for k, v in value.items() for p in self.assign(f"{where}.{k}", v, inner)] if inner else []
        return self._primitive(where, value, str(kind))

    def _not_structured(self, where: str, value: Any, what: str) -> list[str]:
        got = self._value_type(value)
        if got is ANY or got.get("kind") in ("any", "spec"):
            return []
        return [f"{where}: Cannot assign {value!r} to {what}"]

    def _primitive(self, where: str, value: Any, kind: str) -> list[str]:
        got = self._value_type(value)
        if got.get("kind") == "missing":
            return [f"{where}: {got['what']}"]
        if got is ANY or got.get("kind") in ("any", "spec"):
            return []
        have = got["kind"]
        ok = {"string": have in ("string", "number", "boolean", "resource"), "integer": have == "number",
              "number": have == "number", "boolean": have == "boolean"}.get(kind, True)
        return [] if ok else [f"{where}: Cannot assign type '{have}' to type '{kind}'"]

    def assign_object(self, where: str, value: Any, properties: Mapping[str, Any],
                      required: list[str]) -> list[str]:
        if not isinstance(value, Mapping):
            return self._not_structured(where, value, "an object")
        problems = [f"{where}: Missing required property '{p}'" for p in required if p not in value]
        for key, item in value.items():
            if key not in properties:
                problems.append(f"{where}: Property {key} does not exist; properties: {', '.join(sorted(properties))}")
            else:
                problems += self.assign(f"{where}.{key}", item, properties[key])
        return problems

    # -- the template ----------------------------------------------------------------------------------
    def problems(self) -> list[str]:
        found: list[str] = []
        for name, entry in self.config.items():
            found += _fields(f"config.{name}", entry, CONFIG_FIELDS)
        for name, resource in self.resources.items():
            where = f"resources.{name}"
            found += _fields(where, resource, RESOURCE_FIELDS)
            if not isinstance(resource, Mapping):
                continue
            if "type" not in resource:
                found.append(f"Required field 'type' is missing on resource \"{name}\"")
            if "get" in resource:
                found += _fields(f"{where}.get", resource["get"], GET_FIELDS)
            if "options" in resource:
                found += _fields(f"{where}.options", resource["options"], OPTION_FIELDS)
            spec = self.schema.get("resources", {}).get(resource.get("type"))
            if spec is not None:
                found += self.assign_object(f"{where}.properties", resource.get("properties") or {},
                                            spec.get("inputProperties", {}), spec.get("requiredInputs", []))
        for name, value in (self.template.get("outputs") or {}).items():
            if isinstance(value, str):
                got = self._expr_type(value)
                if got.get("kind") == "missing":
                    found.append(f"outputs.{name}: {got['what']}")
        return found


def check(schema: Mapping[str, Any], template: Mapping[str, Any]) -> list[str]:
    """Every problem Pulumi YAML would report (or silently ignore) in `template`, against `schema`."""
    return Checker(schema, template).problems()

"""TypeScript declarations of the package, from the schema the plugin serves: what a TypeScript user compiles
against after `pulumi package add`, without the Pulumi CLI (which generates the real SDK).

Pulumi's own Node.js generator is Go code inside the CLI (pkg/codegen/nodejs), so this module writes the
declarations its rules give, read from pulumi v3.259.0 pkg/codegen/nodejs/gen.go:
- package name `@<namespace>/<name>` (gen.go:2525-2532);
- a resource input property is `pulumi.Input<T>` unless the schema marks it `plain`; optional ones take `?`
  (`typeAst`, gen.go:270-345; `genPlainType`, gen.go:459-495); an array's items are wrapped by their own
  `plain` flag; `additionalProperties` is `{[key: string]: T}`;
- an object type in input position is `<Name>Args` of the input types, in output position `<Name>` of the
  output types (`objectType`, gen.go:184-216);
- an enum is a const object plus the union of its values (`genEnum`, gen.go:1996-2028), so a choice outside
  it fails to compile;
- a reference to another package's resource is that package's class, imported as `pulumi<Pkg>`
  (`resourceType`, gen.go:218-250); its module path follows that package's layout (kubernetes `helm.sh/v3`
  -> `helm.v3`, aws `eks/nodeGroup` -> `eks`), which the compile against the real @pulumi packages checks;
- a component is a class over `pulumi.ComponentResource` with `readonly` `pulumi.Output<T>` outputs and a
  constructor `(name, args, opts?: pulumi.ComponentResourceOptions)`.
The declarations are compiled with the user's `tsc --strict` (tests/provider/languages/test_typescript.py), so a rule
written wrong here fails there, against @pulumi/pulumi's and the providers' own declarations.
"""

from __future__ import annotations

import json
import re
from typing import Any

_EXTERNAL = re.compile(r"^/(?P<pkg>[a-z0-9-]+)/v[^/]+/schema\.json#/resources/(?P<token>.+)$")


def package_name(schema: dict[str, Any]) -> str:
    namespace = schema.get("namespace") or "pulumi"
    return f"@{namespace}/{schema['name']}"


def _doc(text: str) -> str:
    return text.replace("*/", "*\\/")


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]", name) if part)


def _external_module(pkg: str, module: str) -> str:
    if pkg == "kubernetes":  # helm.sh/v3 -> helm.v3, apps/v1 -> apps.v1 (the group's first label)
        return ".".join(segment.split(".")[0] for segment in module.split("/"))
    return module.split("/", maxsplit=1)[0]  # aws, eks, ...: eks/nodeGroup -> eks


class _Writer:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.schema = schema
        self.imports: set[str] = set()

    def _name(self, token: str) -> str:
        return token.rsplit(":", 1)[-1]

    def type_of(self, spec: dict[str, Any], *, input_: bool) -> str:
        """The TypeScript type of a property spec, without its own Input wrapper."""
        ref = spec.get("$ref")
        if ref is not None:
            external = _EXTERNAL.match(ref)
            if external is not None:
                token = external["token"].replace("%2F", "/")
                pkg, module, name = token.split(":")
                alias = "pulumi" + _pascal(pkg)
                self.imports.add(f'import * as {alias} from "@pulumi/{pkg}";')
                return f"{alias}.{_external_module(pkg, module)}.{name}"
            token = ref.removeprefix("#/types/")
            typ = self.schema["types"][token]
            if "enum" in typ:
                return f"types.enums.{self._name(token)}"
            return f"types.input.{self._name(token)}Args" if input_ else f"types.output.{self._name(token)}"
        kind = spec.get("type")
        if kind == "array":
            return f"{self.wrapped(spec['items'], input_=input_)}[]"
        if kind == "object" and "additionalProperties" in spec:
            return f"{{[key: string]: {self.wrapped(spec['additionalProperties'], input_=input_)}}}"
        return {"string": "string", "integer": "number", "number": "number", "boolean": "boolean"}.get(
            str(kind), "any")

    def wrapped(self, spec: dict[str, Any], *, input_: bool) -> str:
        inner = self.type_of(spec, input_=input_)
        return f"pulumi.Input<{inner}>" if input_ and not spec.get("plain") else inner

    def properties(self, props: dict[str, Any], required: list[str], *, input_: bool, indent: str) -> list[str]:
        lines = []
        for key in sorted(props):
            spec = props[key]
            if spec.get("description"):
                lines.append(f"{indent}/** {_doc(spec['description'])} */")
            if input_:
                lines.append(f"{indent}{key}{'' if key in required else '?'}: {self.wrapped(spec, input_=True)};")
            else:
                typ = self.type_of(spec, input_=False)
                lines.append(f"{indent}readonly {key}{'' if key in required else '?'}: {typ};")
        return lines


def declarations(schema: dict[str, Any]) -> str:
    """index.d.ts of the package's Node.js SDK."""
    writer = _Writer(schema)
    body: list[str] = []
    inputs: list[str] = []
    outputs: list[str] = []
    enums: list[str] = []
    for token in sorted(schema.get("types", {})):
        typ = schema["types"][token]
        name = token.rsplit(":", 1)[-1]
        if "enum" in typ:
            members = [f"        readonly {m.get('name') or _pascal(str(m['value']))}: {json.dumps(m['value'])};"
                       for m in typ["enum"]]
            enums += [f"    const {name}: {{", *members, "    };",
                      f"    type {name} = (typeof {name})[keyof typeof {name}];"]
            continue
        required = list(typ.get("required", []))
        inputs += [f"    interface {name}Args {{",
                   *writer.properties(typ.get("properties", {}), required, input_=True, indent="        "), "    }"]
        outputs += [f"    interface {name} {{",
                    *writer.properties(typ.get("properties", {}), required, input_=False, indent="        "),
                    "    }"]
    for token in sorted(schema.get("resources", {})):
        resource = schema["resources"][token]
        name = token.rsplit(":", 1)[-1]
        if resource.get("description"):
            body.append(f"/** {_doc(resource['description'])} */")
        body.append(f"export declare class {name} extends pulumi.ComponentResource {{")
        body.append(f"    static isInstance(obj: any): obj is {name};")
        for key in sorted(resource.get("properties", {})):
            spec = resource["properties"][key]
            typ = writer.type_of(spec, input_=False)
            if key not in resource.get("required", []):
                typ += " | undefined"
            body.append(f"    readonly {key}: pulumi.Output<{typ}>;")
        optional = "?" if not resource.get("requiredInputs") else ""
        body.append(f"    constructor(name: string, args{optional}: {name}Args, "
                    "opts?: pulumi.ComponentResourceOptions);")
        body.append("}")
        body.append(f"export interface {name}Args {{")
        body += writer.properties(resource.get("inputProperties", {}), list(resource.get("requiredInputs", [])),
                                  input_=True, indent="    ")
        body.append("}")
    head = ['import * as pulumi from "@pulumi/pulumi";', *sorted(writer.imports)]
    types = ["export declare namespace types {", "  namespace input {", *inputs, "  }",
             "  namespace output {", *outputs, "  }", "  namespace enums {", *enums, "  }", "}"]
    return "\n".join([*head, "", *types, "", *body, ""])

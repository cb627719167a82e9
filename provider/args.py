"""Typed Args for the component package, derived from the stack-config models: one schema, one validation path.

`args_type(Model)` turns a pydantic model of components/config (ClusterConfig, KarpenterPoolConfig, ...) into
a TypedDict that `pulumi.provider.experimental`'s analyzer can read: every field keeps its Python name (the
analyzer camel-cases it for the schema), a field with a default is `NotRequired` (the default stays in the
model and applies when the input is absent), and each description is the model field's own. Nothing about a
field (bounds, patterns, choices, defaults, cross checks) is written here: a change in the models flows into
the schema and into the validation of every package consumer.

The analyzer accepts str, int, float, bool, lists, dicts with str keys, TypedDicts and enums, and refuses
unions (pulumi 3.272.0 pulumi/provider/experimental/analyzer.py:454-705: `is_simple`, `is_list`, `is_dict`,
the custom-type branch, and "Union types are not supported" at 624-627). So a `Literal` becomes an enum of
its choices (`<Model><Field>`, one per set of choices: a TypeScript user's compiler checks the choice), and
`X | None` becomes X, not required. The enum is the schema's only: the host hands the component the raw
value (provider/host.py) and the model judges it, with the stack file's message.

`to_model_values` turns what the provider host hands the component (Python names, integers as floats) back
into the model's aliases, so `check_stack` validates exactly what a stack file would hold.

A field whose value naturally comes from another resource (an ACM certificate, a WAF web ACL, a KMS key the same
program creates: INPUT_FIELDS) is an input, not `plain`, so an Output can feed it. Construct's inputs arrive
settled (pulumi 3.272.0 pulumi/provider/server.py `_select_value`, rpc.py `deserialize_output_value`), so a
known value is validated as it is; an unknown one (a preview of a stack that creates the resource) is
validated as a stand-in that passes (None where the field is optional) and reported as not checked, and the
component hands the Output itself on to the children (provider/hosted.py).
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pulumi
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# TypedDicts built so far (by model), and the description of each property, by TypedDict name and field.
_BUILT: dict[type[BaseModel], type] = {}
DESCRIPTIONS: dict[str, dict[str, str]] = {}
# Fields whose value naturally comes from another resource: (model, field) -> the stand-in that passes the
# field's checks while the value is unknown (a preview), given the region.
INPUT_FIELDS: dict[tuple[str, str], Callable[[str | None], Any]] = {
    ("IngressConfig", "certificate_arn"): lambda region: (
        f"arn:aws:acm:{region or 'us-east-1'}:000000000000:certificate/00000000-0000-0000-0000-000000000000"),
    ("IngressConfig", "waf_acl_arn"): lambda region: None,
    ("ModelVolumeConfig", "kms_key_arn"): lambda region: None,
}
# Enums built so far, by their choices (a choice list shared by two fields is one enum).
ENUMS: dict[tuple[Any, ...], type[enum.Enum]] = {}
_SIMPLE = (str, int, float, bool)


class NotPlainError(ValueError):
    """A configuration input arrived as an Output (unknown until apply); the models validate plain values only."""


def _strip(annotation: Any) -> Any:
    """Annotated and Optional removed: the type the value has."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                raise TypeError(f"{annotation}: a union the package schema cannot express")
            annotation = args[0]
        else:
            return annotation


def _member(value: Any) -> str:
    name = re.sub(r"\W+", "_", str(value)).strip("_").upper()
    return name if name[:1].isalpha() else f"V_{name}"


def choices_enum(owner: str, field: str, values: tuple[Any, ...]) -> type[enum.Enum]:
    """The schema enum of a Literal's choices, named `<Model without Config><Field>` where first met."""
    found = ENUMS.get(values)
    if found is not None:
        return found
    kinds = {type(v) for v in values}
    if len(kinds) != 1:
        raise TypeError(f"{owner}.{field}: a Literal of mixed types")
    name = owner.removesuffix("Config") + "".join(part.capitalize() for part in field.split("_"))
    built = enum.Enum(name, {_member(v): v for v in values}, type=kinds.pop(), module=__name__)  # type: ignore[misc]
    built.__doc__ = f"The choices of {owner}.{field}."
    DESCRIPTIONS[name] = {_member(v): f"{field} = {v}" for v in values}
    ENUMS[values] = built
    return built


def schema_type(annotation: Any, owner: str = "", field: str = "") -> Any:
    """The analyzer-readable type of a model field's annotation (`owner.field` names its enums)."""
    annotation = _strip(annotation)
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return choices_enum(owner, field, typing.get_args(annotation))
    if origin in (list, tuple):
        return list[schema_type(typing.get_args(annotation)[0], owner, field)]  # type: ignore[misc]
    if origin is dict:
        key, value = typing.get_args(annotation)
        return dict[_strip(key), schema_type(value, owner, field)]  # type: ignore[misc]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return args_type(annotation)
    if annotation in _SIMPLE:
        return annotation
    raise TypeError(f"{annotation}: no package schema type for it")


def _description(info: FieldInfo) -> str:
    return (info.description or "").strip()


def args_type(model: type[BaseModel]) -> type:
    """The TypedDict of `model`, named like it, built once."""
    built = _BUILT.get(model)
    if built is not None:
        return built
    fields: dict[str, Any] = {}
    DESCRIPTIONS[model.__name__] = {}
    for name, info in model.model_fields.items():
        typ = schema_type(info.annotation, model.__name__, name)
        has_default = info.default is not PydanticUndefined or info.default_factory is not None
        if (model.__name__, name) in INPUT_FIELDS:
            typ = pulumi.Input[typ]  # type: ignore[misc,valid-type]  # an Output may feed it (not plain)
        fields[name] = NotRequired[typ] if has_default else typ
        DESCRIPTIONS[model.__name__][name] = _description(info)
    typed: type = TypedDict(model.__name__, fields)  # type: ignore[misc]  # built from the model, by name
    typed.__module__ = __name__
    typed.__doc__ = (model.__doc__ or model.__name__).strip()
    _BUILT[model] = typed
    return typed


def _field_schema_name(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def schema_names(model: type[BaseModel]) -> dict[str, str]:
    """Model alias -> the property name in the package schema (`diskSizeGiB` -> `diskSizeGib`)."""
    return {(info.alias or name): _field_schema_name(name) for name, info in model.model_fields.items()}


def renamed_aliases() -> dict[str, str]:
    """Every model alias the schema spells otherwise, over the models built so far (nested ones included)."""
    return {alias: schema for model in _BUILT for alias, schema in schema_names(model).items() if alias != schema}


@dataclass
class Settling:
    """What `to_model_values` met: the input paths of values still unknown, and the region stand-ins use."""

    region: str | None = None
    unknown: list[str] = field(default_factory=list)


def settled(value: pulumi.Output[Any]) -> tuple[bool, bool, Any]:
    """(known, secret, value) of an Output that Construct handed over already resolved; unknown otherwise."""
    data = value._data  # the SDK's resolved state (Construct's inputs arrive settled)
    if not data.done() or data.exception() is not None:
        return False, False, None
    state = data.result()
    return bool(state.is_known), bool(state.is_secret), state.value


def plain_value(value: Any, where: str) -> Any:
    """A section value that came as an Output (an SDK without output values sends a whole section that way)."""
    known, secret, inner = settled(value)
    if not known:
        raise NotPlainError(f"{where} = (unknown until apply): this configuration value must be known at preview "
                            "(it names and sizes what is created); fix: pass a literal or a value known at preview")
    if secret:
        raise NotPlainError(f"{where} = (secret): configuration values are plain (they land in resource names, "
                            "tags and labels); fix: pass it without the secret wrapper")
    return inner


def to_model_values(model: type[BaseModel], value: Any, where: str = "", settling: Settling | None = None) -> Any:
    """Python-named inputs -> the model's aliases, integral floats of int fields back to int; unknown keys kept."""
    if isinstance(value, _OUTPUT_TYPES):
        value = plain_value(value, where or model.__name__)
    if not isinstance(value, Mapping):
        return value
    settling = settling if settling is not None else Settling()
    out: dict[str, Any] = {}
    for key, item in value.items():
        info = model.model_fields.get(key)
        if info is None:
            out[key] = item
            continue
        path = f"{where}.{_field_schema_name(key)}" if where else _field_schema_name(key)
        stand_in = INPUT_FIELDS.get((model.__name__, key))
        if stand_in is not None and isinstance(item, _OUTPUT_TYPES):
            known, _, inner = settled(item)
            if not known:
                settling.unknown.append(path)
                inner = stand_in(settling.region)
                if inner is None:
                    continue
            out[info.alias or key] = inner
            continue
        out[info.alias or key] = _convert(info.annotation, item, path, settling)
    return out


def _convert(annotation: Any, value: Any, where: str, settling: Settling) -> Any:
    if isinstance(value, _OUTPUT_TYPES):
        value = plain_value(value, where)
    try:
        annotation = _strip(annotation)
    except TypeError:
        return value
    origin = typing.get_origin(annotation)
    if origin in (list, tuple) and isinstance(value, list):
        inner = typing.get_args(annotation)[0]
        return [_convert(inner, v, f"{where}[{i}]", settling) for i, v in enumerate(value)]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return to_model_values(annotation, value, where, settling)
    # Numbers cross the provider protocol as doubles, and the SDK's int conversion is overwritten right after
    # it is made (pulumi 3.272.0 pulumi/provider/experimental/component.py:276-287), so an int field gets 8.0.
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


_OUTPUT_TYPES = (pulumi.Output,)

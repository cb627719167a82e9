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
"""

from __future__ import annotations

import enum
import re
import types
import typing
from collections.abc import Mapping
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import pulumi
from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

# TypedDicts built so far (by model), and the description of each property, by TypedDict name and field.
_BUILT: dict[type[BaseModel], type] = {}
DESCRIPTIONS: dict[str, dict[str, str]] = {}
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


def to_model_values(model: type[BaseModel], value: Any) -> Any:
    """Python-named inputs -> the model's aliases, integral floats of int fields back to int; unknown keys kept."""
    if isinstance(value, _OUTPUT_TYPES):
        raise NotPlainError("a configuration value must be plain (known when the program runs), not an Output")
    if not isinstance(value, Mapping):
        return value
    out: dict[str, Any] = {}
    for key, item in value.items():
        info = model.model_fields.get(key)
        if info is None:
            out[key] = item
            continue
        out[info.alias or key] = _convert(info.annotation, item)
    return out


def _convert(annotation: Any, value: Any) -> Any:
    if isinstance(value, _OUTPUT_TYPES):
        raise NotPlainError("a configuration value must be plain (known when the program runs), not an Output")
    try:
        annotation = _strip(annotation)
    except TypeError:
        return value
    origin = typing.get_origin(annotation)
    if origin in (list, tuple) and isinstance(value, list):
        inner = typing.get_args(annotation)[0]
        return [_convert(inner, v) for v in value]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return to_model_values(annotation, value)
    # Numbers cross the provider protocol as doubles, and the SDK's int conversion is overwritten right after
    # it is made (pulumi 3.272.0 pulumi/provider/experimental/component.py:276-287), so an int field gets 8.0.
    if annotation is int and isinstance(value, float) and value.is_integer():
        return int(value)
    return value






_OUTPUT_TYPES = (pulumi.Output,)

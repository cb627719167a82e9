"""Turning pydantic validation errors and config issues into one readable `Problem` per rejected key."""

from __future__ import annotations

import dataclasses
import json
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

from components.config.issues import (
    _UNSET,
    PREFERRED_NODE_OS,
    ConfigIssue,
    ConfigIssues,
    Path,
    PathPart,
    _close,
    _format_path,
)
from components.config.models import StackConfig


def _format_value(value: Any) -> str:
    if value is _UNSET:
        return "(missing)"
    text = json.dumps(value, default=str, sort_keys=True) if not isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 160 else text[:157] + "..."


def _unwrap(annotation: Any) -> Any:
    """Strip Annotated / Optional / list to the model or literal underneath (one list level at a time)."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            annotation = args[0] if len(args) == 1 else annotation
            if len(args) != 1:
                return annotation
        else:
            return annotation


def _field_at(path: Sequence[PathPart]) -> tuple[type[BaseModel] | None, FieldInfo | None, Any]:
    """The model holding the last key of `path`, that key's FieldInfo and the annotation it resolves to."""
    model: type[BaseModel] | None = StackConfig
    info: FieldInfo | None = None
    annotation: Any = StackConfig
    holder: type[BaseModel] | None = StackConfig
    for part in path:
        annotation = _unwrap(annotation)
        if isinstance(part, int):
            if typing.get_origin(annotation) is list:
                annotation = typing.get_args(annotation)[0]
                continue
            return holder, info, annotation
        if not (isinstance(annotation, type) and issubclass(annotation, BaseModel)):
            return holder, None, None
        model = annotation
        info = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        holder = model
        if info is None:
            return holder, None, None
        annotation = info.annotation
    return holder, info, _unwrap(annotation)


def _aliases(model: type[BaseModel]) -> list[str]:
    return [f.alias or n for n, f in model.model_fields.items()]


def _literal_choices(annotation: Any) -> list[str]:
    annotation = _unwrap(annotation)
    if typing.get_origin(annotation) is list:
        annotation = _unwrap(typing.get_args(annotation)[0])
    if typing.get_origin(annotation) is Literal:
        return [str(a) for a in typing.get_args(annotation)]
    return []


_TYPE_NAMES = {
    "string_type": "a string", "int_type": "an integer", "bool_type": "true or false", "list_type": "a list",
    "model_type": "a mapping of keys", "dict_type": "a mapping of keys", "model_attributes_type": "a mapping of keys",
    "int_from_float": "a whole number", "float_type": "a number",
}


@dataclass(frozen=True)
class Problem:
    """One rejected key, ready to print."""

    path: Path
    value: Any
    rule: str
    nearest: tuple[str, ...] = ()
    fix: str | None = None
    # A problem of the schema stage: the service and matrix checks did not run (`loader.problems_message` says so).
    holds_back: bool = dataclasses.field(default=False, compare=False)

    def render(self, stack_file: str) -> str:
        where = _format_path(self.path) or "(top level)"
        text = f"{stack_file}: {where} = {_format_value(self.value)}: {_without_listed(self.rule, self.nearest)}"
        if self.nearest:
            text += f"; nearest valid choice: {', '.join(self.nearest)}"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text


def _without_listed(rule: str, nearest: Sequence[str]) -> str:
    """The rule without its own closing list of the nearest choices (render appends them once).

    Matrix findings end with their choices ("...; nearest published for ubuntu22.04: 535.309.01, ...",
    "... Nearest supported drivers: 580.173.02, ..."); the rendered message names them once, at the end.
    """
    text = rule.rstrip(". ")
    listed = ", ".join(nearest)
    if nearest and text.endswith(listed):
        head = text[: -len(listed)].rstrip()
        cut = max(head.rfind("; "), head.rfind(". "))
        if head.endswith(":") and cut > 0:
            return head[:cut]
    return text


def merge_by_key(problems: Sequence[Problem]) -> list[Problem]:
    """One problem per key: problems blaming the same key (and value) become one, their reasons joined.

    Two rules can reject one key for related reasons (driver 535.309.01 on ubuntu-24.04: no published
    image, and an operator branch that does not support it); the user edits one key, so reads one message.
    """
    merged: dict[tuple[Path, str], Problem] = {}
    for problem in problems:
        key = (problem.path, _format_value(problem.value))
        first = merged.get(key)
        if first is None:
            merged[key] = problem
            continue
        nearest = tuple(dict.fromkeys((*first.nearest, *problem.nearest)))
        fixes = [f for f in dict.fromkeys((first.fix, problem.fix)) if f]
        rule = f"{_without_listed(first.rule, first.nearest)}; also {_without_listed(problem.rule, problem.nearest)}"
        merged[key] = Problem(first.path, first.value, rule, nearest, "; ".join(fixes) or None)
    return list(merged.values())


def _problem_from_error(error: Mapping[str, Any]) -> list[Problem]:
    loc: Path = tuple(p for p in error["loc"] if isinstance(p, (str, int)))
    kind = str(error["type"])
    value = error.get("input", _UNSET)
    ctx = error.get("ctx") or {}
    exc = ctx.get("error")
    if isinstance(exc, ConfigIssues):
        return [_problem_from_issue(loc, issue, value) for issue in exc.issues]
    if isinstance(exc, ConfigIssue):
        return [_problem_from_issue(loc, exc, value)]
    if kind == "extra_forbidden":
        holder, _, annotation = _field_at(loc[:-1])
        model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else holder
        allowed = _aliases(model) if model is not None else []
        key = str(loc[-1])
        where = "gpu-platform:" + key if len(loc) == 1 else key
        nearest = _close(key, allowed)
        return [Problem(loc, value, f"unknown key {where!r}", tuple(nearest),
                        None if nearest else f"allowed keys: {', '.join(allowed)}")]
    _, info, annotation = _field_at(loc)
    if kind == "missing":
        description = info.description if info is not None else None
        key = f"gpu-platform:{loc[0]}" if len(loc) == 1 else _format_path(loc)
        return [Problem(loc, _UNSET, "required key is missing", (),
                        f"add {key}" + (f" ({description})" if description else ""))]
    if kind == "literal_error":
        choices = _literal_choices(annotation) or re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        return [Problem(loc, value, f"must be one of {', '.join(choices)}",
                        tuple(_close(str(value), choices, PREFERRED_NODE_OS) or choices))]
    if kind in ("greater_than_equal", "less_than_equal", "greater_than", "less_than"):
        bound = ctx.get("ge", ctx.get("le", ctx.get("gt", ctx.get("lt"))))
        words = {"greater_than_equal": ">=", "less_than_equal": "<=", "greater_than": ">", "less_than": "<"}
        return [Problem(loc, value, f"must be {words[kind]} {bound}", (str(bound),))]
    if kind in ("too_short", "too_long"):
        return [Problem(loc, value, str(error["msg"]).lower(), (),
                        "give at least one entry" if kind == "too_short" else "remove entries")]
    if kind in _TYPE_NAMES:
        fix = None
        hint: tuple[str, ...] = ()
        if kind == "string_type" and isinstance(value, (int, float)) and not isinstance(value, bool):
            fix = 'quote it in YAML (an unquoted 1.30 reads as the number 1.3)'
            hint = (json.dumps(str(value)),)
        elif kind == "int_type" and isinstance(value, str) and value.strip().isdigit():
            hint = (value.strip(),)
            fix = "write the number without quotes"
        elif kind == "bool_type" and isinstance(value, str) and value.strip().lower() in ("true", "false"):
            hint = (value.strip().lower(),)
            fix = "write true or false without quotes"
        return [Problem(loc, value, f"must be {_TYPE_NAMES[kind]}", hint, fix)]
    return [Problem(loc, value, str(error["msg"]), (), None)]


def _problem_from_issue(loc: Path, issue: ConfigIssue, input_value: Any) -> Problem:
    path = (*loc, *issue.path) if not _is_root_path(issue.path) else issue.path
    value = issue.value if issue.value is not _UNSET else input_value
    return Problem(path, value, issue.rule, issue.nearest, issue.fix)


def _is_root_path(path: Path) -> bool:
    return bool(path) and path[0] in {f.alias or n for n, f in StackConfig.model_fields.items()}


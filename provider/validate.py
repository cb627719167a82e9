"""One validation path for the package: Args -> the stack sections they stand for -> `check_stack` -> one message.

A component's Args are stack-config sections (`cluster`, `karpenter.pools[i]`, `inferenceServices[i]`, ...), so
the package validates them by building the stack those sections make and running the checks of the stack file
(`components.config.check_stack`: the pydantic models, the service and matrix checks). A problem is rendered by
the same `Problem.render`, with two things adapted to the resource input: the "file" is the resource
(`KarpenterGpuPool "gpu-a"`) and the key is the input path (`pool.maxGpus` for `karpenter.pools[0].maxGpus`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

import pulumi
from pydantic import BaseModel

from components.config import (
    AddonsConfig,
    ClusterConfig,
    ConfigError,
    GpuNodeGroupConfig,
    GpuOperatorConfig,
    InferenceServiceConfig,
    KarpenterPoolConfig,
    Path,
    Problem,
    StackConfig,
    SystemNodeGroupConfig,
    check_stack,
)
from components.config.loader import problems_message
from policies.gpu_guard.calendar import program_day
from provider.args import NotPlainError, Settling, renamed_aliases, to_model_values

# The stack sections a component's Args may hold: input name -> (stack key path, model).
SECTIONS: dict[str, tuple[Path, type[BaseModel]]] = {
    "cluster": (("cluster",), ClusterConfig),
    "system_node_group": (("systemNodeGroup",), SystemNodeGroupConfig),
    "gpu_operator": (("gpuOperator",), GpuOperatorConfig),
    "node_group": (("gpuNodeGroups", 0), GpuNodeGroupConfig),
    "pool": (("karpenter", "pools", 0), KarpenterPoolConfig),
    "service": (("inferenceServices", 0), InferenceServiceConfig),
    "addons": (("addons",), AddonsConfig),
}
# Sections given as lists (the pools a service or the operator serves).
LIST_SECTIONS: dict[str, tuple[Path, type[BaseModel]]] = {
    "node_groups": (("gpuNodeGroups",), GpuNodeGroupConfig),
    "pools": (("karpenter", "pools"), KarpenterPoolConfig),
}


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _place(raw: dict[str, Any], path: Path, value: Any) -> None:
    """Put `value` at `path` of the raw stack (creating mappings and one-entry lists on the way)."""
    node: Any = raw
    for part, nxt in zip(path, (*path[1:], None), strict=True):
        if nxt is None:
            if isinstance(part, int):
                node.append(value)
            else:
                node[part] = value
            return
        if isinstance(part, int):
            if not node:
                node.append({} if isinstance(nxt, str) else [])
            node = node[part]
        else:
            node = node.setdefault(part, [] if isinstance(nxt, int) else {})


def stack_of(args: Mapping[str, Any], *, karpenter_version: str | None = None,
             settling: Settling | None = None) -> tuple[dict[str, Any], list[tuple[Path, Path]]]:
    """The raw stack (aliases) the Args make, and the (stack path, input path) pairs to render keys back.

    `settling` collects the input paths of values unknown in this preview (provider/args.py INPUT_FIELDS)."""
    raw: dict[str, Any] = {}
    paths: list[tuple[Path, Path]] = []
    settling = settling if settling is not None else Settling()
    for key, value in args.items():
        if value is None:
            continue
        if key in SECTIONS:
            where, model = SECTIONS[key]
            _place(raw, where, to_model_values(model, value, _camel(key), settling))
            paths.append((where, (_camel(key),)))
        elif key in LIST_SECTIONS:
            where, model = LIST_SECTIONS[key]
            items = value if isinstance(value, list) else []
            start = len(_get(raw, where))
            for i, item in enumerate(items):
                _place(raw, (*where, start + i), to_model_values(model, item, f"{_camel(key)}[{i}]", settling))
                paths.append(((*where, start + i), (_camel(key), i)))
    if "karpenter" in raw or karpenter_version is not None:
        karpenter = raw.setdefault("karpenter", {})
        if karpenter_version is not None:
            karpenter["version"] = karpenter_version
            paths.append((("karpenter", "version"), ("karpenterVersion",)))
    return raw, paths


def _get(raw: Mapping[str, Any], path: Path) -> list[Any]:
    node: Any = raw
    for part in path:
        if not isinstance(node, Mapping) or part not in node:
            return []
        node = node[part]
    return node if isinstance(node, list) else []


def input_path(path: Path, paths: Sequence[tuple[Path, Path]]) -> Path:
    """The stack key path as the resource input path (longest section prefix first; schema spellings)."""
    # Aliases the schema spells otherwise (the analyzer camel-cases Python names: disk_size_gib -> diskSizeGib).
    renamed = renamed_aliases()
    for where, given in sorted(paths, key=lambda pair: -len(pair[0])):
        if path[: len(where)] == where:
            rest = tuple(renamed.get(p, p) if isinstance(p, str) else p for p in path[len(where):])
            return (*given, *rest)
    return path


def resource_label(component: str, name: str) -> str:
    return f'{component} "{name}"'


def validate(component: str, name: str, args: Mapping[str, Any], *, karpenter_version: str | None = None,
             today: date | None = None, report: bool = True) -> StackConfig:
    """The StackConfig the Args stand for, or ConfigError with the stack file's message adapted to the input.

    `today`: the day lifecycles are judged on; None is the program's day (`GPU_PLATFORM_TODAY`, else the real
    date: policies/gpu_guard/calendar.py), which the plugin inherits from the `pulumi` command that starts it.
    `report`: log the advisories (once per Construct: the component's own validation reports them).
    """
    label = resource_label(component, name)
    region = pulumi.Config("aws").get("region")
    settling = Settling(region=region)
    try:
        raw, paths = stack_of(args, karpenter_version=karpenter_version, settling=settling)
    except NotPlainError as err:
        raise ConfigError(f"{label}: {err}") from None
    config, problems, advisories = check_stack(raw, region=region, today=today or program_day())
    rendered = [dataclasses.replace(p, path=input_path(p.path, paths)) for p in problems]
    if config is None:
        raise ConfigError(problems_message(rendered, label))
    if report:
        for path in settling.unknown:
            pulumi.log.warn(f"{label}: {path} is unknown in this preview (it comes from a resource not created yet), "
                            "so it was not checked; it is checked when it is known (pulumi up)")
        for advisory in advisories:
            pulumi.log.warn(dataclasses.replace(advisory, path=input_path(advisory.path, paths)).render(label))
    return config


def first_problem(component: str, name: str, args: Mapping[str, Any], **kwargs: Any) -> tuple[str, str] | None:
    """(input path, message) of a rejected input, for the provider's InputPropertyError; None when valid."""
    try:
        validate(component, name, args, report=False, **kwargs)
    except ConfigError as err:
        message = str(err)
        head = message.split(": ", 2)
        key = head[1].split(" = ", 1)[0] if len(head) > 1 else ""
        return key, message
    return None


__all__ = ["Problem", "first_problem", "input_path", "resource_label", "stack_of", "validate"]

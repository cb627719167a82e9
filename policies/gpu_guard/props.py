"""Reading resource properties as the policy SDK hands them over: plain walks that respect unknowns.

Not a policy. `get` walks mappings and sequences (a step into an unknown value raises the SDK's
`UnknownValueError`, so the verdict waits, naming the value); `deferred_get` keeps such an error in a
`Deferred` that raises only when the value is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pulumi_policy.proxy import UnknownValueError


class Deferred:
    """A value the engine does not know yet: reading it raises the UnknownValueError that names it."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def value(self) -> Any:
        raise self.error


def deferred_get(obj: Any, *path: Any, default: Any = None) -> Any:
    """`get`, but an unknown value comes back as a `Deferred` instead of raising now."""
    try:
        return get(obj, *path, default=default)
    except UnknownValueError as err:
        return Deferred(err)


def get(obj: Any, *path: Any, default: Any = None) -> Any:
    """Walk mappings and sequences; `default` where a step is missing (unknowns still raise)."""
    cur = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(cur, Sequence) or isinstance(cur, str) or step >= len(cur):
                return default
            cur = cur[step]
        else:
            if not isinstance(cur, Mapping) or step not in cur:
                return default
            cur = cur[step]
    return cur


def as_str_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(value[k]) for k in value}


def as_list(value: Any) -> list[Any]:
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [value[i] for i in range(len(value))]
    return []



def properties_pending(resource_type: str, props: Any) -> bool:
    """True when a Kubernetes object reaches AnalyzeStack with no properties at all.

    In a first `pulumi preview` the Kubernetes provider's kubeconfig comes from the cluster and is
    unknown, so the engine leaves that provider unconfigured; its preview `Create` returns an empty
    property map, which becomes the object's outputs, and `AnalyzeStack` sends outputs (pulumi/pulumi
    `pkg/resource/plugin/provider_plugin.go`, `pkg/resource/deploy/step.go`, `step_generator.go`; see
    `tools/engine/view.py`). Such an object is present but not yet known: a stack policy waits on it
    instead of judging it absent or empty. Resource policies still get the program's inputs.
    """
    if not resource_type.startswith("kubernetes:"):
        return False
    return isinstance(props, Mapping) and len(props) == 0


def to_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None

"""Each changed property of a saved update plan with its value before and after, for the reviewer of prod's plan.

A plan holds only the new values: each resource plan's goal carries `inputDiff` (`adds`, `updates` with the new
value of each changed top-level input, `deletes` with the removed keys: pulumi/pulumi
`sdk/go/common/apitype/plan.go` `PlanDiffV1`, `GoalV1.InputDiff`, at tag v3.259.0). The old values come from the
stack's state as `pulumi stack export` writes it (`deployment.resources[]`, each with `urn` and `inputs`:
`sdk/go/common/apitype/core.go` `ResourceV3`), exported in the same job before the preview and sealed with the plan
(its sha256 in the manifest).

Masked: every secret (the `4dabf18193072939515e22adb298388d` signature object, ciphertext or not), and a value
unknown at preview is shown as such, since `pulumi up --plan` accepts any value there (`plan.go` lines 40-41).
Standard library only.
"""

from __future__ import annotations

import json
from typing import Any

from tools.engine.records import UNKNOWN  # the serialized unknown value (standard library only, as this module)

# Source: pulumi/pulumi sdk/go/common/resource/sig/sig.go (Key, Secret): a property value that is an object with
# this key set to this value is a secret.
SIG_KEY = "4dabf18193072939515e22adb298388d"
SIG_SECRET = "1b47061264138c4ac30d75fd1eb44270"
SECRET_TEXT = "[secret]"
UNKNOWN_TEXT = "(unknown at preview: any value is accepted)"
ABSENT_TEXT = "(absent)"
WIDTH = 160


def masked(value: Any) -> Any:
    """`value` with every secret replaced by "[secret]" and every unknown by its note."""
    if isinstance(value, dict):
        if value.get(SIG_KEY) == SIG_SECRET:
            return SECRET_TEXT
        return {k: masked(v) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v) for v in value]
    if value == UNKNOWN:
        return UNKNOWN_TEXT
    return value


def shown(value: Any) -> str:
    """One table cell: compact JSON, masked, cut at WIDTH characters (the cut is said)."""
    value = masked(value)
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    if len(text) > WIDTH:
        text = text[:WIDTH] + f"... ({len(text)} characters)"
    return "`" + text.replace("`", "'").replace("|", "\\|").replace("\n", " ") + "`"


def state_inputs(state: Any) -> dict[str, dict[str, Any]]:
    """URN -> inputs of every resource in a `pulumi stack export` document."""
    deployment = state.get("deployment") if isinstance(state, dict) else None
    resources = deployment.get("resources") if isinstance(deployment, dict) else None
    if not isinstance(resources, list):
        raise ValueError("not a `pulumi stack export` document (no deployment.resources)")
    return {str(r.get("urn")): dict(r.get("inputs") or {}) for r in resources if isinstance(r, dict)}


def changes(plan: dict[str, Any], state: Any) -> list[tuple[str, str, str, str]]:
    """(urn, property, before, after) for every input the plan adds, updates or deletes, in URN then key order."""
    old = state_inputs(state)
    rows: list[tuple[str, str, str, str]] = []
    for urn, resource_plan in sorted((plan.get("resourcePlans") or {}).items()):
        goal = (resource_plan or {}).get("goal") or {}
        diff = goal.get("inputDiff") or {}
        before = old.get(urn, {})
        for key, value in sorted((diff.get("adds") or {}).items()):
            rows.append((urn, key, shown(before[key]) if key in before else ABSENT_TEXT, shown(value)))
        for key, value in sorted((diff.get("updates") or {}).items()):
            rows.append((urn, key, shown(before[key]) if key in before else ABSENT_TEXT, shown(value)))
        for key in sorted(diff.get("deletes") or []):
            rows.append((urn, key, shown(before[key]) if key in before else ABSENT_TEXT, ABSENT_TEXT))
    return rows


def markdown(rows: list[tuple[str, str, str, str]]) -> str:
    if not rows:
        return "No input changes.\n"
    lines = ["| resource | property | before | after |", "|---|---|---|---|"]
    for urn, key, before, after in rows:
        parts = urn.split("::")
        name = f"`{parts[-2].rsplit('$', 1)[-1]}` `{parts[-1]}`" if len(parts) >= 4 else f"`{urn}`"
        lines.append(f"| {name} | `{key}` | {before} | {after} |")
    return "\n".join(lines) + "\n"

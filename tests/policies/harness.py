"""Runs one policy over a fixture, the way the pack's analyzer servicer calls it.

A fixture folder `fixtures/<policy-name>/` holds:

- `baseline.yaml`: `resources:` (each `type`, `name`, `props`, optional `parent`), optional `config:`
  (the policy's config properties); it must produce no violation.
- `fail_<what>.yaml`: `patch:` applied to the baseline (one change), `expect:` the violation message
  substrings, one per violation, and optional `config:`.
- `pass_<what>.yaml`: a patch that must still produce no violation (`expect: []`).

Patch operations, each an item of `patch:`:
  `{resource: NAME, set: PATH, value: V}`   set a value (PATH is a list of keys / indexes)
  `{resource: NAME, delete: PATH}`          delete a key or list item
  `{add: {type, name, props}}`              add a resource
  `{remove: NAME}`                          remove a resource
The string `<unknown>` anywhere in props stands for a value unknown during preview.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pulumi_policy import (
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.policy import PolicyCustomTimeouts
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from policies.gpu_guard.base import CAVEAT_MARK

FIXTURES = Path(__file__).parent / "fixtures"
UNKNOWN_MARK = "<unknown>"


@dataclass(frozen=True)
class Outcome:
    messages: tuple[str, ...]
    unknown: str | None  # the "can't be known during preview" message, when the policy could not judge


def _unknowns(value: Any) -> Any:
    if value == UNKNOWN_MARK:
        return UNKNOWN_STRING_VALUE
    if isinstance(value, dict):
        return {k: _unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unknowns(v) for v in value]
    return value


def _urn(resource: Mapping[str, Any]) -> str:
    return f"urn:pulumi:test::gpu-platform::{resource['type']}::{resource['name']}"


def _opts(resource: Mapping[str, Any]) -> PolicyResourceOptions:
    parent = resource.get("parent")
    return PolicyResourceOptions(
        bool(resource.get("protect", False)), [], None, [], PolicyCustomTimeouts(0, 0, 0), [],
        f"urn:pulumi:test::gpu-platform::{parent}" if parent else None,
    )


def _walk(container: Any, path: list[Any]) -> tuple[Any, Any]:
    for key in path[:-1]:
        container = container[key]
    return container, path[-1]


def apply_patch(resources: list[dict[str, Any]], patch: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = copy.deepcopy(resources)
    for op in patch:
        if "add" in op:
            out.append(copy.deepcopy(op["add"]))
            continue
        if "remove" in op:
            names = [r["name"] for r in out]
            if op["remove"] not in names:
                raise KeyError(f"patch removes unknown resource {op['remove']!r}; resources: {names}")
            out = [r for r in out if r["name"] != op["remove"]]
            continue
        target = next((r for r in out if r["name"] == op["resource"]), None)
        if target is None:
            raise KeyError(f"patch names unknown resource {op['resource']!r}")
        if "set" in op:
            parent, key = _walk(target["props"], list(op["set"]))
            parent[key] = op["value"]
        elif "delete" in op:
            parent, key = _walk(target["props"], list(op["delete"]))
            del parent[key]
        else:
            raise ValueError(f"unknown patch operation {op}")
    return out


def run_policy(policy: Any, resources: list[dict[str, Any]], config: Mapping[str, Any] | None) -> Outcome:
    """Run `policy` over `resources` as the analyzer servicer would; collect violation messages."""
    messages: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        messages.append(message)

    unknown: str | None = None
    try:
        if isinstance(policy, StackValidationPolicy):
            policy_resources = [
                PolicyResource(r["type"], unknown_checking_proxy(_unknowns(r.get("props", {}))), _urn(r),
                               r["name"], _opts(r), None, None, [], {})
                for r in resources
            ]
            by_urn = {p.urn: p for p in policy_resources}
            for pr, r in zip(policy_resources, resources, strict=True):
                if r.get("parent"):
                    pr.parent = by_urn.get(f"urn:pulumi:test::gpu-platform::{r['parent']}")
            policy.validate(StackValidationArgs(policy_resources, config), report)
        elif isinstance(policy, ResourceValidationPolicy):
            for r in resources:
                args = ResourceValidationArgs(r["type"], unknown_checking_proxy(_unknowns(r.get("props", {}))),
                                              _urn(r), r["name"], _opts(r), None, config)
                try:
                    policy.validate(args, report)
                except UnknownValueError as err:
                    unknown = err.message
        else:
            raise TypeError(f"{policy!r} is not a pulumi_policy policy")
    except UnknownValueError as err:
        unknown = err.message
    return Outcome(tuple(messages), unknown)


@dataclass(frozen=True)
class Case:
    policy: str
    name: str
    resources: list[dict[str, Any]]
    config: Mapping[str, Any] | None
    expect: tuple[str, ...]
    expect_unknown: bool


def load_cases(policy_name: str) -> list[Case]:
    folder = FIXTURES / policy_name
    baseline = yaml.safe_load((folder / "baseline.yaml").read_text())
    cases = [Case(policy_name, "baseline", baseline["resources"], baseline.get("config"), (), False)]
    for path in sorted(folder.glob("*.yaml")):
        if path.name == "baseline.yaml":
            continue
        if not path.name.startswith(("fail_", "pass_")):
            raise ValueError(f"{path}: fixture files are baseline.yaml, fail_*.yaml or pass_*.yaml")
        spec = yaml.safe_load(path.read_text())
        expect = tuple(spec.get("expect") or ())
        if path.name.startswith("fail_") and not expect and not spec.get("expect_unknown"):
            raise ValueError(f"{path}: a failing fixture must list the messages it expects")
        if path.name.startswith("pass_") and expect:
            raise ValueError(f"{path}: a passing fixture expects no violation")
        config = spec["config"] if "config" in spec else baseline.get("config")
        cases.append(Case(policy_name, path.stem, apply_patch(baseline["resources"], spec.get("patch", [])),
                          config, expect, bool(spec.get("expect_unknown", False))))
    return cases


def run_with_caveats(policy: Any, companions: list[Any], resources: list[dict[str, Any]],
                     config: Mapping[str, Any] | None) -> Outcome:
    """Run a policy and its advisory `-caveats` twins; twin messages come back marked with CAVEAT_MARK."""
    outcome = run_policy(policy, resources, config)
    messages = list(outcome.messages)
    unknown = outcome.unknown
    for companion in companions:
        twin = run_policy(companion, resources, config)
        messages.extend(CAVEAT_MARK + m for m in twin.messages)
        unknown = unknown or twin.unknown
    return Outcome(tuple(messages), unknown)


def assert_case(policy: Any, case: Case, companions: list[Any] | None = None) -> None:
    """Fixture messages of a policy with a caveats twin: the twin's are written with the `[advisory] ` mark."""
    outcome = run_with_caveats(policy, companions or [], case.resources, case.config)
    if case.expect_unknown:
        assert outcome.unknown, f"{case.policy}/{case.name}: expected the policy to report it cannot judge"
        return
    assert outcome.unknown is None, f"{case.policy}/{case.name}: policy could not judge: {outcome.unknown}"
    unmatched = list(outcome.messages)
    for expected in case.expect:
        hit = next((m for m in unmatched if expected in m), None)
        assert hit is not None, (
            f"{case.policy}/{case.name}: no violation contains {expected!r}; got {list(outcome.messages)}"
        )
        unmatched.remove(hit)
    assert not unmatched, f"{case.policy}/{case.name}: unexpected violations {unmatched}"

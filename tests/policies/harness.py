"""Runs one policy over a fixture, the way the pack's analyzer servicer calls it.

A fixture folder `fixtures/<policy-name>/` holds:

- `baseline.yaml`: `resources:` (each `type`, `name`, `props`, optional `parent`), optional `config:`
  (the stack's policy config entry for this policy: its config properties and, optionally,
  `enforcementLevel`); it must produce no violation, and no other policy of the pack may object to it
  either (tests/policies/test_baselines.py).
- `fail_<what>.yaml`: `patch:` applied to the baseline (one change), `expect:` the violations, one item
  per violation, and optional `config:` (replaces the baseline's).
- `pass_<what>.yaml`: a patch that must still produce no violation (`expect: []`).

Each item of `expect:` names the enforcement level the engine would report the violation at and a
substring of its message, as a one-key mapping:

    expect:
      - mandatory: "CUDA 13.0 cannot run on driver 535.309.01"
      - advisory: "runs only through minor version compatibility"

The level is the one after the stack's policy config, as the engine computes it
(`pulumi_policy.policy._PolicyAnalyzerServicer._get_enforcement_level`): the `enforcementLevel` of the
fixture's `config:` when set, else the policy's own default. `enforcementLevel` is stripped from the
properties the policy sees, as the engine does. A policy's advisory `-caveats` twin takes the same
config properties but keeps its own level (advisory): a stack raises a twin only by naming it. A
fixture passes only if every expected item matches a distinct violation on both message and level and
no violation is left over, so a twin's advisory text never satisfies an expected mandatory, and a
demoted finding fails its fixture.

`expect_unknown: true` says the policy cannot judge during preview (a value it needs is unknown);
`expect:` then lists the violations the policy still reports besides (none when omitted), and those are
checked like any other.

A resource may also carry `dependsOn: [NAME, ...]` and `propertyDependencies: {PROP: [NAME, ...]}`: the
resources the engine says it (or its property PROP) was computed from, as stack policies receive them
(`PolicyResource.dependencies` / `.property_dependencies`, resolved to the other resources).

Patch operations, each an item of `patch:`:
  `{resource: NAME, set: PATH, value: V}`   set a value (PATH is a list of keys / indexes)
  `{resource: NAME, delete: PATH}`          delete a key or list item
  `{add: {type, name, props}}`              add a resource
  `{remove: NAME}`                          remove a resource
  `{resource: NAME, pending: true}`         the resource as a first preview's AnalyzeStack sees a Kubernetes
                                            object: no properties at all (`props.properties_pending`)
The string `<unknown>` anywhere in props stands for a value unknown during preview.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pulumi_policy import (
    EnforcementLevel,
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
LEVELS = tuple(level.value for level in EnforcementLevel if level != EnforcementLevel.DISABLED)
ENFORCEMENT_KEY = "enforcementLevel"


@dataclass(frozen=True)
class Violation:
    policy: str
    level: str  # "advisory" | "mandatory" | "remediate": the level the engine reports it at
    message: str
    urn: str | None = None  # the resource the violation is reported against (None: the stack itself)


@dataclass(frozen=True)
class Outcome:
    messages: tuple[str, ...]  # for display; a `-caveats` twin's are marked with CAVEAT_MARK
    unknown: str | None  # the "can't be known during preview" message, when the policy could not judge
    violations: tuple[Violation, ...] = field(default=())


@dataclass(frozen=True)
class Expected:
    level: str
    text: str  # a substring of the message

    def matches(self, violation: Violation) -> bool:
        return violation.level == self.level and self.text in violation.message

    def __str__(self) -> str:
        return f"{self.level}: {self.text!r}"


def _unknowns(value: Any) -> Any:
    if value == UNKNOWN_MARK:
        return UNKNOWN_STRING_VALUE
    if isinstance(value, dict):
        return {k: _unknowns(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_unknowns(v) for v in value]
    return value


def resource_urn(resource: Mapping[str, Any]) -> str:
    """The URN the harness gives a fixture resource (as the engine would, in stack `test`, project `gpu-platform`)."""
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


def _named(by_name: Mapping[str, PolicyResource], resource: Mapping[str, Any], name: str) -> PolicyResource:
    if name not in by_name:
        raise KeyError(f"resource {resource['name']!r} depends on {name!r}, which the fixture does not have")
    return by_name[name]


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
        elif op.get("pending") is True:
            target["props"] = {}
        else:
            raise ValueError(f"unknown patch operation {op}")
    return out


def enforcement_of(policy: Any, config: Mapping[str, Any] | None) -> str:
    """The level the engine reports `policy`'s violations at under this policy config entry."""
    configured = (config or {}).get(ENFORCEMENT_KEY)
    if configured is not None:
        if configured not in LEVELS:
            raise ValueError(f"{ENFORCEMENT_KEY}={configured!r} is not one of {', '.join(LEVELS)}")
        return str(configured)
    level = policy.enforcement_level
    return str(level.value if isinstance(level, EnforcementLevel) else EnforcementLevel.ADVISORY.value)


def _properties(config: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """The config the policy sees: the engine passes the properties without `enforcementLevel`."""
    if config is None:
        return None
    return {k: v for k, v in config.items() if k != ENFORCEMENT_KEY}


def run_policy(policy: Any, resources: list[dict[str, Any]], config: Mapping[str, Any] | None) -> Outcome:
    """Run `policy` over `resources` as the analyzer servicer would; collect its violations."""
    level = enforcement_of(policy, config)
    properties = _properties(config)
    violations: list[Violation] = []

    def report(message: str, urn: str | None = None) -> None:
        violations.append(Violation(policy.name, level, message, urn))

    unknown: str | None = None
    try:
        if isinstance(policy, StackValidationPolicy):
            policy_resources = [
                PolicyResource(r["type"], unknown_checking_proxy(_unknowns(r.get("props", {}))), resource_urn(r),
                               r["name"], _opts(r), None, None, [], {})
                for r in resources
            ]
            by_name = {r["name"]: pr for pr, r in zip(policy_resources, resources, strict=True)}
            for pr, r in zip(policy_resources, resources, strict=True):
                if r.get("parent"):
                    pr.parent = by_name.get(r["parent"])
                pr.dependencies = [_named(by_name, r, n) for n in r.get("dependsOn", [])]
                pr.property_dependencies = {prop: [_named(by_name, r, n) for n in names]
                                            for prop, names in (r.get("propertyDependencies") or {}).items()}
            policy.validate(StackValidationArgs(policy_resources, properties), report)
        elif isinstance(policy, ResourceValidationPolicy):
            for r in resources:
                args = ResourceValidationArgs(r["type"], unknown_checking_proxy(_unknowns(r.get("props", {}))),
                                              resource_urn(r), r["name"], _opts(r), None, properties)
                try:
                    policy.validate(args, report)
                except UnknownValueError as err:
                    unknown = err.message
        else:
            raise TypeError(f"{policy!r} is not a pulumi_policy policy")
    except UnknownValueError as err:
        unknown = err.message
    return Outcome(tuple(v.message for v in violations), unknown, tuple(violations))


@dataclass(frozen=True)
class Case:
    policy: str
    name: str
    resources: list[dict[str, Any]]
    config: Mapping[str, Any] | None
    expect: tuple[Expected, ...]
    expect_unknown: bool


def _expected(path: Path, item: Any) -> Expected:
    fix = 'write each item as `- mandatory: "<message substring>"` or `- advisory: "..."`'
    if not isinstance(item, dict) or len(item) != 1:
        raise ValueError(f"{path}: expect item {item!r} does not name its enforcement level; {fix}")
    ((level, text),) = item.items()
    if level not in LEVELS:
        raise ValueError(f"{path}: expect item level {level!r} is not one of {', '.join(LEVELS)}; {fix}")
    if not isinstance(text, str) or not text:
        raise ValueError(f"{path}: expect item {item!r} has no message text; {fix}")
    if text.startswith(CAVEAT_MARK):
        raise ValueError(f"{path}: expect item {text!r} carries the {CAVEAT_MARK.strip()} mark; "
                         f"the level says that now: drop the mark")
    return Expected(level, text)


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
        expect = tuple(_expected(path, item) for item in spec.get("expect") or ())
        if path.name.startswith("fail_") and not expect and not spec.get("expect_unknown"):
            raise ValueError(f"{path}: a failing fixture must list the violations it expects")
        if path.name.startswith("pass_") and (expect or spec.get("expect_unknown")):
            raise ValueError(f"{path}: a passing fixture expects no violation")
        config = spec["config"] if "config" in spec else baseline.get("config")
        cases.append(Case(policy_name, path.stem, apply_patch(baseline["resources"], spec.get("patch", [])),
                          config, expect, bool(spec.get("expect_unknown", False))))
    return cases


def run_with_caveats(policy: Any, companions: list[Any], resources: list[dict[str, Any]],
                     config: Mapping[str, Any] | None) -> Outcome:
    """Run a policy and its advisory `-caveats` twins over the same resources and config properties.

    Each twin reports at its own level (the stack's `enforcementLevel` for the policy does not reach
    it); in `messages` its findings come back marked with CAVEAT_MARK.
    """
    outcome = run_policy(policy, resources, config)
    messages = list(outcome.messages)
    violations = list(outcome.violations)
    unknown = outcome.unknown
    twin_config = _properties(config)
    for companion in companions:
        twin = run_policy(companion, resources, twin_config)
        messages.extend(CAVEAT_MARK + m for m in twin.messages)
        violations.extend(twin.violations)
        unknown = unknown or twin.unknown
    return Outcome(tuple(messages), unknown, tuple(violations))


def match_case(outcome: Outcome, case: Case) -> tuple[list[str], list[Violation]]:
    """(problems, the violations the expectations matched): empty problems = the fixture passes."""
    label = f"{case.policy}/{case.name}"
    problems: list[str] = []
    if case.expect_unknown and not outcome.unknown:
        problems.append(f"{label}: expected the policy to report it cannot judge")
    if not case.expect_unknown and outcome.unknown is not None:
        problems.append(f"{label}: policy could not judge: {outcome.unknown}")
    got = [f"{v.level}: {v.message}" for v in outcome.violations]
    unmatched = list(outcome.violations)
    matched: list[Violation] = []
    for expected in case.expect:
        hit = next((v for v in unmatched if expected.matches(v)), None)
        if hit is None:
            problems.append(f"{label}: no violation matches {expected}; got {got}")
            continue
        unmatched.remove(hit)
        matched.append(hit)
    if unmatched:
        problems.append(f"{label}: unexpected violations {[f'{v.level}: {v.message}' for v in unmatched]}")
    return problems, matched


def assert_case(policy: Any, case: Case, companions: list[Any] | None = None) -> list[Violation]:
    """The fixture's verdict: every expected (level, message) matched once, nothing else reported."""
    outcome = run_with_caveats(policy, companions or [], case.resources, case.config)
    problems, matched = match_case(outcome, case)
    assert not problems, "\n".join(problems)
    return matched

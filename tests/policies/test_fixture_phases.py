"""Every fixture gives the same verdict when it is judged as in a first preview.

In a first `pulumi preview` the stack does not exist: `AnalyzeStack` gets each resource's outputs with
every computed one unknown (ids, ARNs), while `Analyze` gets the inputs, known where the program knows
them. The fixtures are written as inputs, so their "preview" twin adds the computed outputs every
created resource has (`id`, `arn`) as unknowns. A stack policy that linked resources by id or read an
ARN would come back as "can't run" there (an advisory: it would block nothing), or change its verdict.

A Kubernetes object of a new stack reaches AnalyzeStack with no properties at all: its provider's
kubeconfig is unknown, so the provider is not configured (pulumi/pulumi
`pkg/resource/plugin/provider_plugin.go` lines 1064-1081) and its preview Create returns an empty map
(lines 1424-1441), the state's outputs (`pkg/resource/deploy/step.go` lines 445-459), which AnalyzeStack
sends (`step_generator.go` line 3520). Every fixture is judged that way too: a stack policy may then wait
(fewer verdicts), never report a mandatory violation on a resource the known stack does not fail, and
never "can't run".

Engine facts: pulumi/pulumi `pkg/resource/deploy/step_generator.go` (Analyze on the checked inputs) and
`pkg/resource/plugin/analyzer_plugin.go` (AnalyzeStack on the outputs, unknowns kept); pulumi-policy
`sdk/python/lib/pulumi_policy/policy.py` (a policy that reads an unknown value reports "can't run").
Line numbers at pulumi/pulumi commit 1b5949891b3c.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pulumi_policy import StackValidationPolicy

from policies.gpu_guard.base import all_policies, companions_of
from policies.gpu_guard.props import properties_pending
from tests.policies.harness import FIXTURES, UNKNOWN_MARK, load_cases, run_with_caveats

POLICIES = {p.name: p for p in all_policies()}
STACK_CASES = [case for name in sorted(POLICIES) if isinstance(POLICIES[name], StackValidationPolicy)
               and (FIXTURES / name).is_dir() for case in load_cases(name) if not case.expect_unknown]
COMPUTED_OUTPUTS = ("id", "arn")


def first_preview(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The resources as AnalyzeStack sees them before any exists: computed outputs unknown."""
    out = copy.deepcopy(resources)
    for resource in out:
        props = resource.setdefault("props", {})
        if properties_pending(resource["type"], props):
            continue  # the engine sends {} as it is (no id among the outputs either)
        for key in COMPUTED_OUTPUTS:
            props.setdefault(key, UNKNOWN_MARK)
    return out


def test_there_are_stack_policy_fixtures_to_judge() -> None:
    assert len({c.policy for c in STACK_CASES}) >= 10
    assert len(STACK_CASES) >= 100


@pytest.mark.parametrize("case", STACK_CASES, ids=[f"{c.policy}/{c.name}" for c in STACK_CASES])
def test_a_stack_policy_gives_the_same_verdict_in_a_first_preview(case) -> None:
    policy, companions = POLICIES[case.policy], companions_of(case.policy)
    known = run_with_caveats(policy, companions, case.resources, case.config)
    preview = run_with_caveats(policy, companions, first_preview(case.resources), case.config)
    assert preview.unknown is None, f"{case.policy}/{case.name} can't run in a first preview: {preview.unknown}"
    def verdicts(outcome: Any) -> list[tuple[str, str, str]]:
        return sorted((v.policy, v.level, v.message) for v in outcome.violations)

    assert verdicts(preview) == verdicts(known)


def new_stack_preview(resources: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`first_preview`, and every Kubernetes object with no properties (its provider is not configured)."""
    out = first_preview(resources)
    for resource in out:
        if resource["type"].startswith("kubernetes:"):
            resource["props"] = {}
    return out


def test_some_fixtures_have_kubernetes_objects_to_empty() -> None:
    assert sum(any(r["type"].startswith("kubernetes:") for r in c.resources) for c in STACK_CASES) >= 50


@pytest.mark.parametrize("case", STACK_CASES, ids=[f"{c.policy}/{c.name}" for c in STACK_CASES])
def test_a_stack_policy_waits_on_kubernetes_objects_of_a_new_stack_never_fails_them(case) -> None:
    policy, companions = POLICIES[case.policy], companions_of(case.policy)
    known = run_with_caveats(policy, companions, case.resources, case.config)
    preview = run_with_caveats(policy, companions, new_stack_preview(case.resources), case.config)
    assert preview.unknown is None, f"{case.policy}/{case.name} can't run in a new stack's preview: {preview.unknown}"
    known_blocking = {v.urn for v in known.violations if v.level == "mandatory"}
    false = [v for v in preview.violations if v.level == "mandatory" and v.urn not in known_blocking]
    assert not false, f"{case.policy}/{case.name}: a false mandatory while objects are pending: {false}"

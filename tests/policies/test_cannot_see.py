"""Cannot see, cannot block: no mandatory finding on an input the pack does not see.

docs/own-stack.md and the pack's contract: a mandatory finding states a fact the pack saw; what it cannot see is
advisory or pending, and says what would let it judge. This is the class check, over every policy that can be
mandatory (by default or as prod's policy config raises it):

- **Unknown in a phase.** Every failing fixture that reaches its finding by setting inputs is judged again with
  those inputs unknown, as the engine sends a computed value in a preview (an output of another resource, a
  StackReference output, a component's output: /work/shared/research/engine_phases.md; pulumi-policy turns a
  read of an unknown into "can't run policy ... during preview: <value> at .<path> can't be known", advisory).
  The finding must not be mandatory; what the policy reports instead names the unknown input (its path) or
  what would let it judge.
- **Outside the stack.** What a preview never shows (an account setting, an image's contents, capacity facts the
  matrix does not hold) goes to the policy's advisory `-unseen` / `-caveats` twin, and every such finding says
  what would let the pack judge.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from policies.gpu_guard.base import UNSEEN_SUFFIX, all_meta, all_policies, companions_of
from tests.policies.harness import FIXTURES, UNKNOWN_MARK, apply_patch, load_cases, run_with_caveats

POLICIES = {p.name: p for p in all_policies()}
# Twins that carry findings on what the pack cannot see: the `-unseen` ones, and the caveats of interruption handling
# (a queue of another stack, a pattern filtering on event fields the pack does not know or not known in a preview).
CANNOT_SEE_CAVEATS = ("karpenter-interruption-handling-caveats",)
META = all_meta()
MANDATORY_CAPABLE = sorted(name for name, m in META.items()
                           if "mandatory" in (m.default.value, m.prod.value) and (FIXTURES / name).is_dir())


def _prod_config(name: str, config: Any) -> dict[str, Any] | None:
    """The fixture's config, raised to prod's level where prod raises the policy."""
    if META[name].prod.value != "mandatory" or META[name].default.value == "mandatory":
        return dict(config) if config is not None else None
    return {**(config or {}), "enforcementLevel": "mandatory"}


def _unknown_cases() -> list[tuple[str, str, list[dict[str, Any]], Any, list[str]]]:
    out = []
    for name in MANDATORY_CAPABLE:
        folder = FIXTURES / name
        baseline = yaml.safe_load((folder / "baseline.yaml").read_text())
        for case in load_cases(name):
            blocks = any(e.level == "mandatory" for e in case.expect) or META[name].prod.value == "mandatory"
            if not case.name.startswith("fail_") or not blocks:
                continue
            spec = yaml.safe_load((folder / f"{case.name}.yaml").read_text())
            ops = spec.get("patch") or []
            if not ops or not all("set" in op for op in ops):
                continue  # only inputs a program sets can be unknown; an added/removed resource is a fact
            unknown_ops = [{**op, "value": UNKNOWN_MARK} for op in ops]
            resources = apply_patch(baseline["resources"], unknown_ops)
            paths = [".".join(str(p) for p in op["set"]) for op in ops]
            out.append((name, case.name, resources, case.config, paths))
    return out


UNKNOWN_CASES = _unknown_cases()


def test_the_class_check_covers_every_mandatory_capable_policy_with_set_inputs() -> None:
    covered = {name for name, *_ in UNKNOWN_CASES}
    assert len(UNKNOWN_CASES) >= 60
    assert len(covered) >= 20, sorted(set(MANDATORY_CAPABLE) - covered)


@pytest.mark.parametrize(("policy", "case", "resources", "config", "paths"), UNKNOWN_CASES,
                         ids=[f"{c[0]}/{c[1]}" for c in UNKNOWN_CASES])
def test_an_input_unknown_in_a_preview_never_blocks(policy: str, case: str, resources: list[dict[str, Any]],
                                                    config: Any, paths: list[str]) -> None:
    outcome = run_with_caveats(POLICIES[policy], companions_of(policy), resources, _prod_config(policy, config))
    blocking = [v.message for v in outcome.violations if v.level == "mandatory"]
    assert not blocking, f"{policy}/{case} with {paths} unknown blocks: {blocking}"
    if outcome.unknown is not None:
        # pulumi-policy's own message, which the engine prints: it names the value the policy waits on.
        assert "can't be known during preview" in outcome.unknown and outcome.unknown.split(" at .", 1)[1], (
            outcome.unknown)


def _twin_findings() -> list[tuple[str, str, str]]:
    found = []
    for name in MANDATORY_CAPABLE:
        for case in load_cases(name):
            outcome = run_with_caveats(POLICIES[name], companions_of(name), case.resources, case.config)
            found += [(v.policy, case.name, v.message) for v in outcome.violations
                      if v.policy.endswith(UNSEEN_SUFFIX) or v.policy in CANNOT_SEE_CAVEATS]
    return found


TWIN_FINDINGS = _twin_findings()
# issue 55: a prod GPU pool on an instance family the matrix does not know must not ship unjudged.
PROD_RAISED_TWINS = frozenset({"alb-waf-attached-unseen", "gpu-architecture-supported-unseen"})


def test_every_policy_that_cannot_see_part_of_its_subject_has_an_advisory_unseen_twin() -> None:
    twins = {name for name, m in META.items() if name.endswith(UNSEEN_SUFFIX)}
    assert twins == {"alb-https-only-unseen", "alb-waf-attached-unseen", "ebs-encrypted-unseen",
                     "gpu-workload-cuda-declared-unseen", "imdsv2-required-unseen", "karpenter-gpu-limits-unseen",
                     "serving-model-fits-unseen", "gpu-architecture-supported-unseen",
                     "gpu-driver-branch-lifecycle-unseen"}
    for twin in twins:
        assert META[twin].default.value == "advisory", twin
        # Prod's one demand on what a preview cannot see (issue 45): a prod internet-facing ALB states its web ACL on
        # the Ingress. The finding states what the pack saw (no wafv2-acl-arn annotation); a team whose ACL comes from
        # Firewall Manager leaves the twin out of its prod policy config (docs/policy-pack.md).
        assert META[twin].prod.value == ("mandatory" if twin in PROD_RAISED_TWINS else "advisory"), twin
        assert META[twin].companion_of == twin.removesuffix(UNSEEN_SUFFIX)
    assert {policy for policy, _, _ in TWIN_FINDINGS} == twins | set(CANNOT_SEE_CAVEATS), "a twin no fixture reaches"


@pytest.mark.parametrize(("policy", "case", "message"), TWIN_FINDINGS, ids=[f"{p}/{c}" for p, c, _ in TWIN_FINDINGS])
def test_every_unseen_finding_says_what_would_let_the_pack_judge(policy: str, case: str, message: str) -> None:
    assert "To let the pack judge it" in message, f"{policy}/{case}: {message}"

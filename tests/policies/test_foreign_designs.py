"""The whole pack over designs it did not write (tests/policies/foreign/), in every engine phase.

A platform team points `pulumi preview --policy-pack policies` at its own stack: EKS Auto Mode, Karpenter on
Fargate, the NVIDIA device-plugin chart, AL2023 NVIDIA node groups, valueless GPU taints, workloads that select
by well-known labels. The pack must judge what Kubernetes, Karpenter and EKS would do: no mandatory violation on
a design that works, exactly the right ones on a design that breaks.

Phases, as the engine runs the pack (CONFIG.md section 3, tools/engine/gate.py):
- `preview`: the first `pulumi preview` of a new stack. Resource policies get each resource's inputs; stack
  policies get the planned state, with computed outputs unknown and every Kubernetes object `{}` (its provider's
  kubeconfig comes from the cluster, which does not exist yet: tests/policies/test_fixture_phases.py).
- `update`: a preview of the existing stack: inputs to resource policies, known state to stack policies.
- `up`: `pulumi up`: resource policies before each step on the inputs, stack policies after every step on the
  final state (the state is known, so it reads as `update`; the CLI's own preview first is `preview`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pulumi_policy import StackValidationPolicy

from policies.gpu_guard.base import all_policies
from tests.policies.harness import Violation, apply_patch, run_policy
from tests.policies.test_fixture_phases import new_stack_preview

TODAY = "2026-11-29"
FOREIGN = Path(__file__).parent / "foreign"
DESIGNS = sorted(FOREIGN.glob("*.yaml"))
PHASES = ("preview", "update", "up")
POLICIES = all_policies()


def _config(policy: Any) -> dict[str, Any] | None:
    schema = policy.config_schema.properties if policy.config_schema else {}
    return {"today": TODAY} if "today" in schema else None


def run_pack(resources: list[dict[str, Any]], phase: str) -> tuple[list[Violation], list[str]]:
    """Every violation of every policy of the pack in `phase`, and the policies that could not judge."""
    violations: list[Violation] = []
    unknown: list[str] = []
    for policy in POLICIES:
        view = new_stack_preview(resources) if phase == "preview" and isinstance(policy, StackValidationPolicy) \
            else resources
        outcome = run_policy(policy, view, _config(policy))
        violations += outcome.violations
        if outcome.unknown:
            unknown.append(f"{policy.name}: {outcome.unknown}")
    return violations, unknown


def load_design(path: Path) -> dict[str, Any]:
    """A design, a broken variant resolved against its base (`base:` + `patch:`)."""
    doc: dict[str, Any] = yaml.safe_load(path.read_text())
    if "base" in doc:
        base = load_design(FOREIGN / doc["base"])
        doc = {**doc, "resources": apply_patch(base["resources"], doc.get("patch") or []),
               "sources": doc.get("sources") or base["sources"]}
    return doc


def _expected(doc: dict[str, Any], phase: str) -> list[dict[str, str]]:
    if phase == "preview" and "mandatory_preview" in doc:
        return list(doc["mandatory_preview"] or [])
    return list(doc.get("mandatory") or [])


def test_the_corpus_holds_every_documented_design():
    designs = {load_design(p)["design"] for p in DESIGNS}
    for wanted in ("EKS Auto Mode GPU", "Karpenter on Fargate", "NVIDIA device-plugin chart",
                   "AL2023 NVIDIA managed node group", "valueless", "instance family"):
        assert any(wanted in d for d in designs), f"no foreign design covers {wanted!r}: {sorted(designs)}"
    broken = [p for p in DESIGNS if load_design(p).get("mandatory")]
    assert len(broken) >= 4 and len(DESIGNS) - len(broken) >= 6


@pytest.mark.parametrize("path", DESIGNS, ids=[p.stem for p in DESIGNS])
def test_each_design_names_its_source(path):
    doc = load_design(path)
    assert doc["sources"] and all(str(s).startswith("https://") for s in doc["sources"]), path.name


@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("path", DESIGNS, ids=[p.stem for p in DESIGNS])
def test_the_pack_gives_exactly_the_mandatory_violations_the_design_earns(path, phase):
    doc = load_design(path)
    violations, unknown = run_pack(doc["resources"], phase)
    assert not unknown, f"{path.stem} [{phase}]: policies could not judge: {unknown}"
    blocking = [v for v in violations if v.level == "mandatory"]
    left = list(blocking)
    missing = []
    for item in _expected(doc, phase):
        hit = next((v for v in left if v.policy == item["policy"] and item["text"] in v.message), None)
        if hit is None:
            missing.append(item)
        else:
            left.remove(hit)
    got = [f"{v.policy}: {v.message}" for v in blocking]
    assert not missing, f"{path.stem} [{phase}]: expected mandatory violations not reported {missing}; got {got}"
    assert not left, f"{path.stem} [{phase}]: false mandatory violations {[f'{v.policy}: {v.message}' for v in left]}"


def test_a_split_stack_s_missing_system_group_is_an_advisory_naming_the_other_stack_and_true_without_it():
    """The system node group lives in the stack this one references: the pack sees one stack's resources, so it says
    so at advisory level; the same stack without the StackReference has no home, and that is mandatory."""
    doc = load_design(FOREIGN / "split_stack_system_nodes_elsewhere.yaml")
    violations, _ = run_pack(doc["resources"], "update")
    [elsewhere] = [v for v in violations if "through StackReference" in v.message]
    assert (elsewhere.policy, elsewhere.level) == ("system-node-group-present-pending", "advisory")
    assert "'acme/platform/prod'" in elsewhere.message and "the system node group" in elsewhere.message
    alone = [r for r in doc["resources"] if r["type"] != "pulumi:pulumi:StackReference"]
    violations, _ = run_pack(alone, "update")
    assert [v.policy for v in violations if v.level == "mandatory"] == ["system-node-group-present"]

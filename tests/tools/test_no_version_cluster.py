"""Issue 45: a cluster that sets no Kubernetes `version`, whose only node group is a tainted GPU group.

EKS picks such a cluster's version at create (https://docs.aws.amazon.com/eks/latest/APIReference/
API_CreateCluster.html, `version`), so a first preview does not know it, and the offline gate, which has no state,
does not know it in `update` either. The pack reads it only where a rule needs it
(policies/gpu_guard/inventory.py): `system-node-group-present`, which needs no version, blocks in every phase, before
create; the rules that compare versions wait, naming the cluster's `version`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunPreview
from tests.result_view import entries
from tools.engine.mocks.monitor import DEFAULT_EKS_VERSION, RecordingMocks, ResourceRequest
from tools.engine.records import UNKNOWN

PROGRAM = Path(__file__).parent / "fixtures" / "no_version_program"
CLUSTER = "aws:eks/cluster:Cluster"


def _by_policy(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for v in entries(doc):
        found.setdefault(v["policy"], []).append(v)
    return found


@pytest.mark.parametrize("stack", ["aws", "eks"])
@pytest.mark.parametrize("phase", ["preview", "update", "up"])
def test_a_cluster_with_no_version_blocks_what_up_blocks_in_every_phase(run_preview: RunPreview, stack: str,
                                                                       phase: str) -> None:
    run = run_preview("--program", str(PROGRAM), "--stack", stack, "--phase", phase, "--today", "2026-11-30",
                      "--json")
    assert run.returncode == 1, run.explain()
    doc = run.json()
    found = _by_policy(doc)
    assert [v["enforcement"] for v in found["system-node-group-present"]] == ["mandatory"]
    assert "No untainted, non-GPU node group" in found["system-node-group-present"][0]["message"]
    # `pulumi up` runs the preview first, and the preview's mandatory finding stops it before any resource is created
    # (pkg/backend/apply.go lines 287-303); it used to be reached only in the update, after every step.
    assert doc["policyPack"]["stoppedByPreview"] is (phase == "up")
    cant_run = {name: vs[0]["message"] for name, vs in found.items() if "can't run policy" in vs[0]["message"]}
    # What waits is what reads a version, and it names the value, its resource and what would let the pack judge.
    assert "kubelet-version-skew" in cant_run and "system-node-group-present" not in cant_run
    assert all(".version can't be known during preview (aws:eks/" in m for m in cant_run.values()), cant_run
    assert "pin `version`" in cant_run["kubelet-version-skew"]


@pytest.mark.parametrize(("dry_run", "unknown_outputs", "expected"), [
    (True, True, UNKNOWN),  # preview: a create, nothing computed is known
    (True, False, UNKNOWN),  # update: EKS chose it at create; the state holds it, the offline gate has no state
    (False, False, DEFAULT_EKS_VERSION),  # up: created now with the EKS default the gate assumes
])
def test_the_version_of_a_cluster_that_sets_none_is_never_made_up_in_update(dry_run: bool, unknown_outputs: bool,
                                                                          expected: str) -> None:
    mocks = RecordingMocks(dry_run=dry_run, unknown_outputs=unknown_outputs)
    req = ResourceRequest(type=CLUSTER, name="gpu", urn=f"urn:pulumi:dev::p::{CLUSTER}::gpu",
                          inputs={"name": "gpu", "roleArn": "arn:aws:iam::111122223333:role/eks"}, custom=True,
                          remote=False, ctx=mocks.context())
    _, outputs = mocks.answer_resource(req)
    assert outputs["version"] == expected
    _, pinned = mocks.answer_resource(ResourceRequest(**{**req.__dict__, "inputs": {**req.inputs, "version": "1.33"}}))
    assert pinned["version"] == "1.33"

"""An untainted g5 GPU node group in each pulumi-eks shape, through the gate, in every phase (issue 45).

fixtures/eks_gpu_shapes_program holds one GPU group per shape: the ManagedNodeGroup shapes pulumi-eks builds through
its own launch template (`enableIMDSv2` with `diskSize`, `userData`, `amiId`, `enableEfaSupport`, `kubeletExtraArgs`)
and the one whose AMI type it derives from `operatingSystem` + `gpu`; and the self-managed shapes (`NodeGroupV2`,
`NodeGroup`, the `Cluster`'s default node group), whose children the gate does not build. A real preview blocks the
untainted ManagedNodeGroups with `gpu-nodes-tainted` (the pack reads the aws:eks/nodeGroup:NodeGroup child), so the
gate must too; the tainted stack must not be blocked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunPreview
from tests.result_view import entries

PROGRAM = Path(__file__).parent / "fixtures" / "eks_gpu_shapes_program"
MNG_SHAPES = ("mng-imdsv2", "mng-userdata", "mng-amiid", "mng-efa", "mng-kubelet", "mng-os-gpu")
NOT_BUILT = {"ngv2": "eks:index:NodeGroupV2", "ngv1": "eks:index:NodeGroup"}
PHASES = ("preview", "update", "up")


def _doc(run_preview: RunPreview, stack: str, phase: str) -> dict[str, Any]:
    run = run_preview("--program", str(PROGRAM), "--stack", stack, "--phase", phase, "--today", "2026-11-30",
                      "--json")
    assert run.returncode in (0, 1), run.explain()
    return run.json()


def _name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


@pytest.mark.parametrize("phase", PHASES)
def test_an_untainted_gpu_managed_node_group_is_blocked_in_every_shape(run_preview: RunPreview, phase: str) -> None:
    doc = _doc(run_preview, "untainted", phase)
    blocked = {_name(v["urn"]) for v in entries(doc)
               if v["policy"] == "gpu-nodes-tainted" and v["enforcement"] == "mandatory"}
    assert blocked == set(MNG_SHAPES)
    node_groups = {r["name"]: r for r in doc["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup"}
    assert set(MNG_SHAPES) <= set(node_groups)
    templates = {r["name"] for r in doc["resources"] if r["type"] == "aws:ec2/launchTemplate:LaunchTemplate"}
    assert templates == {f"{s}-launchTemplate" for s in MNG_SHAPES if s != "mng-os-gpu"}
    assert node_groups["mng-os-gpu"]["inputs"]["amiType"] == "AL2023_x86_64_NVIDIA"
    assert "amiType" not in node_groups["mng-amiid"]["inputs"]


@pytest.mark.parametrize("phase", PHASES)
def test_the_same_groups_tainted_are_not_blocked(run_preview: RunPreview, phase: str) -> None:
    doc = _doc(run_preview, "tainted", phase)
    assert not [v for v in entries(doc) if v["policy"].startswith("gpu-nodes-tainted")
                and _name(v["urn"]) in MNG_SHAPES]


@pytest.mark.parametrize("phase", PHASES)
def test_the_self_managed_shapes_are_not_built_and_say_so(run_preview: RunPreview, phase: str) -> None:
    doc = _doc(run_preview, "untainted", phase)
    # Each once: unjudged where a policy could judge what it registers, else not seen offline (issue 56).
    unseen = {(n["type"], _name(n["urn"])) for n in (*doc["notSeenOffline"], *doc["unjudged"])}
    assert {(t, n) for n, t in NOT_BUILT.items()} <= unseen
    assert ("eks:index:Cluster", "defaultng") in unseen
    emulated_parents = {_name(c["component"]) for c in doc["emulatedChildren"]}
    assert not set(NOT_BUILT) & emulated_parents
    # Nothing made up about them: no mandatory finding rests on children that were never built.
    assert not [v for v in entries(doc) if v["enforcement"] == "mandatory" and _name(v["urn"]) in NOT_BUILT]
    # ... and not passed either (issue 45, "pending, never none"): each is an unjudged component whose
    # `gpu-nodes-tainted-pending` advisory names it, and the verdict counts it.
    pending = {_name(v["urn"]) for v in entries(doc)
               if v["policy"] == "gpu-nodes-tainted-pending" and v["enforcement"] == "advisory"}
    assert {*NOT_BUILT, "defaultng"} <= pending
    unjudged = {_name(u["urn"]) for u in doc["unjudged"] if "gpu-nodes-tainted" in u["policies"]}
    assert {*NOT_BUILT, "defaultng"} <= unjudged

"""The advisory for a fractional-GPU instance (g6f/gr6f: a share of one L4 on the GRID driver), exactly, as issue 39's
audit corrected it (one logical GPU on a node group; Karpenter counts 0).
Written from survivors of the mutation run (docs/testing.md); the shares are matrix.yaml's rows, from the
Karpenter instance-type reference they cite."""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.matrix.findings import Finding

MATRIX = load_matrix()


@pytest.mark.parametrize(("name", "share"), [("g6f.large", "1/8"), ("g6f.2xlarge", "1/4"), ("gr6f.4xlarge", "1/2")])
def test_a_fractional_gpu_instance_is_told_as_a_share_on_the_grid_driver(name: str, share: str) -> None:
    inst = MATRIX.instance_type(name)
    assert inst is not None and inst.fraction == share and inst.driver_kind == "grid"
    assert MATRIX.fractional_gpu_finding(inst) == Finding(
        "advisory", "gpu-instance-fractional",
        f"{name} is a fractional L4 ({share} of one GPU), served by the GRID driver. EC2 reports one logical GPU "
        "(LogicalGpuCount 1, Count 0) and the node's device plugin advertises one nvidia.com/gpu: in a managed or "
        "self-managed node group a pod requesting nvidia.com/gpu: 1 schedules on it and gets the share (request one "
        "GPU, not more). Karpenter v1.14.1 reads Count (0): a Karpenter NodePool never launches it for a pod "
        "requesting nvidia.com/gpu, may launch it for a pod that requests none (such a pod gets no GPU device), and "
        "its nvidia.com/gpu limit does not bound it; keep g6f and gr6f out of Karpenter NodePools.",
        inst.source,
    )
    assert inst.source.startswith("https://github.com/aws/karpenter-provider-aws/")

"""The advisory for a fractional-GPU instance (g6f/gr6f: a share of one L4 on the GRID driver), exactly.
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
        f"{name} is a fractional L4 ({share} of one GPU), served by the GRID driver: Karpenter reports "
        "karpenter.k8s.aws/instance-gpu-count=0 and the node advertises no nvidia.com/gpu, so a pod requesting "
        "nvidia.com/gpu never schedules on it, and a NodePool limit on nvidia.com/gpu does not bound it. Run "
        "workloads that fit the GPU share and select the pool by its labels.",
        inst.source,
    )
    assert inst.source.startswith("https://github.com/aws/karpenter-provider-aws/")

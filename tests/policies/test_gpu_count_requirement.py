"""When a NodePool requirement on karpenter.k8s.aws/instance-gpu-count makes it a GPU pool
(`gpu_nodes_tainted._gpu_count_requirement`), at each operator's boundary. Karpenter's requirement operators:
In, NotIn, Exists, DoesNotExist, Gt, Lt, Gte, Lte (karpenter.sh/v1 NodePool CRD, spec.template.spec.requirements).
Written from survivors of the mutation run (docs/testing.md)."""

from __future__ import annotations

import pytest

from policies.gpu_guard.rules.gpu_nodes_tainted import _gpu_count_requirement

KEY = "karpenter.k8s.aws/instance-gpu-count"


@pytest.mark.parametrize(
    ("operator", "values", "gpu"),
    [
        ("In", ["1"], True), ("In", ["0", "4"], True), ("In", ["0"], False), ("In", [], False),
        ("Gt", ["0"], True), ("Gt", [], False),
        ("Gte", ["1"], True), ("Gte", ["0"], False),
        ("Exists", [], True),
        ("NotIn", ["0"], False), ("DoesNotExist", [], False), ("Lt", ["2"], False),
    ],
)
def test_a_gpu_count_requirement_makes_a_gpu_pool_only_when_it_asks_for_at_least_one(
        operator: str, values: list[str], gpu: bool) -> None:
    assert _gpu_count_requirement({"key": KEY, "operator": operator, "values": values}) is gpu

"""karpenter-gpu-limits: the GPU bound of a NodePool from every limit, at its boundaries.

Karpenter (kubernetes-sigs/karpenter v1.14.1, scheduler.go filterByRemainingResources) launches an instance type
only while its capacity fits what the pool's limits leave, for every limited resource; a node's capacity is its
vCPUs, its memory less 7.5 % (rounded up to a MiB; arm64 64 MiB less first) and its NVIDIA GPU Count
(karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go:352-366, 416-427). The instance facts are the
matrix's (Karpenter's instance-types reference).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from policies.gpu_guard.rules import karpenter_gpu_limits as rule
from policies.gpu_guard.rules.karpenter_gpu_limits import Bound, admitted, gpu_bound, quantity, shape

MIB = 2**20


@pytest.mark.parametrize(("text", "value"), [
    ("16", Fraction(16)), (16, Fraction(16)), ("+8", Fraction(8)), ("16000m", Fraction(16)), ("1.5", Fraction(3, 2)),
    (".5", Fraction(1, 2)), ("64Gi", Fraction(64 * 2**30)), ("15155Mi", Fraction(15155 * MIB)), ("1Ki", Fraction(1024)),
    ("2Ti", Fraction(2 * 2**40)), ("1Pi", Fraction(2**50)), ("1Ei", Fraction(2**60)), ("100M", Fraction(10**8)),
    ("2k", Fraction(2000)), ("3G", Fraction(3 * 10**9)), ("1T", Fraction(10**12)), ("1P", Fraction(10**15)),
    ("2E", Fraction(2 * 10**18)), ("5u", Fraction(5, 10**6)), ("5n", Fraction(5, 10**9)), ("1e1", Fraction(10)),
    ("1E3", Fraction(1000)), ("1e-3", Fraction(1, 1000)), ("0", Fraction(0)),
    ("-8", None), ("eight", None), (True, None), ("8 ", None), ("", None), ("1Gb", None),
])
def test_a_quantity_reads_as_kubernetes_reads_it(text: Any, value: Fraction | None) -> None:
    assert quantity(text) == value


def test_a_shape_is_the_instance_as_karpenter_counts_its_capacity() -> None:
    g5 = shape("g5.xlarge")
    assert g5 == rule.Shape("g5.xlarge", 1, {"nvidia.com/gpu": Fraction(1), "cpu": Fraction(4),
                                              "memory": Fraction((16384 - 1229) * MIB), "nodes": Fraction(1)}, False)
    # arm64: 64 MiB reserved first, then ceil(8128 * 0.075) = 610 MiB of VM overhead.
    g5g = shape("g5g.xlarge")
    assert g5g is not None and g5g.capacity["memory"] == Fraction((8128 - 610) * MIB)
    # A fractional GPU: Karpenter counts 0 nvidia.com/gpu, the node offers one logical GPU.
    g6f = shape("g6f.xlarge")
    assert g6f is not None and (g6f.gpus, g6f.capacity["nvidia.com/gpu"], g6f.fractional) == (1, Fraction(0), True)
    # A type whose vCPUs and memory the matrix does not know.
    gb200 = shape("p6e-gb200.36xlarge")
    assert gb200 is not None and (gb200.capacity["cpu"], gb200.capacity["memory"]) == (None, None)
    assert shape("m5.large") is None


@pytest.mark.parametrize(("limits", "types", "gpus", "by"), [
    ({"cpu": "15"}, ["g5.xlarge"], 3, "cpu: 15"),
    ({"cpu": "16"}, ["g5.xlarge"], 4, "cpu: 16"),
    ({"cpu": "19"}, ["g5.xlarge"], 4, "cpu: 19"),
    ({"cpu": "15999m"}, ["g5.xlarge"], 3, "cpu: 15999m"),
    # The best ratio wins: g5.12xlarge gives 4 GPUs per 48 vCPUs, g5.xlarge 1 per 4.
    ({"cpu": "48"}, ["g5.12xlarge", "g5.xlarge"], 12, "cpu: 48"),
    ({"cpu": "48"}, ["g5.12xlarge"], 4, "cpu: 48"),
    ({"memory": "15155Mi"}, ["g5.xlarge"], 1, "memory: 15155Mi"),
    ({"memory": "15154Mi"}, ["g5.xlarge"], 0, "memory: 15154Mi"),
    ({"nodes": "2"}, ["g5.12xlarge", "g5.xlarge"], 8, "nodes: 2"),
    ({"nvidia.com/gpu": "8"}, ["g5.12xlarge", "g5.xlarge"], 8, "nvidia.com/gpu: 8"),
    ({"nvidia.com/gpu": "7.5"}, ["g5.xlarge"], 7, "nvidia.com/gpu: 7.5"),
    # The smallest bound wins, whichever limit gives it; a tie keeps the first in nvidia.com/gpu, cpu, memory, nodes.
    ({"nvidia.com/gpu": "8", "cpu": "16"}, ["g5.xlarge"], 4, "cpu: 16"),
    ({"nvidia.com/gpu": "4", "cpu": "16"}, ["g5.xlarge"], 4, "nvidia.com/gpu: 4"),
    ({"cpu": "64", "nodes": "3"}, ["g5.xlarge"], 3, "nodes: 3"),
    # A fractional type under cpu: one logical GPU per 4 vCPUs.
    ({"cpu": "32"}, ["g6f.xlarge"], 8, "cpu: 32"),
    # No GPU type admitted: nothing to launch.
    ({"cpu": "32"}, [], 0, "cpu: 32"),
])
def test_each_limit_bounds_the_gpus_and_the_smallest_wins(
        limits: dict[str, str], types: list[str], gpus: int, by: str) -> None:
    values = {k: quantity(v) for k, v in limits.items()}
    shapes = [s for t in types if (s := shape(t)) is not None]
    assert gpu_bound({k: v for k, v in values.items() if v is not None}, shapes, limits) == Bound(gpus, by, (), ())


def test_a_limit_on_what_an_admitted_type_does_not_count_does_not_bound_it() -> None:
    shapes = [s for t in ("g6f.xlarge", "g5.xlarge") if (s := shape(t)) is not None]
    assert gpu_bound({"nvidia.com/gpu": Fraction(8)}, shapes) == Bound(
        None, None, ("nvidia.com/gpu: 8 (Karpenter counts no nvidia.com/gpu on g6f.xlarge)",), ())
    # Another limit still bounds them.
    assert gpu_bound({"nvidia.com/gpu": Fraction(8), "cpu": Fraction(64)}, shapes) == Bound(
        16, "cpu: 64", ("nvidia.com/gpu: 8 (Karpenter counts no nvidia.com/gpu on g6f.xlarge)",), ())


def test_a_limit_whose_bound_needs_an_unknown_capacity_is_not_computed() -> None:
    shapes = [s for t in ("p6e-gb200.36xlarge", "g5.xlarge") if (s := shape(t)) is not None]
    assert gpu_bound({"cpu": Fraction(64), "memory": Fraction(2**40)}, shapes) == Bound(None, None, (), (
        "cpu: 64 (the matrix does not know the cpu of p6e-gb200.36xlarge)",
        "memory: 1099511627776 (the matrix does not know the memory of p6e-gb200.36xlarge)"))
    # nvidia.com/gpu needs no capacity facts beyond the GPU count.
    assert gpu_bound({"cpu": Fraction(64), "nvidia.com/gpu": Fraction(4)}, shapes) == Bound(
        4, "nvidia.com/gpu: 4", (), ("cpu: 64 (the matrix does not know the cpu of p6e-gb200.36xlarge)",))


def _names(requirements: list[dict[str, Any]]) -> list[str]:
    return [s.name for s in admitted(requirements)]


@pytest.mark.parametrize(("requirements", "names"), [
    ([{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["g5.xlarge", "m5.large"]}],
     ["g5.xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": ["17"]}],
     ["g5.xlarge", "g5.2xlarge", "g5.4xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lte", "values": ["16"]}],
     ["g5.xlarge", "g5.2xlarge", "g5.4xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["96"]}],
     ["g5.48xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gte", "values": ["96"]}],
     ["g5.24xlarge", "g5.48xlarge"]),
    ([{"key": "eks.amazonaws.com/instance-family", "operator": "In", "values": ["g6f"]},
      {"key": "eks.amazonaws.com/instance-size", "operator": "NotIn", "values": ["large", "xlarge"]}],
     ["g6f.2xlarge", "g6f.4xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g6f", "gr6f"]},
      {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Gt", "values": ["0"]}],
     []),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["p5"]},
      {"key": "karpenter.k8s.aws/instance-memory", "operator": "Gt", "values": ["262144"]}],
     ["p5.48xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["g5g", "p6e-gb200"]},
      {"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}],
     []),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["gr6"]},
      {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "DoesNotExist"}],
     []),
    # Labels the pack does not know per type (zone, capacity type) and malformed bounds narrow nothing.
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["gr6"]},
      {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["many"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Lt", "values": []},
      {"key": "karpenter.k8s.aws/instance-gpu-count", "operator": "Exists"}],
     ["gr6.4xlarge", "gr6.8xlarge"]),
    ([{"key": "karpenter.k8s.aws/instance-family", "operator": "In", "values": ["gr6"]},
      {"key": "karpenter.k8s.aws/instance-cpu", "operator": "Gt", "values": ["-1"]}],
     ["gr6.4xlarge", "gr6.8xlarge"]),
])
def test_the_admitted_types_are_those_every_requirement_admits(
        requirements: list[dict[str, Any]], names: list[str]) -> None:
    assert _names(requirements) == names


def test_an_open_pool_admits_every_gpu_type_of_the_matrix() -> None:
    from policies.gpu_guard.matrix import load_matrix  # noqa: PLC0415

    assert _names([]) == load_matrix().instance_types()


def test_every_capacity_row_names_a_family_and_sizes_of_the_matrix() -> None:
    from policies.gpu_guard.matrix import load_matrix  # noqa: PLC0415

    matrix = load_matrix()
    families = {row.family: row for row in matrix.data.instance_families}
    for row in matrix.data.instance_capacity:
        assert row.family in families, row.family
        assert set(row.vcpus) == set(row.memory_mib) == set(families[row.family].sizes), row.family
    known = {row.family for row in matrix.data.instance_capacity}
    assert set(families) - known == {"p6e-gb200"}, "a GPU family without vCPU/memory facts"


def test_the_messages_name_every_type_and_the_limit_as_written() -> None:
    fractional = [s for t in ("g6f.xlarge", "g6f.2xlarge") if (s := shape(t)) is not None]
    assert gpu_bound({"nvidia.com/gpu": Fraction(15, 2)}, fractional) == Bound(
        None, None, ("nvidia.com/gpu: 7.5 (Karpenter counts no nvidia.com/gpu on g6f.2xlarge, g6f.xlarge)",), ())
    blind = [rule.Shape(f"x{i}.large", 1, {"nvidia.com/gpu": Fraction(1), "cpu": None, "memory": None,
                                           "nodes": Fraction(1)}, False) for i in (1, 2)]
    assert gpu_bound({"cpu": Fraction(8)}, blind, {"cpu": "8000m"}) == Bound(
        None, None, (), ("cpu: 8000m (the matrix does not know the cpu of x1.large, x2.large)",))


def test_a_shape_without_gpus_neither_bounds_nor_blinds() -> None:
    cpu_only = rule.Shape("m5.large", 0, {"nvidia.com/gpu": Fraction(0), "cpu": None, "memory": None,
                                          "nodes": Fraction(1)}, False)
    g5 = shape("g5.xlarge")
    assert g5 is not None
    limits = {"cpu": Fraction(16), "nvidia.com/gpu": Fraction(8)}
    assert gpu_bound(limits, [cpu_only, g5]) == Bound(4, "cpu: 16", (), ())

"""karpenter-gpu-limits: every GPU NodePool's GPU count is bounded by its `spec.limits`.

Karpenter has no global limit; limits are per NodePool. Without one, a burst of pending GPU pods (or a
runaway autoscaler) launches GPU instances without bound.

How Karpenter applies limits (kubernetes-sigs/karpenter v1.14.1): the scheduler starts each NodePool's
remaining resources at `spec.limits` (pkg/controllers/provisioning/scheduling/scheduler.go:183-185),
subtracts every existing node's capacity (835-842), keeps only instance types whose capacity fits what
remains, for every limited resource (filterByRemainingResources, 1068-1085; a `nodes` limit counts one per
node, 709-715), and subtracts the largest capacity of a new node's options (subtractMax, 786 and 1049-1066);
`Create` refuses a node while usage exceeds a limit (pkg/controllers/provisioning/provisioner.go:471,
Limits.ExceededBy, pkg/apis/v1/nodepool.go:190-202). So the sum of the capacities of a pool's nodes never
passes any limit, and every limit bounds its GPUs: at most `limit x max over allowed types of
(GPUs per unit of that resource)`; the smallest such bound wins. `cpu` and `memory` bound a pool that
allows only g5.xlarge (4 vCPUs, 1 GPU) as well as `nvidia.com/gpu` does: `cpu: 16` is 4 GPUs.

A node's capacity in Karpenter's model (karpenter-provider-aws v1.14.1 pkg/providers/instancetype/types.go
332-366, 416-427): `cpu` is the instance's vCPUs; `memory` its memory less the VM overhead
(VM_MEMORY_OVERHEAD_PERCENT, default 0.075, rounded up to a MiB; arm64 less 64 MiB first); `nvidia.com/gpu`
the NVIDIA GPU `Count` EC2 reports. vCPUs, memory and GPU counts per size come from the matrix
(`instance_families`, `instance_capacity`). The fractional-GPU types (g6f, gr6f) report `Count` 0: Karpenter
counts no `nvidia.com/gpu` on them, so an `nvidia.com/gpu` limit never stops it launching them
(karpenter-provider-aws issue #8368), while the device plugin on the node advertises one logical GPU, which
is what `cpu`/`memory`/`nodes` bounds count.

Cannot see, cannot block: the instance types a pool may launch are the GPU types of the matrix its
requirements admit. Where a limit exists but no bound can be computed from it (an admitted type whose vCPUs
or memory the matrix does not know), the finding goes to the advisory twin `karpenter-gpu-limits-unseen`,
naming what would let the pack judge.

Sources:
- "Limits per NodePool" (EKS Best Practices, Karpenter): https://docs.aws.amazon.com/eks/latest/best-practices/karpenter.html
- NodePool `spec.limits` (resource name -> quantity): https://karpenter.sh/docs/concepts/nodepools/#speclimits
- Fractional GPUs counted as 0: https://github.com/aws/karpenter-provider-aws/issues/8368
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ..base import UNSEEN_MARK, ReportViolation, resource_policy_with_unseen
from ..inventory import GPU_RESOURCE, as_list, get
from ..matrix import load_matrix
from .gpu_nodes_tainted import gpu_reason, pool_of

# A Kubernetes resource quantity, as the NodePool CRD's `spec.limits` pattern states it.
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.sh_nodepools.yaml
#         (spec.limits.additionalProperties.pattern)
_QUANTITY = re.compile(
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
# Quantity suffixes (k8s.io/apimachinery pkg/api/resource/suffix.go).
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
            "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
            "P": Fraction(10**15), "E": Fraction(10**18)}

# The resources whose limits bound a pool's GPUs, in the order the messages name them. `nodes`: one per node.
NODES = "nodes"
BOUNDING = (GPU_RESOURCE, "cpu", "memory", NODES)

# Karpenter's VM memory overhead (karpenter-provider-aws v1.14.1 pkg/operator/options/options.go:58, default) and
# the arm64 reservation (pkg/providers/instancetype/types.go:358-361).
VM_MEMORY_OVERHEAD = Fraction(75, 1000)
ARM64_RESERVED_MIB = 64

# The well-known labels of an instance type a requirement may name, with Karpenter's and EKS Auto Mode's prefix.
_LABEL_PREFIXES = ("karpenter.k8s.aws/", "eks.amazonaws.com/")
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"


def quantity(value: Any) -> Fraction | None:
    """A resource quantity's value (`16`, `16000m`, `64Gi`, `1e3`); None when it is not a non-negative quantity."""
    if isinstance(value, bool):
        return None
    text = str(value)
    if not _QUANTITY.match(text) or text.startswith("-"):
        return None
    text = text.lstrip("+")
    for suffix, factor in _BINARY.items():
        if text.endswith(suffix):
            return Fraction(Decimal(text[: -len(suffix)])) * factor
    suffix = text[-1] if text[-1] in _DECIMAL else ""  # an exponent form (1e3) ends in a digit
    return Fraction(Decimal(text[: len(text) - len(suffix)])) * _DECIMAL[suffix]


@dataclass(frozen=True)
class Shape:
    """One instance type as Karpenter counts it: its capacity per bounding resource, and its GPUs on the node."""

    name: str
    gpus: int  # GPUs the node offers workloads (a fractional GPU: one logical GPU)
    capacity: Mapping[str, Fraction | None]  # resource -> capacity (None: not known)
    fractional: bool


def shape(name: str) -> Shape | None:
    """The matrix's facts on GPU instance type `name` as Karpenter's capacity model has them; None if unknown."""
    matrix = load_matrix()
    inst = matrix.instance_type(name)
    if inst is None:
        return None
    fractional = inst.fraction is not None
    size = matrix.instance_capacity(name)
    cpu = memory = None
    if size is not None:
        vcpus, mib = size
        mib -= ARM64_RESERVED_MIB if inst.cpu_arch == "arm64" else 0
        memory = Fraction((mib - math.ceil(mib * VM_MEMORY_OVERHEAD)) * 2**20)
        cpu = Fraction(vcpus)
    return Shape(inst.name, 1 if fractional else inst.gpus,
                 {GPU_RESOURCE: Fraction(inst.gpus), "cpu": cpu, "memory": memory, NODES: Fraction(1)}, fractional)


def _labels(matrix: Any, name: str) -> dict[str, str]:
    inst = matrix.instance_type(name)
    labels = {INSTANCE_TYPE_LABEL: inst.name, ARCH_LABEL: "arm64" if inst.cpu_arch == "arm64" else "amd64"}
    facts = {"instance-family": inst.family, "instance-size": inst.size, "instance-gpu-count": str(inst.gpus)}
    size = matrix.instance_capacity(name)
    if size is not None:
        facts |= {"instance-cpu": str(size[0]), "instance-memory": str(size[1])}
    for prefix in _LABEL_PREFIXES:
        labels |= {prefix + key: value for key, value in facts.items()}
    return labels


def _admits(requirement: Any, labels: Mapping[str, str]) -> bool:
    """Does one NodeSelectorRequirement admit an instance type with these labels? A label the pack does not know
    for the type (zone, capacity type, hypervisor, ...) narrows nothing here."""
    key = str(get(requirement, "key", default=""))
    if key not in labels:
        return True
    value = labels[key]
    operator = str(get(requirement, "operator", default=""))
    values = [str(v) for v in as_list(get(requirement, "values"))]
    if operator == "In":
        return value in values
    if operator == "NotIn":
        return value not in values
    if operator == "DoesNotExist":
        return False
    if operator in ("Gt", "Lt", "Gte", "Lte"):
        if not values or not value.isdigit() or not values[0].lstrip("-").isdigit():
            return True
        have, bound = int(value), int(values[0])
        return {"Gt": have > bound, "Lt": have < bound, "Gte": have >= bound, "Lte": have <= bound}[operator]
    return True  # Exists, or an operator the CRD rejects (karpenter-v1-api judges it)


def admitted(requirements: list[Any]) -> list[Shape]:
    """The matrix's GPU instance types every requirement admits, as Karpenter counts them."""
    matrix = load_matrix()
    found = []
    for name in matrix.instance_types():
        labels = _labels(matrix, name)
        if all(_admits(r, labels) for r in requirements):
            found.append(shape(name))
    return [s for s in found if s is not None]


@dataclass(frozen=True)
class Bound:
    """What each limit says of a pool's GPUs."""

    gpus: int | None  # the smallest bound (None: no limit bounds them)
    by: str | None  # the limit that gives it, e.g. "cpu: 16"
    unbounded: tuple[str, ...]  # limits that cannot bound (an admitted type counts 0 of that resource), with why
    unknown: tuple[str, ...]  # limits whose bound the pack cannot compute, with why


def gpu_bound(limits: Mapping[str, Fraction], shapes: list[Shape], shown: Mapping[str, str] | None = None) -> Bound:
    """The most GPUs a pool may run under `limits` when it may launch `shapes`: per limited resource, the limit
    times the most GPUs an admitted type gives per unit of it (floored); the smallest of those. `shown`: each
    limit as the stack wrote it, for the messages."""
    gpu_shapes = [s for s in shapes if s.gpus > 0]
    best: tuple[int, str] | None = None
    unbounded, unknown = [], []
    for resource in BOUNDING:
        if resource not in limits:
            continue
        limit = limits[resource]
        label = f"{resource}: {(shown or {}).get(resource, _fmt(limit))}"
        zero = sorted(s.name for s in gpu_shapes if s.capacity[resource] == 0)
        missing = sorted(s.name for s in gpu_shapes if s.capacity[resource] is None)
        if zero:
            unbounded.append(f"{label} (Karpenter counts no {resource} on {', '.join(zero)})")
            continue
        if missing:
            unknown.append(f"{label} (the matrix does not know the {resource} of {', '.join(missing)})")
            continue
        ratios = [Fraction(s.gpus) / s.capacity[resource] for s in gpu_shapes]  # type: ignore[operator]
        bound = math.floor(limit * max(ratios)) if ratios else 0
        if best is None or bound < best[0]:
            best = (bound, label)
    return Bound(best[0] if best else None, best[1] if best else None, tuple(unbounded), tuple(unknown))


def _fmt(value: Fraction) -> str:
    return str(value.numerator) if value.denominator == 1 else str(float(value))


_FIX = f'set spec.limits: {{{GPU_RESOURCE}: "8"}} (the most GPUs this NodePool may run at once)'


def validate(args: Any, report: ReportViolation) -> None:
    """Every finding; those the pack cannot judge (a bound it cannot compute) carry UNSEEN_MARK."""
    if not (args.resource_type.startswith("kubernetes:karpenter.sh/") and args.resource_type.endswith(":NodePool")):
        return
    pool = pool_of(args.resource_type, args.props, args.urn, args.name)
    if pool is None:
        return
    reason = gpu_reason(pool)
    if reason is None:
        return
    where = f"GPU NodePool '{args.name}' ({reason})"
    raw = get(args.props, "spec", "limits")
    given = {str(k): raw[k] for k in raw} if isinstance(raw, Mapping) else {}
    limits: dict[str, Fraction] = {}
    for resource in BOUNDING:
        if resource not in given:
            continue
        value = quantity(given[resource])
        if value is None:
            report(f"GPU NodePool '{args.name}' caps {resource} with {given[resource]!r}, which is not a "
                   f"non-negative resource quantity. Fix: {_FIX}.", args.urn)
            return
        limits[resource] = value
    if not limits:
        shown = dict(raw) if isinstance(raw, Mapping) else "unset"
        names = f"{', '.join(BOUNDING[:-1])} or {BOUNDING[-1]}"
        report(f"{where} has no limit on {names} in spec.limits (spec.limits is {shown}), so Karpenter may launch "
               f"GPU instances without bound. Fix: {_FIX}.", args.urn)
        return
    shapes = admitted(as_list(get(args.props, "spec", "template", "spec", "requirements")))
    bound = gpu_bound(limits, shapes, {resource: str(given[resource]) for resource in limits})
    if bound.gpus is not None:
        return
    if bound.unknown:
        report(f"{UNSEEN_MARK}{where}: the pack cannot tell how many GPUs its limits allow: "
               f"{'; '.join(bound.unknown + bound.unbounded)}. To let the pack judge it: {_FIX}, or narrow the "
               "requirements to instance types the matrix knows.", args.urn)
        return
    report(f"{where} is not bounded by its limits: {'; '.join(bound.unbounded)}, so that limit never stops Karpenter "
           "launching them; pods that request nvidia.com/gpu never land there, others may (karpenter-provider-aws "
           f"issue #8368). Fix: add a cpu or memory limit, or exclude them (requirement karpenter.k8s.aws/"
           "instance-gpu-count Gt 0).", args.urn)


POLICY = resource_policy_with_unseen(
    "karpenter-gpu-limits",
    "Every GPU NodePool's GPU count is bounded by its spec.limits: nvidia.com/gpu, cpu, memory or nodes over the "
    "instance types its requirements allow (the smallest bound wins).",
    validate,
    unseen_description="Advisory twin of karpenter-gpu-limits: a GPU NodePool whose limits bound its GPUs only "
                       "through instance types whose capacity the matrix does not know; it names what lets the pack "
                       "judge.",
)

"""gpu-nodes-tainted: every GPU node group and GPU NodePool carries the GPU taint.

Without the taint, any pod (CoreDNS, controllers, batch jobs) may land on a GPU node, hold it up
from scaling to zero and take CPU/memory a GPU workload needed. The GPU taint is key `nvidia.com/gpu`
with effect `NoSchedule` or `NoExecute`; its value is optional (`views.is_gpu_taint`): the EKS and
Karpenter docs write it without one (`{key: nvidia.com/gpu, effect: NoSchedule}`), our platform writes
`nvidia.com/gpu=true:NoSchedule`. Both keep off every pod that does not tolerate them.

A pool is a GPU pool by its instance types or families (the matrix), its GPU AMI type, the label
contract, or a requirement on a GPU label (`karpenter.k8s.aws/instance-gpu-*`, and EKS Auto Mode's
`eks.amazonaws.com/instance-gpu-*` / `eks.amazonaws.com/instance-family`).

This module also holds the GPU-pool detection the other node policies share (`is_gpu_pool`): GPU
instance types and families come from the compatibility matrix, never from instance-name prefixes.

Sources:
- GPU taint on GPU NodePools (EKS Best Practices, Karpenter):
  https://docs.aws.amazon.com/eks/latest/best-practices/karpenter.html
- A taint's value is optional: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- EKS Auto Mode GPU NodePool (eks.amazonaws.com labels, valueless taint):
  https://docs.aws.amazon.com/eks/latest/userguide/auto-accelerated.html
- Label / taint contract: CONFIG.md section 2.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import (
    AUTOSCALING_GROUP,
    INSTANCE_TYPE_LABEL,
    NODE_GROUP,
    NODE_POOL,
    POOL_LABEL,
    Pool,
    as_list,
    build_inventory,
    get,
)
from ..matrix import load_matrix
from ..scheduling import FAMILY_LABELS

# The GPU taint our components write (the fix this policy suggests); any value or none satisfies it.
GPU_TAINT = ("nvidia.com/gpu", "true", "NoSchedule")

# EKS managed node group AMI types whose image carries the NVIDIA driver (i.e. GPU node groups).
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html (amiType values)
GPU_AMI_TYPES = frozenset({
    "AL2_x86_64_GPU",
    "AL2023_x86_64_NVIDIA",
    "AL2023_ARM_64_NVIDIA",
    "BOTTLEROCKET_x86_64_NVIDIA",
    "BOTTLEROCKET_ARM_64_NVIDIA",
})

# Karpenter's per-instance-type GPU labels (any NodePool that constrains them launches GPU instances).
# Source: https://karpenter.sh/docs/reference/instance-types/ and the NodePool CRD's
# karpenter.k8s.aws label list (aws/karpenter-provider-aws v1.14.1 pkg/apis/crds/karpenter.sh_nodepools.yaml)
# EKS Auto Mode spells the same labels in the eks.amazonaws.com domain.
# Source: https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html (EKS Auto Mode supported labels)
GPU_COUNT_LABEL = "karpenter.k8s.aws/instance-gpu-count"
GPU_COUNT_LABELS = (GPU_COUNT_LABEL, "eks.amazonaws.com/instance-gpu-count")
GPU_NAME_LABELS = ("karpenter.k8s.aws/instance-gpu-name", "karpenter.k8s.aws/instance-gpu-manufacturer",
                   "eks.amazonaws.com/instance-gpu-name", "eks.amazonaws.com/instance-gpu-manufacturer")

KARPENTER_NODEPOOL_PREFIX = "kubernetes:karpenter.sh/"


@cache
def _gpu_families() -> frozenset[str]:
    return frozenset(name.partition(".")[0] for name in load_matrix().instance_types())


def gpu_family(family: str) -> bool:
    """Is this EC2 instance family a GPU family of the matrix?"""
    return family in _gpu_families()


def gpu_instance(name: str) -> bool:
    """Is this EC2 instance type a GPU instance type of the matrix?"""
    return load_matrix().is_gpu_instance(name)


@dataclass(frozen=True)
class _Resource:
    resource_type: str
    props: Any
    urn: str
    name: str


def pool_of(resource_type: str, props: Any, urn: str, name: str) -> Pool | None:
    """The Pool view of one node group / ASG / NodePool resource (any karpenter.sh version)."""
    if resource_type.startswith(KARPENTER_NODEPOOL_PREFIX) and resource_type.endswith(":NodePool"):
        resource_type = NODE_POOL
    if resource_type not in (NODE_GROUP, AUTOSCALING_GROUP, NODE_POOL):
        return None
    pools = build_inventory([_Resource(resource_type, props, urn, name)]).pools
    return pools[0] if pools else None


def _gpu_count_requirement(req: Any) -> bool:
    operator = str(get(req, "operator", default=""))
    values = [str(v) for v in as_list(get(req, "values"))]
    numbers = [int(v) for v in values if v.isdigit()]
    if operator == "Exists":
        return True
    if operator == "Gt":
        return bool(numbers) and numbers[0] >= 0
    if operator == "Gte":
        return bool(numbers) and numbers[0] >= 1
    if operator == "In":
        return any(n > 0 for n in numbers)
    return False


def gpu_reason(pool: Pool, gpu: Callable[[str], bool] = gpu_instance) -> str | None:
    """Why `pool` is a GPU pool (None when it is not one)."""
    gpu_types = [t for t in pool.instance_types if gpu(t)]
    if gpu_types:
        return f"GPU instance types {gpu_types}"
    if pool.is_gpu(gpu):
        return "GPU labels of the label contract"
    if POOL_LABEL in pool.labels:
        return f"label {POOL_LABEL}={pool.labels[POOL_LABEL]}"
    if pool.ami_type in GPU_AMI_TYPES:
        return f"GPU AMI type {pool.ami_type}"
    families: set[str] = set()
    for label in FAMILY_LABELS:
        found = pool.label_domain.get(label)
        families |= found if isinstance(found, frozenset) else frozenset()
    gpu_families = sorted(f for f in families if gpu_family(f))
    if gpu_families:
        return f"GPU instance families {gpu_families}"
    if pool.kind == "karpenter-nodepool":
        for req in as_list(get(pool.props, "spec", "template", "spec", "requirements")):
            key = str(get(req, "key", default=""))
            if key in GPU_COUNT_LABELS and _gpu_count_requirement(req):
                return f"requirement {key} {get(req, 'operator')} {list(as_list(get(req, 'values')))}"
            if key in GPU_NAME_LABELS and str(get(req, "operator", default="")) in ("In", "Exists"):
                return f"requirement {key} {get(req, 'operator')} {list(as_list(get(req, 'values')))}"
            if key == INSTANCE_TYPE_LABEL and str(get(req, "operator", default="")) == "In":
                types = [str(v) for v in as_list(get(req, "values")) if gpu(str(v))]
                if types:
                    return f"GPU instance types {types}"
    return None


def is_gpu_pool(pool: Pool) -> bool:
    return gpu_reason(pool) is not None


def _fix(pool: Pool) -> str:
    if pool.kind == "managed-node-group":
        return 'add taints: [{key: nvidia.com/gpu, value: "true", effect: NO_SCHEDULE}] to the node group'
    if pool.kind == "self-managed":
        return ('tag the ASG k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu = "true:NoSchedule" and '
                "register the nodes with --register-with-taints=nvidia.com/gpu=true:NoSchedule")
    return 'add spec.template.spec.taints: [{key: nvidia.com/gpu, value: "true", effect: NoSchedule}]'


def validate(args: Any, report_violation: ReportViolation) -> None:
    pool = pool_of(args.resource_type, args.props, args.urn, args.name)
    if pool is None:
        return
    reason = gpu_reason(pool)
    if reason is None or pool.has_gpu_taint:
        return
    taints = [str(t) for t in pool.taints] or "none"
    report_violation(
        f"GPU pool '{args.name}' ({pool.kind}; {reason}) must carry the GPU taint: key nvidia.com/gpu, effect "
        "NoSchedule or NoExecute (any value or none), so only pods that tolerate it land on GPU nodes; its taints: "
        f"{taints}. Fix: {_fix(pool)}.",
        args.urn,
    )


POLICY = resource_policy(
    "gpu-nodes-tainted",
    "Every GPU node group, self-managed GPU ASG and GPU NodePool carries the GPU taint: key nvidia.com/gpu, effect "
    "NoSchedule or NoExecute, any value or none (nvidia.com/gpu=true:NoSchedule in our stacks).",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)

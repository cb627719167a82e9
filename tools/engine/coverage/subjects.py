"""The resource types each catalogue policy judges: what an unseen component must register to hide its subject.

One entry per catalogue policy of the pack (`policies.gpu_guard.base.all_meta`, neither a twin nor a resource part:
those judge what their policy judges); tests/tools/test_unjudged.py fails when a policy has no entry, or when a rule
module names a type its entry lacks. A stack policy built on the inventory (`policies/gpu_guard/inventory.py`,
`build_inventory`) reads every pool, driver, release and workload type the inventory reads (`INVENTORY`).
Entries are type tokens or prefixes of them (`kubernetes:karpenter.sh/` is every Karpenter `karpenter.sh` type).
"""

from __future__ import annotations

from collections.abc import Iterable

# Where the GPU and system pools are (policies/gpu_guard/inventory.py: NODE_GROUP, AUTOSCALING_GROUP, LAUNCH_TEMPLATE,
# NODE_POOL, EC2_NODE_CLASS, the EKS Auto Mode NodeClass, Fargate profiles).
NODES: tuple[str, ...] = (
    "aws:eks/nodeGroup:NodeGroup", "aws:autoscaling/group:Group", "aws:ec2/launchTemplate:LaunchTemplate",
    "aws:eks/fargateProfile:FargateProfile", "kubernetes:karpenter.sh/v1:NodePool",
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "kubernetes:eks.amazonaws.com/v1:NodeClass",
)
# What schedules pods (inventory.py POD_TEMPLATE_PATHS).
WORKLOADS: tuple[str, ...] = (
    "kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:ReplicaSet", "kubernetes:batch/v1:Job", "kubernetes:batch/v1:CronJob", "kubernetes:core/v1:Pod",
)
CLUSTERS: tuple[str, ...] = ("aws:eks/cluster:Cluster", "eks:index:Cluster")
# Drivers and the operator (inventory.py NVIDIA_DRIVER, HELM_RELEASE_TYPES).
DRIVERS: tuple[str, ...] = (
    "kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Chart",
    "kubernetes:helm.sh/v4:Chart",
)
INVENTORY: tuple[str, ...] = (*NODES, *WORKLOADS, *CLUSTERS, *DRIVERS)
INGRESS: tuple[str, ...] = ("kubernetes:networking.k8s.io/v1:Ingress", "kubernetes:extensions/")
SCALERS: tuple[str, ...] = ("kubernetes:keda.sh/v1alpha1:ScaledObject",
                            "kubernetes:autoscaling/v2:HorizontalPodAutoscaler",
                            "kubernetes:policy/v1:PodDisruptionBudget")

POLICY_SUBJECTS: dict[str, tuple[str, ...]] = {
    "alb-https-only": INGRESS,
    "alb-waf-attached": INGRESS,
    "cuda-architecture-compatible": INVENTORY,
    "cuda-driver-compatible": INVENTORY,
    "ebs-access-mode-supported": ("kubernetes:core/v1:PersistentVolumeClaim",
                                  "kubernetes:storage.k8s.io/v1:StorageClass", *WORKLOADS),
    "ebs-encrypted": ("kubernetes:storage.k8s.io/v1:StorageClass", "aws:eks/nodeGroup:NodeGroup",
                      "aws:ec2/launchTemplate:LaunchTemplate"),
    "eks-control-plane-hardened": ("aws:eks/cluster:Cluster",),
    "gpu-architecture-supported": INVENTORY,
    "gpu-driver-branch-lifecycle": INVENTORY,
    "gpu-driver-branch-supported": INVENTORY,
    "gpu-driver-image-published": INVENTORY,
    "gpu-nodes-tainted": NODES,
    "gpu-operator-kubernetes-supported": INVENTORY,
    # The CUDA a workload declares: its image, label, or the Dockerfile a docker image resource builds.
    "gpu-workload-cuda-declared": (*WORKLOADS, "docker:index/image:Image", "docker-build:index:Image"),
    "gpu-workload-schedulable": INVENTORY,
    "imdsv2-required": ("aws:ec2/launchTemplate:LaunchTemplate",),
    "karpenter-gpu-limits": ("kubernetes:karpenter.sh/",),
    # A serving workload, judged with the GPU pools it declares it can reach (its reachable-pools annotation).
    "serving-image-architecture": WORKLOADS,
    "serving-model-fits": WORKLOADS,
    "karpenter-interruption-handling": ("aws:sqs/queue:Queue", "aws:cloudwatch/eventRule:EventRule",
                                        "aws:cloudwatch/eventTarget:EventTarget", "kubernetes:karpenter.sh/",
                                        *DRIVERS),
    "karpenter-v1-api": ("kubernetes:karpenter.sh/", "kubernetes:karpenter.k8s.aws/"),
    "kubelet-version-skew": INVENTORY,
    "kubernetes-version-lifecycle": CLUSTERS,
    "model-snapshot-retained": ("kubernetes:snapshot.storage.k8s.io/",),
    "one-driver-per-pool": INVENTORY,
    "preinstalled-driver-exclusive": INVENTORY,
    "scaled-workload-wakes": ("kubernetes:keda.sh/", *WORKLOADS),
    "scaled-workload-wakes-nodes": ("kubernetes:keda.sh/", *INVENTORY),
    "serving-endpoint-authenticated": (*INGRESS, "kubernetes:core/v1:Service", *WORKLOADS),
    "serving-disruption-protected": (*SCALERS, *WORKLOADS, "aws:eks/nodeGroup:NodeGroup",
                                     "kubernetes:karpenter.sh/"),
    # What the monthly estimate prices (policies/gpu_guard/pricing/): the control plane, pools, NAT gateways, KMS keys,
    # fast snapshot restore, ALB Ingresses and model volumes.
    "cost-budget": (*INVENTORY, "aws:ec2/natGateway:NatGateway", "aws:kms/key:Key",
                    "aws:ebs/fastSnapshotRestore:FastSnapshotRestore", *INGRESS,
                    "kubernetes:core/v1:PersistentVolumeClaim", "kubernetes:storage.k8s.io/v1:StorageClass",
                    "kubernetes:snapshot.storage.k8s.io/", "kubernetes:keda.sh/"),
    # The zones of the system pool's subnets (prod: two zones) too.
    "system-node-group-present": (*INVENTORY, "aws:ec2/subnet:Subnet"),
}


def _overlaps(subject: str, held: str) -> bool:
    """A held type (or prefix; "" is anything) may be the subject type (or prefix), or the other way round."""
    return subject.startswith(held) or held.startswith(subject)


def policies_reading(holds: Iterable[str]) -> tuple[str, ...]:
    """The catalogue policies that judge a type among `holds` (type tokens or prefixes), sorted."""
    held = tuple(holds)
    return tuple(sorted(p for p, subjects in POLICY_SUBJECTS.items()
                        if any(_overlaps(s, h) for s in subjects for h in held)))


def reads(policy: str, holds: Iterable[str]) -> bool:
    """Whether `policy` (or its twin, `<policy>-caveats`/`-pending`/...) judges a type among `holds`."""
    base = next((p for p in sorted(POLICY_SUBJECTS, key=len, reverse=True)
                 if policy == p or policy.startswith(p + "-")), None)
    if base is None:  # a policy this table does not know: it may read anything
        return True
    return any(_overlaps(s, h) for s in POLICY_SUBJECTS[base] for h in holds)


# "Every node and workload policy": what could judge a component whose schema says nothing of its children.
NODE_AND_WORKLOAD_POLICIES: tuple[str, ...] = policies_reading((*NODES, *WORKLOADS))

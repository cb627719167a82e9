"""The plain views of a stack that the policies reason about: pools, workloads, taints, Helm releases, drivers.

Shared types of `inventory.py` (which builds them from resources) and `scheduling.py` (which matches
workloads to pools); they live here so neither module imports the other for its types.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .props import Deferred

# Label contract (CONFIG.md section 2). The pack is self-contained, so it restates the keys.
POOL_LABEL = "gpu-platform.io/pool"
OS_LABEL = "gpu-platform.io/os"
DRIVER_LABEL = "gpu-platform.io/driver"
DRIVER_SOURCE_LABEL = "gpu-platform.io/driver-source"
CUDA_LABEL = "gpu-platform.io/cuda"
GPU_TAINT_KEY = "nvidia.com/gpu"
GPU_RESOURCE = "nvidia.com/gpu"

# The OS families whose node image ships the NVIDIA driver (EKS-optimized AL2023 NVIDIA and Bottlerocket NVIDIA).
BAKED_OS = ("bottlerocket", "al2023")


@dataclass(frozen=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"


def is_gpu_taint(taint: Taint) -> bool:
    """The GPU taint in any of its documented spellings: key nvidia.com/gpu, effect NoSchedule or NoExecute, any
    value or none (a taint's value is optional; `operator: Exists` tolerates any).

    Source: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/ ;
    https://docs.aws.amazon.com/eks/latest/userguide/auto-accelerated.html and
    https://karpenter.sh/docs/concepts/scheduling/ (GPU NodePools tainted `nvidia.com/gpu` with no value).
    """
    return taint.key == GPU_TAINT_KEY and taint.effect in ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Pool:
    """A group of nodes with one shape: a managed node group, a self-managed ASG or a Karpenter NodePool.

    `label_domain` maps each label the nodes carry to the set of values it can take (one value for
    a fixed label, several for e.g. the instance type of a Karpenter pool, `None` for "some value
    we cannot tell").
    """

    urn: str
    name: str
    kind: str  # "managed-node-group" | "self-managed" | "karpenter-nodepool"
    labels: dict[str, str]
    label_domain: dict[str, frozenset[str] | Deferred | None]
    taints: tuple[Taint, ...]
    instance_types: tuple[str, ...]
    min_size: int | None
    ami_type: str | None = None
    # The nodes a node group keeps (`scalingConfig.desiredSize`, an ASG's `desiredCapacity`, else its `minSize`);
    # None for a Karpenter NodePool, or where the stack does not say (policies/gpu_guard/wake_nodes.py).
    desired_size: int | None = None
    kubelet: str | Deferred | None = None
    node_class: str | None = None
    os_hint: str | None = None  # OS derived from the AMI type / EC2NodeClass, when no label says it
    # The pinned node image release (EC2NodeClass alias `al2023@v20260917` -> v20260917, node group
    # releaseVersion `1.35.2-20260917`); None: the newest (alias @latest, or nothing pinned).
    image_version: str | None = None
    # EKS Auto Mode: a NodePool on the eks.amazonaws.com NodeClass, or a built-in pool of an Auto Mode cluster. Its
    # AMI brings the NVIDIA driver and device plugin (https://docs.aws.amazon.com/eks/latest/userguide/auto-accelerated.html).
    auto_mode: bool = False
    # A Bottlerocket EC2NodeClass's settings.kernel.drivers.nvidia.branch (its userData TOML): lts / pb.
    driver_branch_pin: str | None = None
    props: Any = field(default=None, repr=False, compare=False)
    resource: Any = field(default=None, repr=False, compare=False)  # the PolicyResource, when there is one

    def depends_on(self, prop: str) -> list[Any]:
        """The resources the engine says property `prop` of this pool's resource was computed from."""
        deps = getattr(self.resource, "property_dependencies", None) or {}
        return list(deps.get(prop) or [])

    @property
    def kubelet_version(self) -> str | None:
        """The nodes' kubelet version; reading it waits (raises) while the engine does not know it."""
        return self.kubelet.value() if isinstance(self.kubelet, Deferred) else self.kubelet

    @property
    def os(self) -> str | None:
        return self.labels.get(OS_LABEL) or self.os_hint

    @property
    def driver_label(self) -> str | None:
        return self.labels.get(DRIVER_LABEL)

    @property
    def driver_source(self) -> str | None:
        source = self.labels.get(DRIVER_SOURCE_LABEL)
        if source:
            return source
        if self.os in BAKED_OS or self.auto_mode:
            return "image"
        if self.os and self.os.startswith("ubuntu"):
            return "operator"
        return None

    @property
    def has_gpu_taint(self) -> bool:
        """A taint that keeps pods without a GPU toleration off (`is_gpu_taint`)."""
        return any(is_gpu_taint(t) for t in self.taints)

    def is_gpu(self, gpu_instance: Any) -> bool:
        """A GPU pool: GPU instance types, or a pool that declares itself one through the label contract."""
        if any(gpu_instance(t) for t in self.instance_types):
            return True
        return POOL_LABEL in self.labels and (DRIVER_LABEL in self.labels or self.has_gpu_taint)


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    gpus: int  # nvidia.com/gpu limit (or request) plus the GPUs its DRA claims take (dra.py), 0 when none
    dra_classes: tuple[str, ...] = ()  # the NVIDIA DeviceClasses its DRA claims request (dra.py)
    unresolved_claims: tuple[str, ...] = ()  # DRA claims it names that the stack does not hold: not known


@dataclass(frozen=True)
class Workload:
    urn: str
    name: str
    kind: str
    labels: dict[str, str]
    node_selector: dict[str, str]
    required_terms: tuple[Any, ...] | None  # nodeSelectorTerms (ORed), None when no required affinity
    tolerations: tuple[Any, ...]
    containers: tuple[Container, ...]

    @property
    def gpus(self) -> int:
        return max((c.gpus for c in self.containers), default=0)

    @property
    def dra_classes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for c in self.containers for k in c.dra_classes))

    @property
    def unresolved_claims(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(k for c in self.containers for k in c.unresolved_claims))

    def gpu_request(self) -> str:
        """How it asks for its GPUs, for messages: `requests 1 nvidia.com/gpu`, or the DRA claim's classes."""
        if self.dra_classes:
            return f"claims {self.gpus} NVIDIA GPU(s) through DRA (device class {', '.join(self.dra_classes)})"
        return f"requests {self.gpus} nvidia.com/gpu"

    @property
    def cuda_label(self) -> str | None:
        return self.labels.get(CUDA_LABEL)


@dataclass(frozen=True)
class HelmRelease:
    urn: str
    name: str
    chart: str
    version: str | None
    namespace: str | None
    values: Any


@dataclass(frozen=True)
class DriverSpec:
    """One operator-installed driver: the ClusterPolicy default or an NVIDIADriver object."""

    urn: str
    name: str
    version: str
    node_selector: dict[str, str]
    use_precompiled: bool
    source: str  # "helm-values" | "nvidiadriver"

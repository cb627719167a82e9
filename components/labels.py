"""The node and workload label contract (CONFIG.md section 2), stamped by every component.

The policy pack restates the same keys in `policies/gpu_guard/inventory.py` (it is published on its
own and cannot import components/); a test keeps the two in step.

Sources:
- Taint syntax `key=value:Effect`: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- GPU Operator per-node operand switches (`nvidia.com/gpu.deploy.<operand>=false`):
  https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
- EKS node group taint effects (`NO_SCHEDULE`): https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

POOL_LABEL = "gpu-platform.io/pool"
OS_LABEL = "gpu-platform.io/os"
DRIVER_LABEL = "gpu-platform.io/driver"
DRIVER_SOURCE_LABEL = "gpu-platform.io/driver-source"
CUDA_LABEL = "gpu-platform.io/cuda"
ROLE_LABEL = "gpu-platform.io/role"
SYSTEM_ROLE = "system"

GPU_RESOURCE = "nvidia.com/gpu"

DriverSource = Literal["operator", "image"]
NodeOs = Literal["ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04", "bottlerocket", "al2023"]

# Operating systems whose node image ships the NVIDIA driver (and container toolkit).
BAKED_DRIVER_OS: frozenset[str] = frozenset({"bottlerocket", "al2023"})

# GPU Operator operands a node with a baked driver must not get, per OS; the operator reads
# `nvidia.com/gpu.deploy.<operand>` node labels (operand names as its state labels spell them).
# Bottlerocket NVIDIA ships driver, toolkit and the device plugin; AL2023 NVIDIA ships driver and toolkit,
# and its device plugin comes from the operator (POLICIES.md, preinstalled-driver-exclusive).
# Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
# ("kubectl label nodes $NODE nvidia.com/gpu.deploy.driver=false")
# Source: https://github.com/NVIDIA/gpu-operator/blob/main/controllers/state_manager.go (gpuStateLabels)
# Source: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html (AL2023: install the
# device plugin; Bottlerocket NVIDIA variants include it)
# Source: https://bottlerocket.dev/en/os/latest/concepts/variants/ (aws-k8s-*-nvidia: driver and device plugin)
OPERATOR_DEPLOY_LABEL_PREFIX = "nvidia.com/gpu.deploy."
BAKED_IMAGE_EXCLUDED_OPERANDS: dict[str, tuple[str, ...]] = {
    "bottlerocket": ("driver", "container-toolkit", "device-plugin"),
    "al2023": ("driver", "container-toolkit"),
}


@dataclass(frozen=True)
class Taint:
    """A Kubernetes node taint, with the spellings each API wants."""

    key: str
    value: str
    effect: Literal["NoSchedule", "NoExecute", "PreferNoSchedule"]

    @property
    def eks_effect(self) -> str:
        """The effect as the EKS node group API spells it (`NO_SCHEDULE`)."""
        return {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}[
            self.effect
        ]

    def kubelet_flag_value(self) -> str:
        """`key=value:Effect` (`key:Effect` for a taint without value), the form of kubelet
        `--register-with-taints` and of cluster-autoscaler tags."""
        return f"{self.key}={self.value}:{self.effect}" if self.value else f"{self.key}:{self.effect}"

    def toleration(self) -> dict[str, str]:
        """A pod toleration for exactly this taint."""
        return {"key": self.key, "operator": "Equal", "value": self.value, "effect": self.effect}


GPU_TAINT = Taint(key="nvidia.com/gpu", value="true", effect="NoSchedule")


def system_node_labels() -> dict[str, str]:
    """Labels of the untainted system node group; every controller's nodeSelector uses them."""
    return {ROLE_LABEL: SYSTEM_ROLE}


def system_node_selector() -> dict[str, str]:
    """nodeSelector that places a controller on the system node group."""
    return dict(system_node_labels())


def driver_source_for(os: str) -> DriverSource:
    """`image` where the node image bakes the driver (Bottlerocket, AL2023 NVIDIA), else `operator`."""
    return "image" if os in BAKED_DRIVER_OS else "operator"


def operator_exclusion_labels(os: str) -> dict[str, str]:
    """`nvidia.com/gpu.deploy.<operand>=false` for what a baked-driver image already ships.

    Bottlerocket: driver, toolkit and device plugin; AL2023: driver and toolkit (the operator's device
    plugin serves it). An Ubuntu node gets none: the operator installs its driver.
    """
    operands = BAKED_IMAGE_EXCLUDED_OPERANDS.get(os, ())
    return {f"{OPERATOR_DEPLOY_LABEL_PREFIX}{operand}": "false" for operand in operands}


def gpu_pool_labels(pool: str, os: str, driver: str) -> dict[str, str]:
    """Every label a GPU node of `pool` carries: the contract plus the operator exclusions it needs."""
    labels = {
        POOL_LABEL: pool,
        OS_LABEL: os,
        DRIVER_LABEL: driver,
        DRIVER_SOURCE_LABEL: driver_source_for(os),
    }
    labels.update(operator_exclusion_labels(os))
    return labels


def pool_node_selector(pool: str) -> dict[str, str]:
    """nodeSelector that reaches exactly the nodes of one GPU pool."""
    return {POOL_LABEL: pool}


def cuda_workload_labels(cuda: str) -> dict[str, str]:
    """Pod-template label declaring the CUDA runtime a GPU workload carries (`12.8`, `12.2.2`)."""
    return {CUDA_LABEL: cuda}

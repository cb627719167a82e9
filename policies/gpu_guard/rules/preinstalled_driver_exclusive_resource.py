"""preinstalled-driver-exclusive-resource: the part of `preinstalled-driver-exclusive` that judges one pool alone.

A GPU pool (EKS node group, self-managed Auto Scaling group, Karpenter NodePool) says through the label
contract what its image ships (`gpu-platform.io/os`, `gpu-platform.io/driver-source`). From its own
labels, before it is created:

- Bottlerocket NVIDIA ships driver, container toolkit and device plugin: the pool carries
  `nvidia.com/gpu.deploy.{driver,container-toolkit,device-plugin}=false` (or
  `nvidia.com/gpu.deploy.operands=false`).
- AL2023 NVIDIA ships driver and toolkit but no device plugin: the pool carries
  `nvidia.com/gpu.deploy.{driver,container-toolkit}=false` and keeps the operator's device plugin
  (no `device-plugin=false`, no `operands=false`), unless the stack says, through this policy's
  `standaloneDevicePlugin` config, that it runs the standalone NVIDIA device plugin chart instead.
- An Ubuntu pool gets its driver from the operator: no `driver=false`, no `operands=false`.

These labels are asked of a pool that speaks the label contract (`gpu-platform.io/os` or
`gpu-platform.io/driver-source`): our platform runs the GPU Operator beside such pools. A pool written
elsewhere (an AL2023 NVIDIA node group known only by its `amiType`) may run in a stack with no operator at
all, where the operand labels mean nothing: whether an operator would reach it is the stack policy's verdict,
which sees the release (`preinstalled-driver-exclusive`).

The labels are required even when the operator's values switch an operand off for the whole cluster: a
node label stays with the node when the operator values change later. Whether the operator release the
stack runs would deploy a second driver or device plugin, and whether a device plugin reaches every
AL2023 pool, needs the release and the pools together: `preinstalled-driver-exclusive` judges that.

Sources:
- Pre-installed drivers, per-node operand labels: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
- AL2023 ships no device plugin, Bottlerocket NVIDIA ships it: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..views import DRIVER_SOURCE_LABEL, OS_LABEL, Pool
from .gpu_nodes_tainted import gpu_reason, pool_of
from .preinstalled_driver_exclusive import (
    ALL_OPERANDS_LABEL,
    DEVICE_PLUGIN_LABEL,
    DRIVER_LABEL,
    IMAGE_SHIPS,
    NAME,
)

STANDALONE = "standaloneDevicePlugin"


def _off(pool: Pool, label: str) -> bool:
    return pool.labels.get(label, "").strip().lower() == "false"


def _speaks_contract(pool: Pool) -> bool:
    """Does the pool say through the label contract what its image ships (CONFIG.md section 2)?"""
    return OS_LABEL in pool.labels or DRIVER_SOURCE_LABEL in pool.labels


def problems(pool: Pool, standalone_device_plugin: bool = False) -> list[str]:
    """Why the pool's own labels break one-driver / one-device-plugin per node (empty when they do not)."""
    what = f"GPU pool {pool.name!r} ({pool.os or 'unknown OS'})"
    if pool.driver_source == "operator":
        blocked = [label for label in (DRIVER_LABEL, ALL_OPERANDS_LABEL) if _off(pool, label)]
        if blocked:
            return [f"{what} gets its driver from the GPU Operator but carries "
                    f"{', '.join(label + '=false' for label in blocked)}, so its nodes get no driver. Fix: remove "
                    "the label (it is only for pools whose image ships the driver)."]
        return []
    if pool.driver_source != "image" or pool.os not in IMAGE_SHIPS or not _speaks_contract(pool):
        return []
    out: list[str] = []
    ships = IMAGE_SHIPS[pool.os]
    operands_off = _off(pool, ALL_OPERANDS_LABEL)
    if pool.os == "al2023" and not standalone_device_plugin:
        opted_out = [label for label in (DEVICE_PLUGIN_LABEL, ALL_OPERANDS_LABEL) if _off(pool, label)]
        if opted_out:
            out.append(
                f"{what}: AL2023 NVIDIA images ship no device plugin, but the pool carries "
                f"{', '.join(label + '=false' for label in opted_out)}, so no device plugin reaches its nodes and "
                "nvidia.com/gpu is never advertised (GPU pods stay Pending). Fix: keep the operator's device plugin "
                f"(label only {' and '.join(f'{label}=false' for label in ships)}), or run the standalone NVIDIA "
                f"device plugin chart and set {STANDALONE}: true in this policy's config.")
            operands_off = False
    if operands_off:
        return out
    missing = [label for label in ships if not _off(pool, label)]
    if missing:
        out.append(
            f"{what} runs the driver baked into its image ({', '.join(ships)} ship with it), but its node labels "
            f"lack {', '.join(label + '=false' for label in missing)}: the GPU Operator would put a second one on "
            f"every node. Fix: add {', '.join(label + '=false' for label in missing)} to the pool's node labels.")
    return out


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    pool = pool_of(args.resource_type, args.props, args.urn, args.name)
    if pool is None or gpu_reason(pool) is None:
        return
    standalone = (args.get_config() or {}).get(STANDALONE) is True
    for message in problems(pool, standalone):
        report(message, args.urn)


resource_part(
    NAME,
    description=("A GPU pool's own labels keep the operator's driver, toolkit and (Bottlerocket) device plugin off "
                 "a node whose image ships them, keep a device plugin on AL2023 nodes, and never exclude an Ubuntu "
                 "node from the operator driver; judged on the resource alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={
        STANDALONE: {"type": "boolean", "default": False,
                     "description": "The stack runs the standalone NVIDIA device plugin chart for AL2023 nodes."},
    }),
)

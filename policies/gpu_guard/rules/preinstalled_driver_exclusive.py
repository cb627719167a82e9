"""preinstalled-driver-exclusive: one driver, one toolkit and one device plugin per GPU node.

A pool whose node image ships the NVIDIA driver (Bottlerocket NVIDIA, AL2023 NVIDIA:
`gpu-platform.io/driver-source: image`) must keep the GPU Operator's driver, container toolkit and
device plugin off its nodes whenever an operator release would deploy them there: every operand the
release leaves enabled (`driver.enabled`, `toolkit.enabled`, `devicePlugin.enabled`, all default
true; the driver also when an `NVIDIADriver` selects the pool) needs its node label
`nvidia.com/gpu.deploy.<operand>=false` on the pool, unless `nvidia.com/gpu.deploy.operands=false`
switches every operand off. A release that disables an operand globally needs no label for it.

Conversely an operator-managed (Ubuntu) GPU pool must not carry `nvidia.com/gpu.deploy.driver=false`
or `nvidia.com/gpu.deploy.operands=false`: its nodes would get no driver at all.

Note: AL2023 NVIDIA images bake the driver and toolkit but not the device plugin; with the operator's
device plugin switched off there, the cluster runs the standalone NVIDIA device plugin for those nodes.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import Pool, build_inventory, get
from ..matrix import load_matrix
from ._matrix_common import gpu_pools, operator_drivers_for

NAME = "preinstalled-driver-exclusive"

# GPU Operator per-node operand switches (node labels) and the Helm values that enable each operand.
# Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
#         (pre-installed drivers: nvidia.com/gpu.deploy.driver=false; nvidia.com/gpu.deploy.operands=false)
# Source: https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml
#         (driver.enabled, toolkit.enabled, devicePlugin.enabled)
ALL_OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
OPERAND_LABELS: tuple[tuple[str, str], ...] = (
    ("driver", "nvidia.com/gpu.deploy.driver"),
    ("toolkit", "nvidia.com/gpu.deploy.container-toolkit"),
    ("devicePlugin", "nvidia.com/gpu.deploy.device-plugin"),
)


def _off(pool: Pool, label: str) -> bool:
    return pool.labels.get(label, "").strip().lower() == "false"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    release = inv.operator
    for pool in gpu_pools(inv, matrix):
        if pool.driver_source == "operator":
            blocked = [label for label in ("nvidia.com/gpu.deploy.driver", ALL_OPERANDS_LABEL) if _off(pool, label)]
            if blocked:
                report(f"GPU pool {pool.name!r} ({pool.os or 'Ubuntu'}) gets its driver from the GPU Operator "
                       f"but carries {', '.join(label + '=false' for label in blocked)}, so its nodes get no driver; "
                       "remove the label (it is only for pools whose image ships the driver).", pool.urn)
            continue
        if pool.driver_source != "image" or release is None or _off(pool, ALL_OPERANDS_LABEL):
            continue
        selecting = [d.name for d in operator_drivers_for(inv, matrix, pool) if d.source == "nvidiadriver"]
        missing = []
        for operand, label in OPERAND_LABELS:
            enabled = get(release.values, operand, "enabled", default=True) is not False
            if operand == "driver":
                enabled = _driver_deployed(release.values, enabled, bool(operator_drivers_for(inv, matrix, pool)))
            if enabled and not _off(pool, label):
                missing.append(label)
        if missing:
            fixes = [f"{operand}.enabled=false" for operand, label in OPERAND_LABELS
                     if label in missing and get(release.values, operand, "enabled", default=True) is not False]
            alternatives = []
            if fixes:
                alternatives.append(f"set {', '.join(fixes)} in the operator values")
            if selecting:
                alternatives.append(f"narrow the nodeSelector of NVIDIADriver {', '.join(map(repr, selecting))}")
            report(f"GPU pool {pool.name!r} ({pool.os}) runs the driver baked into its image, but GPU Operator "
                   f"release {release.name!r} would also deploy its own there (missing "
                   f"{', '.join(label + '=false' for label in missing)}): two drivers/device plugins on one node. Add "
                   f"those labels to the pool's node labels, or {' or '.join(alternatives)}.", pool.urn)


def _driver_deployed(values: object, enabled: bool, selected: bool) -> bool:
    """Does the operator put a driver on the pool? The ClusterPolicy driver goes to every GPU node unless
    the NVIDIADriver CRD takes over, in which case only drivers whose selector matches the pool do."""
    crd = get(values, "driver", "nvidiaDriverCRD", "enabled", default=False) is True
    return selected or (enabled and not crd)


stack_policy(
    name=NAME,
    description="A node whose image ships the driver gets no operator driver, toolkit or device plugin, and an "
                "operator-managed Ubuntu node is not excluded from the operator driver.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

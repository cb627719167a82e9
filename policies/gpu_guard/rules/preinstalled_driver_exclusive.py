"""preinstalled-driver-exclusive: one driver, one toolkit and one device plugin per GPU node.

A pool whose node image ships the NVIDIA driver (`gpu-platform.io/driver-source: image`) must keep the
GPU Operator's copies of what the image ships off its nodes whenever an operator release would deploy
them there. Bottlerocket NVIDIA ships driver, container toolkit and device plugin; AL2023 NVIDIA ships
driver and toolkit but no device plugin. Every such operand the release leaves enabled
(`driver.enabled`, `toolkit.enabled`, `devicePlugin.enabled`, all default true; the driver also when an
`NVIDIADriver` selects the pool) needs its node label `nvidia.com/gpu.deploy.<operand>=false` on the
pool, unless `nvidia.com/gpu.deploy.operands=false` switches every operand off (Bottlerocket). A
release that disables an operand globally needs no label for it.

An AL2023 pool needs exactly one GPU allocator: the operator's device plugin (enabled in the release, and the pool
not opted out), the standalone NVIDIA device plugin (its Helm chart or DaemonSet in the stack), or NVIDIA's DRA
driver (an `nvidia-dra-driver-gpu` release with `resources.gpus.enabled`, its kubelet plugin tolerating the pool's
taints: `dra.py`). A device plugin and the DRA driver on one pool (AL2023 or operator-managed) is refused: NVIDIA's
chart says the two cannot run on the same node.

Conversely an operator-managed (Ubuntu) GPU pool must not carry `nvidia.com/gpu.deploy.driver=false`
or `nvidia.com/gpu.deploy.operands=false`: its nodes would get no driver at all.

First preview: Kubernetes objects (NodePools, Helm releases) reach this policy with no properties
(`props.properties_pending`). A pending pool is not judged, and while any Helm release is pending the
operator's and the standalone device plugin's presence is unknown (so is it while a DaemonSet is pending: it may
be the device plugin's manifest), so the pools wait too; the pool's own
labels are judged before it exists by `preinstalled-driver-exclusive-resource`.

Cannot see, cannot block (/work/shared/POLICIES.md): a stack that holds no Kubernetes object at all (node groups
only, its workloads and add-ons deployed by another stack or a GitOps tool) cannot show whether a device plugin
runs, so an AL2023 pool without one is an advisory there, in the twin `preinstalled-driver-exclusive-caveats`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import CAVEAT_MARK, stack_policy_with_caveats
from ..dra import DRA_CHART, dra_gpus_enabled, dra_tolerations
from ..inventory import HELM_RELEASE_TYPES, POD_TEMPLATE_PATHS, Pool, as_list, build_inventory, get
from ..matrix import load_matrix
from ..props import properties_pending
from ..scheduling import untolerated
from ._matrix_common import gpu_pools, operator_drivers_for

NAME = "preinstalled-driver-exclusive"

# GPU Operator per-node operand switches (node labels) and the Helm values that enable each operand.
# Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
#         (pre-installed drivers: nvidia.com/gpu.deploy.driver=false; nvidia.com/gpu.deploy.operands=false)
# Source: https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml
#         (driver.enabled, toolkit.enabled, devicePlugin.enabled)
ALL_OPERANDS_LABEL = "nvidia.com/gpu.deploy.operands"
DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"
TOOLKIT_LABEL = "nvidia.com/gpu.deploy.container-toolkit"
DEVICE_PLUGIN_LABEL = "nvidia.com/gpu.deploy.device-plugin"
OPERAND_LABELS: tuple[tuple[str, str], ...] = (
    ("driver", DRIVER_LABEL),
    ("toolkit", TOOLKIT_LABEL),
    ("devicePlugin", DEVICE_PLUGIN_LABEL),
)
# What each baked-driver image ships, as the operand labels that keep the operator's copy off its nodes.
# Source: https://docs.aws.amazon.com/eks/latest/userguide/ml-eks-k8s-device-plugin.html (AL2023: install the
#         device plugin; Bottlerocket NVIDIA variants include it)
# Source: https://bottlerocket.dev/en/os/latest/concepts/variants/ (aws-k8s-*-nvidia: driver and device plugin)
IMAGE_SHIPS: dict[str, tuple[str, ...]] = {
    "bottlerocket": (DRIVER_LABEL, TOOLKIT_LABEL, DEVICE_PLUGIN_LABEL),
    "al2023": (DRIVER_LABEL, TOOLKIT_LABEL),
}
# The standalone NVIDIA device plugin: its Helm chart and its image.
# Source: https://github.com/NVIDIA/k8s-device-plugin (helm repo nvdp, chart nvidia-device-plugin;
#         image nvcr.io/nvidia/k8s-device-plugin)
STANDALONE_CHART = "nvidia-device-plugin"
DAEMON_SET = "kubernetes:apps/v1:DaemonSet"
STANDALONE_IMAGE = "k8s-device-plugin"


def _off(pool: Pool, label: str) -> bool:
    return pool.labels.get(label, "").strip().lower() == "false"


def _standalone_device_plugin(resources: Sequence[Any]) -> bool:
    """Does the stack run the standalone NVIDIA device plugin (its chart, or a DaemonSet of its image)?"""
    for r in resources:
        rtype, props = getattr(r, "resource_type", ""), getattr(r, "props", None)
        if rtype in HELM_RELEASE_TYPES and str(get(props, "chart", default="")).rsplit("/", 1)[-1] == STANDALONE_CHART:
            return True
        if rtype == DAEMON_SET:
            spec = get(props, *POD_TEMPLATE_PATHS[rtype], "spec")
            if any(STANDALONE_IMAGE in str(get(c, "image", default="")) for c in as_list(get(spec, "containers"))):
                return True
    return False


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    resources = list(args.resources)
    inv = build_inventory(r for r in resources if not properties_pending(r.resource_type, r.props))
    # A pending Helm release or DaemonSet may be the operator or the standalone device plugin: not known yet.
    releases_pending = any(properties_pending(r.resource_type, r.props) for r in resources
                           if r.resource_type in (*HELM_RELEASE_TYPES, DAEMON_SET))
    release = inv.operator
    standalone = _standalone_device_plugin(resources)
    # No Kubernetes object at all: whatever installs the device plugin is not in this stack.
    elsewhere = not any(r.resource_type.startswith("kubernetes:") for r in resources)
    dra = [r for r in inv.releases if r.chart == DRA_CHART and dra_gpus_enabled(r.values)]
    for pool in gpu_pools(inv, matrix):
        if pool.driver_source == "operator":
            blocked = [label for label in (DRIVER_LABEL, ALL_OPERANDS_LABEL) if _off(pool, label)]
            if blocked:
                report(f"GPU pool {pool.name!r} ({pool.os or 'Ubuntu'}) gets its driver from the GPU Operator "
                       f"but carries {', '.join(label + '=false' for label in blocked)}, so its nodes get no driver; "
                       "remove the label (it is only for pools whose image ships the driver).", pool.urn)
            elif not releases_pending:
                _device_plugin_and_dra(pool, _operator_plugin(pool, release), standalone, _serving(dra, pool), report)
            continue
        if pool.driver_source != "image" or releases_pending:
            continue  # a pending release: whether an operator or a standalone device plugin runs is not known yet
        if pool.os == "al2023":
            _al2023_device_plugin(pool, release, standalone, dra, report, elsewhere=elsewhere)
        if release is None or (_off(pool, ALL_OPERANDS_LABEL) and pool.os != "al2023"):
            continue
        ships = IMAGE_SHIPS.get(pool.os or "", (DRIVER_LABEL, TOOLKIT_LABEL, DEVICE_PLUGIN_LABEL))
        selecting = [d.name for d in operator_drivers_for(inv, matrix, pool) if d.source == "nvidiadriver"]
        missing = []
        for operand, label in OPERAND_LABELS:
            if label not in ships:
                continue
            enabled = get(release.values, operand, "enabled", default=True) is not False
            if operand == "driver":
                enabled = _driver_deployed(release.values, enabled, bool(operator_drivers_for(inv, matrix, pool)))
            if enabled and not _off(pool, label) and not _off(pool, ALL_OPERANDS_LABEL):
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


def _operator_plugin(pool: Pool, release: Any) -> bool:
    """Does the GPU Operator's device plugin run on the pool (its release enables it, the pool does not opt out)?"""
    return (release is not None
            and get(release.values, "devicePlugin", "enabled", default=True) is not False
            and not _off(pool, DEVICE_PLUGIN_LABEL) and not _off(pool, ALL_OPERANDS_LABEL))


def _serving(dra: Sequence[Any], pool: Pool) -> list[Any]:
    """The DRA driver releases (GPUs enabled) whose kubelet plugin, the DaemonSet that publishes a node's GPUs, can
    run on the pool's nodes: it tolerates the pool's blocking taints (its node affinity, NFD's labels by default,
    is not judged)."""
    return [r for r in dra if not untolerated(dra_tolerations(r.values), pool)]


def _device_plugin_and_dra(pool: Pool, operator_plugin: bool, standalone: bool, serving: Sequence[Any],
                           report: ReportViolation) -> bool:
    """The device plugin and NVIDIA's DRA driver both allocating the pool's GPUs: refused (True when reported).

    NVIDIA's chart refuses `resources.gpus.enabled=true` unless `gpuResourcesEnabledOverride=true` says the device
    plugin is off, because "this DRA driver cannot be deployed alongside the standard GPU device plugin on the same
    node" (NVIDIA/k8s-dra-driver-gpu v25.12.0 deployments/helm/nvidia-dra-driver-gpu/templates/validation.yaml
    lines 33-42; v25.8.1 lines 33-40); NVIDIA's install guide installs the GPU Operator with
    `devicePlugin.enabled=false` for DRA GPU allocation
    (https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/dra-intro-install.html).
    """
    if not serving or not (operator_plugin or standalone):
        return False
    plugins = [p for p, on in ((f"the GPU Operator's device plugin ({DEVICE_PLUGIN_LABEL} not false on the pool, "
                                "devicePlugin.enabled in the operator values)", operator_plugin),
                               (f"the standalone {STANDALONE_CHART}", standalone)) if on]
    fixes = ([f"set devicePlugin.enabled=false in the operator values or label the pool {DEVICE_PLUGIN_LABEL}=false"]
             if operator_plugin else []) + ([f"remove the standalone {STANDALONE_CHART}"] if standalone else [])
    report(f"GPU pool {pool.name!r} ({pool.os or 'Ubuntu'}) would get two GPU allocators: "
           f"{' and '.join(plugins)}, and NVIDIA's DRA driver (release {serving[0].name!r}, resources.gpus.enabled). "
           "NVIDIA's DRA driver cannot be deployed alongside the device plugin on the same node (its chart refuses "
           f"it without gpuResourcesEnabledOverride). Fix: {', and '.join(fixes)}; or set resources.gpus.enabled=false "
           "on the DRA driver to keep the device plugin.", pool.urn)
    return True


def _al2023_device_plugin(pool: Pool, release: Any, standalone: bool, dra: Sequence[Any],
                          report: ReportViolation, *, elsewhere: bool) -> None:
    """AL2023 NVIDIA ships no device plugin: exactly one GPU allocator must reach the pool, a device plugin or
    NVIDIA's DRA driver (`dra.py`; AWS recommends DRA drivers from Kubernetes 1.34 on managed and self-managed node
    groups: https://docs.aws.amazon.com/eks/latest/userguide/device-management.html). `elsewhere`: the stack holds
    no Kubernetes object, so whether one does is not in it."""
    operator_plugin = _operator_plugin(pool, release)
    serving = _serving(dra, pool)
    if _device_plugin_and_dra(pool, operator_plugin, standalone, serving, report):
        return
    if operator_plugin and standalone:
        report(f"GPU pool {pool.name!r} (al2023) would get two device plugins: the GPU Operator's (release "
               f"{release.name!r}) and the standalone {STANDALONE_CHART}. Add {DEVICE_PLUGIN_LABEL}=false to the "
               "pool's node labels, or remove the standalone device plugin.", pool.urn)
    elif not operator_plugin and not standalone and not serving and elsewhere:
        report(f"{CAVEAT_MARK}GPU pool {pool.name!r} (al2023) gets no device plugin from this stack: AL2023 NVIDIA "
               "images ship none, and this stack holds no Kubernetes object (no GPU Operator, no standalone "
               f"{STANDALONE_CHART}), so the device plugin is installed elsewhere or not at all; not judged. The pack "
               "judges it in a stack that holds both the pool and the Kubernetes objects: deploy the GPU Operator or "
               f"the {STANDALONE_CHART} chart with the pool, or GPU pods stay Pending for want of nvidia.com/gpu.",
               pool.urn)
    elif not operator_plugin and not standalone and not serving:
        why = ("no GPU Operator release runs" if release is None
               else f"GPU Operator release {release.name!r} has devicePlugin.enabled=false"
               if get(release.values, "devicePlugin", "enabled", default=True) is False
               else f"the pool opts out of the operator's ({DEVICE_PLUGIN_LABEL}=false or {ALL_OPERANDS_LABEL}=false)")
        dra_why = ""
        if dra:
            taints = sorted({str(t) for r in dra for t in untolerated(dra_tolerations(r.values), pool)})
            dra_why = (f"; the {DRA_CHART} release {dra[0].name!r} would allocate its GPUs, but its kubelet plugin "
                       f"does not tolerate the pool's taints {taints} (add them to kubeletPlugin.tolerations)")
        report(f"GPU pool {pool.name!r} (al2023) is left with no device plugin: AL2023 NVIDIA images ship none, "
               f"{why}, and no standalone {STANDALONE_CHART} runs{dra_why}, so nvidia.com/gpu is never advertised "
               "and GPU pods stay Pending. Fix: let the GPU Operator's device plugin serve the pool "
               f"(devicePlugin.enabled, no {DEVICE_PLUGIN_LABEL}=false on the pool), deploy the standalone "
               f"{STANDALONE_CHART} chart, or allocate GPUs with NVIDIA's DRA driver ({DRA_CHART}, "
               "resources.gpus.enabled, kubeletPlugin.tolerations for the pool's taints).", pool.urn)


def _driver_deployed(values: object, enabled: bool, selected: bool) -> bool:
    """Does the operator put a driver on the pool? The ClusterPolicy driver goes to every GPU node unless
    the NVIDIADriver CRD takes over, in which case only drivers whose selector matches the pool do."""
    crd = get(values, "driver", "nvidiaDriverCRD", "enabled", default=False) is True
    return selected or (enabled and not crd)


stack_policy_with_caveats(
    name=NAME,
    description="A node whose image ships the driver gets no operator driver, toolkit or device plugin, an "
                "operator-managed Ubuntu node is not excluded from the operator driver, and each GPU pool has one GPU "
                "allocator: a device plugin or NVIDIA's DRA driver, never both.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description="Caveats of preinstalled-driver-exclusive: an AL2023 GPU pool in a stack that holds no "
                        "Kubernetes object, whose device plugin is installed (or not) by another stack.",
)

"""gpu-operator-kubernetes-supported: the GPU Operator release supports the cluster's Kubernetes version.

The control plane version (EKS cluster `version`) is checked against the release's Amazon EKS range
and, for every OS among the operator-managed GPU pools, against that OS's range
(`Matrix.operator_kubernetes`). A release without a pinned chart version cannot be judged and is a
violation (pin it). When the stack holds no EKS cluster (an adopted cluster) there is no version
to check; the advisory twin `gpu-operator-kubernetes-supported-caveats` says so rather than passing
silently.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy_with_caveats
from ..inventory import build_inventory
from ..matrix import OsName, load_matrix
from ._matrix_common import ADVISORY_PREFIX, as_os, gpu_pools, judged, report_findings

NAME = "gpu-operator-kubernetes-supported"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    release = inv.operator
    if release is None:
        return
    if release.version is None:
        report(f"GPU Operator release {release.name!r} pins no chart version, so its Kubernetes support "
               "cannot be checked; set the Helm release `version` (e.g. v26.7.0).", release.urn)
        return
    kubernetes = inv.control_plane_version
    if kubernetes is None:
        report(f"{ADVISORY_PREFIX}the stack holds no EKS cluster resource, so GPU Operator {release.version} "
               "cannot be checked against the control plane's Kubernetes version; run `.venv/bin/gpu-platform matrix "
               "check` "
               "with --kubernetes for the adopted cluster.", release.urn)
        return
    context = f"GPU Operator {release.version} on a Kubernetes {kubernetes} control plane"
    seen: set[str] = set()
    report_findings(report, judged(matrix.operator_kubernetes, release.version, kubernetes), context=context,
                    urn=release.urn, advisory_prefix=True, seen=seen)
    systems: set[OsName] = set()
    for pool in gpu_pools(inv, matrix):
        os_name = as_os(pool.os)
        if pool.driver_source == "operator" and os_name is not None:
            systems.add(os_name)
    for os_name in sorted(systems):
        report_findings(report, judged(matrix.operator_kubernetes, release.version, kubernetes, os_name),
                        context=f"{context} ({os_name} GPU pools)", urn=release.urn, advisory_prefix=True, seen=seen)


stack_policy_with_caveats(
    name=NAME,
    description="The GPU Operator release supports the cluster's Kubernetes version on EKS and on its pools' OS.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description=(
        "Caveats of gpu-operator-kubernetes-supported: stacks where the control-plane version cannot be "
        "read, so the operator's Kubernetes range is not checked."
    ),
)

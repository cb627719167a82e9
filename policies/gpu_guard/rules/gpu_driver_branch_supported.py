"""gpu-driver-branch-supported: the GPU Operator release supports each operator-installed driver branch on its OS.

For every operator-managed GPU pool and every operator driver that serves it, the matrix
(`Matrix.operator_branch_support`) says whether the operator release supports that branch on the
pool's OS: R535 only on Ubuntu 22.04 and only up to the releases that still list it, Ubuntu 24.04
needs R570/R580 or newer. A driver in a supported branch but outside the release's tested component
list is a caveat, reported by the advisory twin `gpu-driver-branch-supported-caveats`. Pools whose
image bakes the driver are not
judged here (`preinstalled-driver-exclusive` keeps the operator's driver off them).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy_with_caveats
from ..inventory import build_inventory
from ..matrix import load_matrix
from ._matrix_common import as_os, gpu_pools, judged, operator_drivers_for, report_findings

NAME = "gpu-driver-branch-supported"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    release = inv.operator
    if release is None:
        return
    seen: set[str] = set()
    for pool in gpu_pools(inv, matrix):
        if pool.driver_source != "operator":
            continue
        specs = operator_drivers_for(inv, matrix, pool)
        if not specs:
            continue
        if release.version is None:
            message = (f"GPU Operator release {release.name!r} pins no chart version, so the driver branches "
                       "it supports cannot be checked; set the Helm release `version` (e.g. v26.7.0).")
            if message not in seen:
                seen.add(message)
                report(message, release.urn)
            continue
        os_name = as_os(pool.os)
        if os_name is None:
            report(f"GPU pool {pool.name!r} runs an operator-installed driver but its OS "
                   f"(gpu-platform.io/os={pool.os or 'missing'}) is not one the matrix knows, so branch support "
                   "cannot be checked; label the nodes with gpu-platform.io/os=ubuntu-22.04, ubuntu-24.04 or "
                   "ubuntu-26.04.",
                   pool.urn)
            continue
        for spec in specs:
            kind = "precompiled driver" if spec.use_precompiled else "driver"
            context = (f"GPU pool {pool.name!r} ({os_name}) runs {kind} {spec.version} under GPU Operator "
                       f"{release.version}")
            findings = judged(matrix.operator_branch_support, release.version, os_name, spec.version,
                                                      precompiled=spec.use_precompiled)
            report_findings(report, findings, context=context, urn=spec.urn, advisory_prefix=True, seen=seen)


stack_policy_with_caveats(
    name=NAME,
    description="The driver branch is supported by the GPU Operator release on the OS of every pool it serves.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description=(
        "Caveats of gpu-driver-branch-supported: drivers in a supported branch that the GPU Operator "
        "release's component matrix does not list."
    ),
)

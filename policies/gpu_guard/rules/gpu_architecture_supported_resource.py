"""gpu-architecture-supported-resource: the part of `gpu-architecture-supported` that judges one GPU pool.

A GPU node group, self-managed ASG or NodePool whose `gpu-platform.io/driver` label names its driver
(a full version, or the branch an image bakes) must not list an instance type whose GPU that driver
cannot drive (`Matrix.architecture_support`: B200 needs >= 570.133.20, V100 stops at R580). Judged on
the pool's own inputs before its step, so `pulumi up` refuses the pool before it exists. Pools whose
driver only the stack tells (the operator release's values, the chart default, a launch template's
instance type) are judged by `gpu-architecture-supported` after every step.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..matrix import load_matrix
from ._matrix_common import finding_text, judged
from .gpu_nodes_tainted import gpu_reason, pool_of

OF = "gpu-architecture-supported"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    pool = pool_of(args.resource_type, args.props, args.urn, args.name)
    if pool is None or gpu_reason(pool) is None or not pool.driver_label:
        return
    matrix = load_matrix()
    for instance_type in pool.instance_types:
        if not matrix.knows_family(instance_type):
            continue  # gpu-instance-type-known: the pack cannot see its GPU
        for finding in judged(matrix.architecture_support, instance_type, pool.driver_label):
            if finding.level == "mandatory":
                report(f"GPU pool '{args.name}' (gpu-platform.io/driver={pool.driver_label}) may launch "
                       f"{instance_type}: {finding_text(finding)}", args.urn)


resource_part(
    OF,
    description=("A GPU pool labelled with its driver lists only instance types whose GPU that driver supports; "
                 "judged on the pool alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

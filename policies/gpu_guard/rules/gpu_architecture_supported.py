"""gpu-architecture-supported: the driver of every GPU pool supports the GPU of every instance type it may launch.

For each GPU pool, each driver it runs (operator-installed or baked) and each instance type the pool
may launch (node group `instanceTypes`, launch template, Karpenter `node.kubernetes.io/instance-type`
requirement) that loads it (an unlabelled AL2023 pool pinned at v20260917 or later loads R595 on g7 and
R580 elsewhere: `Matrix.baked_driver_branch`), `Matrix.architecture_support` checks the GPU's
minimum driver (Blackwell B200 needs >= 570.133.20, RTX PRO 6000 >= 575.57.08) and last branch (V100
stops at R580). An instance type the
matrix does not know in a GPU pool (a CPU size listed by mistake, a typo) is a violation too: nothing
can be said of its GPU, and a GPU pool that launches it strands GPU workloads.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import build_inventory
from ..matrix import load_matrix
from ._matrix_common import TODAY_PROPERTY, config_today, gpu_pools, judged, pool_drivers, report_findings

NAME = "gpu-architecture-supported"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    today = config_today(args.get_config())
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    seen: set[str] = set()
    for pool in gpu_pools(inv, matrix):
        for driver in pool_drivers(inv, matrix, pool, today):
            for instance_type in filter(driver.runs_on, pool.instance_types):
                context = f"GPU pool {pool.name!r} may launch {instance_type} with {driver.describe()}"
                findings = judged(matrix.architecture_support, instance_type, driver.version)
                report_findings(report, findings, context=context, urn=pool.urn, advisory_prefix=True, seen=seen)


stack_policy(
    name=NAME,
    description="Every instance type a GPU pool may launch has a GPU whose architecture the pool's driver supports.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

"""gpu-architecture-supported: the driver of every GPU pool supports the GPU of every instance type it may launch.

For each GPU pool, each driver it runs (operator-installed or baked) and each instance type the pool
may launch (node group `instanceTypes`, launch template, Karpenter `node.kubernetes.io/instance-type`
requirement) that loads it (an unlabelled AL2023 pool pinned at v20260917 or later loads R595 on g7 and
R580 elsewhere: `Matrix.baked_driver_branch`), `Matrix.architecture_support` checks the GPU's
minimum driver (Blackwell B200 needs >= 570.133.20, RTX PRO 6000 >= 575.57.08) and last branch (V100
stops at R580, M60 at R580, K80 at R470). A size its family does not have (g5.huge) is a violation too.

A pool classed as an NVIDIA GPU pool (`gpu_nodes_tainted.gpu_reason`: NVIDIA AMI type, the label contract, GPU
requirements; or the nvidia.com/gpu taint) that may launch a family whose accelerator is no NVIDIA GPU (g4ad's AMD
Radeon Pro V520, matrix `other_accelerator_families`) is refused: no NVIDIA driver runs there. A family the matrix
does not know at all goes to the advisory twin `gpu-architecture-supported-unseen` (mandatory in prod,
policies/config/prod.json): the pack cannot see its GPU, so nothing of it is judged, and the twin names the type,
never silence. CPU pools (nothing classes them as GPU pools) are not judged. The families the matrix records are
every GPU family of EC2's accelerated-computing documentation, current and previous generation
(https://docs.aws.amazon.com/ec2/latest/instancetypes/ac.html, https://docs.aws.amazon.com/ec2/latest/instancetypes/pg.html).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import build_inventory
from ..matrix import load_matrix
from ._matrix_common import (
    TODAY_PROPERTY,
    config_today,
    gpu_classed_pools,
    gpu_pools,
    judged,
    pool_drivers,
    report_findings,
)

NAME = "gpu-architecture-supported"
UNSEEN = f"{NAME}-unseen"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    today = config_today(args.get_config())
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    seen: set[str] = set()
    for pool in gpu_pools(inv, matrix):
        for driver in pool_drivers(inv, matrix, pool, today):
            for instance_type in filter(driver.runs_on, pool.instance_types):
                if not matrix.knows_family(instance_type) or matrix.other_accelerator(instance_type):
                    continue  # the -unseen twin, and the loop below
                context = f"GPU pool {pool.name!r} may launch {instance_type} with {driver.describe()}"
                findings = judged(matrix.architecture_support, instance_type, driver.version, today=today)
                report_findings(report, findings, context=context, urn=pool.urn, advisory_prefix=True, seen=seen)
    for pool, reason in gpu_classed_pools(inv, matrix):
        for instance_type in pool.instance_types:
            if matrix.other_accelerator(instance_type):
                findings = matrix.architecture_support(instance_type, "580")  # the finding names no driver
                report_findings(report, findings, context=f"GPU pool {pool.name!r} ({reason}) may launch "
                                f"{instance_type}", urn=pool.urn, advisory_prefix=True, seen=seen)


def _validate_unseen(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    families = ", ".join(sorted({row.family for row in matrix.data.instance_families}))
    for pool, reason in gpu_classed_pools(inv, matrix):
        unknown = [t for t in pool.instance_types if not matrix.knows_family(t)]
        if unknown:
            report(f"GPU pool {pool.name!r} ({reason}) may launch {', '.join(unknown)}: unknown GPU instance type, "
                   "of no family the matrix records, so nothing of its GPU is judged (the driver branches that drive "
                   "it, the CUDA it runs, its GPU count). To let the pack judge it: add its family to "
                   "policies/gpu_guard/matrix.yaml instance_families with its source if it is a GPU family, or use a "
                   f"known GPU family: {families}.", pool.urn)


stack_policy(
    name=NAME,
    description="Every instance type a GPU pool may launch has a GPU whose architecture the pool's driver supports.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)
stack_policy(
    UNSEEN,
    "Advisory twin of gpu-architecture-supported (mandatory in prod): a GPU pool that may launch an instance type of "
    "no family the matrix records, whose GPU is therefore not judged; it names the type.",
    _validate_unseen,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    companion_of=NAME,
)

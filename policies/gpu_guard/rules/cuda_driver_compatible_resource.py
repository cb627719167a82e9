"""cuda-driver-compatible-resource: the blocking part of `cuda-driver-compatible`, judged on the workload alone.

A workload that declares the GPU pools it can reach (`gpu-platform.io/reachable-pools`, see
`_reach_annotation`) is judged before it is created: each GPU container's CUDA runtime (image tag, else
the `gpu-platform.io/cuda` label) against each declared pool's driver with the same matrix query the stack
policy uses (`Matrix.cuda_driver`; a baked branch judged as the driver of the pool's declared image release
when the matrix's row of that release is confirmed, else as its first release; forward compatibility only
where every declared instance type is a data-center GPU). Only mandatory findings are reported here: the
engine gives a policy one level, and the caveats (minor-version and forward compatibility) come from
`cuda-driver-compatible-caveats` once the stack's objects are known (an update preview). So a first
preview of a new service already stops a CUDA runtime its pools' drivers refuse.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..matrix import load_matrix
from ._matrix_common import TODAY_PROPERTY, config_today, container_cuda, judged, judged_driver, report_findings
from ._reach_annotation import declared_reach

OF = "cuda-driver-compatible"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    today = config_today(args.get_config())
    seen: set[str] = set()
    for reach in declared_reach(args):
        workload = reach.workload
        for container in (c for c in workload.containers if c.gpus > 0):
            cuda = container_cuda(matrix, workload, container.image)
            if cuda is None:
                continue  # gpu-workload-cuda-declared's finding
            for pool in reach.pools:
                known = [matrix.instance_type(t) for t in pool.instance_types]
                data_center = bool(known) and all(t is not None and t.data_center for t in known)
                as_judged = judged_driver(matrix, pool.driver, os=pool.os, image_version=pool.image_version,
                                          kubernetes=pool.kubernetes, instance_types=pool.instance_types, today=today)
                release = as_judged.release
                context = (f"{workload.kind} {workload.name!r} container {container.name!r} (CUDA {cuda.cuda} from "
                           f"{cuda.origin}) declares GPU pool {pool.name!r} with driver {pool.driver}"
                           f"{as_judged.note}")
                findings = judged(matrix.cuda_driver, cuda.cuda, release, forward_compat_image=cuda.forward_compat,
                                  admitted_branches=cuda.admitted_branches, data_center_gpu=data_center)
                report_findings(report, [f for f in findings if f.level == "mandatory"], context=context,
                                urn=args.urn, advisory_prefix=False, seen=seen)


resource_part(
    OF,
    description=("A workload that declares the GPU pools it can reach runs a CUDA runtime each pool's driver "
                 "accepts; judged on the workload alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

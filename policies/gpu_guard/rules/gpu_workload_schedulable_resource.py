"""gpu-workload-schedulable-resource: the part of `gpu-workload-schedulable` judged on the workload alone.

A workload that declares the GPU pools it can reach (`gpu-platform.io/reachable-pools`, see
`_reach_annotation`) and requests `nvidia.com/gpu` must tolerate the GPU taint, declare at least one
pool, and have at least one declared instance type with that many GPUs (counts from the matrix; a pool
that lists no instance types cannot be counted and is taken as able to fit). Judged before the workload
is created, so a first preview of a new service already stops "Insufficient nvidia.com/gpu". An
unreadable annotation is a finding too: the platform wrote it, so it must parse.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..inventory import tolerates
from ..matrix import load_matrix
from ._reach_annotation import REACHABLE_POOLS_ANNOTATION, DeclaredPool, declared_reach
from .gpu_workload_schedulable import GPU_TAINT

OF = "gpu-workload-schedulable"


def _sizes(pool: DeclaredPool) -> list[tuple[str, int]]:
    matrix = load_matrix()
    return [(t, known.gpus) for t in pool.instance_types if (known := matrix.instance_type(t)) is not None]


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for reach in declared_reach(args):
        workload = reach.workload
        if reach.error is not None:
            report(f"{workload.kind} {workload.name!r}: {reach.error}; fix: a JSON list of "
                   '{"pool", "os", "driver", "driverSource", "instanceTypes"} (optional "kubernetes", '
                   '"imageVersion")', args.urn)
            continue
        if workload.gpus <= 0:
            continue
        where = f"{workload.kind} {workload.name!r} requests {workload.gpus} nvidia.com/gpu"
        if not tolerates(workload.tolerations, GPU_TAINT):
            report(f"{where} but does not tolerate the GPU taint {GPU_TAINT}; add the toleration "
                   "{key: nvidia.com/gpu, operator: Equal, value: \"true\", effect: NoSchedule}.", args.urn)
            continue
        if not reach.pools:
            report(f"{where} but its {REACHABLE_POOLS_ANNOTATION} annotation declares no GPU pool: it would stay "
                   "Pending; give the service nodePools that exist.", args.urn)
            continue
        fits = [p for p in reach.pools if not p.instance_types
                or any(gpus >= workload.gpus for _, gpus in _sizes(p))]
        if not fits:
            capacity = "; ".join(f"{p.name!r}: " + (", ".join(f"{t} ({g})" for t, g in _sizes(p))
                                                     or "no GPU instance type") for p in reach.pools)
            report(f"{where} but no instance type of the pools it declares has that many GPUs ({capacity}); lower "
                   "gpusPerReplica or add a pool with a larger size: it would stay Pending with "
                   "\"Insufficient nvidia.com/gpu\".", args.urn)


resource_part(
    OF,
    description=("A GPU workload that declares the GPU pools it can reach tolerates the GPU taint and fits an "
                 "instance type of one of them; judged on the workload alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

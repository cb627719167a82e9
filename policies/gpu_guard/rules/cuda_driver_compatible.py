"""cuda-driver-compatible: every GPU workload's CUDA runtime runs on the driver of every pool it can reach.

For each container that requests `nvidia.com/gpu`, its CUDA runtime (image tag, else the
`gpu-platform.io/cuda` label) is judged by `Matrix.cuda_driver` against every driver of every GPU
pool the workload can be scheduled on (scheduler-exact reachability): at or above the CUDA
release's minimum driver is fine; same major above the minor-version-compatibility floor, or
across a major through forward compatibility (the image carries `cuda-compat`, the GPU is a
data-center GPU and the image's `NVIDIA_REQUIRE_CUDA` admits the branch) works with caveats;
anything else fails. The image's `NVIDIA_REQUIRE_CUDA` (per nvidia/cuda tag, matrix.yaml image_require_cuda)
is checked before minor version compatibility, where the container toolkit checks it: legacy mode does
(nvidia-container-cli), CDI mode does not (matrix.yaml toolkit_require_check, with the toolkit source lines).
Operator-managed pools run the mode of the GPU Operator values' `cdi.enabled`, else that release's chart
default (CDI from v25.10.0); pools whose image brings its own toolkit are judged as legacy (assumed).

The policy is mandatory, and the engine gives a policy one level: the caveat outcomes are reported
by its advisory twin `cuda-driver-compatible-caveats` (`base.stack_policy_with_caveats`).

Data-center GPU: forward compatibility counts only when every instance type the workload can reach
in the pool is a data-center GPU; a pool whose instance types are not listed (e.g. a Karpenter pool
selecting by family) is treated as not proven data-center. Workloads whose CUDA is unknown are left
to `gpu-workload-cuda-declared`. A pool that declares only its baked branch (`580`) is judged as the
driver its pinned image release ships (Karpenter alias `bottlerocket@v1.68.0`: 580.178.04) when the matrix's
row of that release is confirmed (`Matrix.driver_for_image`); otherwise (no pinned release, an unconfirmed
row) as the branch's first known release (580.65.06): the weakest driver the image could carry. The message
says which.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from ..base import stack_policy_with_caveats
from ..inventory import Inventory, Reach, Workload, build_inventory
from ..matrix import Finding, Matrix, ToolkitMode, load_matrix
from ..props import get
from ..versions import parse_kube_minor
from ._dockerfile import Builds
from ._matrix_common import (
    ADVISORY_PREFIX,
    TODAY_PROPERTY,
    ContainerCuda,
    JudgedDriver,
    PoolDriver,
    as_os,
    config_today,
    gpu_container_reaches,
    judged,
    judged_driver,
    pool_drivers,
    pool_kubernetes,
    report_findings,
)

NAME = "cuda-driver-compatible"


@dataclass
class _Memo:
    """What one validation asks many times: each pool's drivers (per pool), each CUDA x driver verdict (per value).

    A stack of N workloads and P pools asks N x P times; the answers depend on far fewer inputs.
    """

    by_pool: dict[str, list[PoolDriver]] = field(default_factory=dict)  # pool urn -> its drivers
    by_value: dict[tuple[object, ...], list[Finding]] = field(default_factory=dict)
    # (pool, driver, types) -> what the pool can take of a suggested driver (Matrix.pool_takes)
    takes: dict[tuple[object, ...], Callable[[str], str | None]] = field(default_factory=dict)
    judged_as: dict[tuple[object, ...], JudgedDriver] = field(default_factory=dict)  # (pool, driver, types)


def _judge(matrix: Matrix, inv: Inventory, workload: Workload, reach: Reach, cuda: ContainerCuda, *,
           container: str, today: date, report: ReportViolation, seen: set[str], memo: _Memo) -> None:
    types = reach.instance_types or reach.pool.instance_types
    known = [matrix.instance_type(t) for t in types]
    data_center = bool(known) and all(t is not None and t.data_center for t in known)
    if reach.pool.urn not in memo.by_pool:
        memo.by_pool[reach.pool.urn] = pool_drivers(inv, matrix, reach.pool, today)
    if not memo.by_pool[reach.pool.urn] and reach.pool.driver_source != "operator":
        why = ("EKS Auto Mode picks the node AMI and the NVIDIA driver in it" if reach.pool.auto_mode else
               "no gpu-platform.io/os or gpu-platform.io/driver label, and no AMI type or EC2NodeClass alias that "
               "names a baked-driver image")
        message = (f"{ADVISORY_PREFIX}{workload.kind} {workload.name!r} container {container!r} (CUDA {cuda.cuda} "
                   f"from {cuda.origin}) can run on GPU pool {reach.pool.name!r}, whose driver the pack cannot tell "
                   f"({why}), so CUDA against it is not judged. Fix: label the pool's nodes gpu-platform.io/driver="
                   "<the driver branch or version its image loads> (CONFIG.md section 2).")
        if message not in seen:
            seen.add(message)
            report(message, workload.urn)
    for driver in memo.by_pool[reach.pool.urn]:
        mode = _toolkit_mode(inv, matrix) if driver.source == "operator" else None
        reached = tuple(t for t in types if driver.runs_on(t))
        driver_key = (reach.pool.urn, driver.version, reached)
        if driver_key not in memo.judged_as:
            memo.judged_as[driver_key] = judged_driver(
                matrix, driver.version, os=reach.pool.os, image_version=reach.pool.image_version,
                kubernetes=pool_kubernetes(inv, reach.pool), instance_types=reached, today=today,
            )
        as_judged = memo.judged_as[driver_key]
        release = as_judged.release
        context = (f"{workload.kind} {workload.name!r} container {container!r} (CUDA {cuda.cuda} from "
                   f"{cuda.origin}) can run on GPU pool {reach.pool.name!r} with {driver.describe()}{as_judged.note}")
        if driver_key not in memo.takes:
            memo.takes[driver_key] = _pool_takes(matrix, inv, reach, driver, reached=reached, today=today)
        key = (cuda.cuda, release, cuda.forward_compat, cuda.admitted_branches, data_center, mode, driver_key)
        if key not in memo.by_value:
            memo.by_value[key] = judged(matrix.cuda_driver, cuda.cuda, release,
                                        forward_compat_image=cuda.forward_compat,
                                        admitted_branches=cuda.admitted_branches, data_center_gpu=data_center,
                                        toolkit_mode=mode, pool=memo.takes[driver_key], today=today)
        report_findings(report, memo.by_value[key], context=context, urn=workload.urn, advisory_prefix=True,
                        seen=seen)


def _pool_takes(matrix: Matrix, inv: Inventory, reach: Reach, driver: PoolDriver, *, reached: tuple[str, ...],
                today: date) -> Callable[[str], str | None]:
    """What the pool can take of a driver the CUDA finding would suggest: one its operator release lists and its OS
    publishes (the branch, on a baked image), which `Matrix.check` refuses on none of the pool's instance types.
    A pool whose OS the pack cannot tell takes any (only the lifecycle filter applies)."""
    os_name = as_os(reach.pool.os)
    if os_name is None:
        return lambda version: version
    release = inv.operator.version if inv.operator is not None and driver.source == "operator" else None
    operator = release if release is not None and matrix.operator(release) is not None else None
    try:
        kubernetes = pool_kubernetes(inv, reach.pool)
        if kubernetes is not None:
            parse_kube_minor(kubernetes)
    except ValueError:
        kubernetes = None
    return matrix.pool_takes(
        os=os_name, operator=operator, kubernetes=kubernetes, instance_types=reached or (None,),
        precompiled=driver.precompiled, image_version=reach.pool.image_version, today=today,
        branch_pin=reach.pool.driver_branch_pin, pool_kind=reach.pool.kind, driver=driver.version,
    )


def _toolkit_mode(inv: Inventory, matrix: Matrix) -> ToolkitMode | None:
    """The GPU Operator toolkit's injection mode: the values' cdi.enabled, else the release's chart default."""
    release = inv.operator
    if release is None:
        return None
    enabled = get(release.values, "cdi", "enabled")
    cdi = enabled if isinstance(enabled, bool) else None
    return matrix.toolkit_mode_for_operator(release.version, cdi)


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    today = config_today(args.get_config())
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    seen: set[str] = set()
    memo = _Memo()
    for item in gpu_container_reaches(inv, matrix, Builds(args.resources)):
        for reach in item.reaches:
            _judge(matrix, inv, item.workload, reach, item.cuda, container=item.container, today=today,
                   report=report, seen=seen, memo=memo)


stack_policy_with_caveats(
    name=NAME,
    description="Every GPU workload's CUDA runtime runs on the driver of every pool the workload can be scheduled on.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description=(
        "Caveats of cuda-driver-compatible: CUDA runtimes that run on a pool's driver only through "
        "minor-version or forward compatibility, with what breaks there."
    ),
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

"""gpu-driver-branch-lifecycle: no GPU pool runs a driver branch past NVIDIA's end of life (R535 ended June 2026).

Every driver a GPU pool runs is judged: operator-installed drivers (Helm values or `NVIDIADriver`)
on operator-managed pools, the baked branch on Bottlerocket / AL2023 NVIDIA pools. The date is the
policy config `today` (ISO date) when set, else the day the policy runs. Advisory by default,
mandatory in prod; findings are reported at the policy's level (no prefix).

A baked pool whose pinned image release the gate cannot read (a `releaseVersion` or alias in no form EKS, Karpenter
or an AMI name writes) loads a driver nobody can name: no branch is judged for it (never the newest image's, a
guess), and the advisory twin `gpu-driver-branch-lifecycle-unseen` names the value and the forms that read.
"""

from __future__ import annotations

import typing

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import build_inventory
from ..matrix import OS_NAMES, Matrix, OsName, load_matrix
from ._matrix_common import (
    TODAY_PROPERTY,
    PoolDriver,
    as_os,
    config_today,
    gpu_pools,
    judged,
    pool_drivers,
    report_findings,
    unreadable_image_version,
)

NAME = "gpu-driver-branch-lifecycle"
UNSEEN = f"{NAME}-unseen"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    today = config_today(args.get_config())
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    by_driver: dict[tuple[str, str], list[PoolDriver]] = {}
    for pool in gpu_pools(inv, matrix):
        for driver in pool_drivers(inv, matrix, pool, today):
            key = (driver.version, driver.spec.urn if driver.spec else driver.pool.urn)
            by_driver.setdefault(key, []).append(driver)
    for (version, urn), drivers in sorted(by_driver.items()):
        pools = ", ".join(sorted(repr(d.pool.name) for d in drivers))
        context = f"GPU pool(s) {pools} run {drivers[0].describe()} (judged on {today.isoformat()})"
        report_findings(report, judged(matrix.branch_lifecycle, version, today, available=_available(matrix, drivers)),
                        context=context, urn=urn, advisory_prefix=False)


def _available(matrix: Matrix, drivers: list[PoolDriver]) -> set[int] | None:
    """The branches every one of these pools can move to on its OS (an Ubuntu 26.04 pool has no R580 image);
    None where a pool's OS is not known (the advice then names every live branch)."""
    oses = {d.pool.os for d in drivers}
    if not oses or any(os not in OS_NAMES for os in oses):
        return None
    return set.intersection(*(matrix.branches_available(typing.cast(OsName, os)) for os in oses))


def _validate_unseen(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    for pool in gpu_pools(inv, matrix):
        os_name = as_os(pool.os)
        if pool.driver_source != "image" or pool.driver_label or os_name is None:
            continue
        why = unreadable_image_version(pool, os_name)
        if why is not None:
            report(f"GPU pool {pool.name!r} pins its {os_name} image to {pool.image_version!r}, which the gate cannot "
                   f"read as a release ({why}): the driver branch its nodes load is not judged (not its end of life, "
                   "nor the GPU architecture or CUDA it supports). To let the pack judge it: pin the release in one "
                   "of those forms.", pool.urn)


stack_policy(
    name=NAME,
    description="The driver branch every GPU pool runs is not past NVIDIA's end of life.",
    validate=_validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)
stack_policy(
    UNSEEN,
    "Advisory twin of gpu-driver-branch-lifecycle: a baked GPU pool whose pinned image release the gate cannot read, "
    "so no driver branch is judged for it; it names the value.",
    _validate_unseen,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)

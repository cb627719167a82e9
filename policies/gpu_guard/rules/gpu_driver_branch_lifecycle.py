"""gpu-driver-branch-lifecycle: no GPU pool runs a driver branch past NVIDIA's end of life (R535 ended June 2026).

Every driver a GPU pool runs is judged: operator-installed drivers (Helm values or `NVIDIADriver`)
on operator-managed pools, the baked branch on Bottlerocket / AL2023 NVIDIA pools. The date is the
policy config `today` (ISO date) when set, else the day the policy runs. Advisory by default,
mandatory in prod; findings are reported at the policy's level (no prefix).
"""

from __future__ import annotations

import typing

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import build_inventory
from ..matrix import OS_NAMES, Matrix, OsName, load_matrix
from ._matrix_common import TODAY_PROPERTY, PoolDriver, config_today, gpu_pools, judged, pool_drivers, report_findings

NAME = "gpu-driver-branch-lifecycle"


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


stack_policy(
    name=NAME,
    description="The driver branch every GPU pool runs is not past NVIDIA's end of life.",
    validate=_validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

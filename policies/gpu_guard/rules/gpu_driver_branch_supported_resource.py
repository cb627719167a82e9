"""gpu-driver-branch-supported-resource: the part of `gpu-driver-branch-supported` that judges one resource.

A GPU pool whose labels name an operator-installed driver on an Ubuntu OS, or an `NVIDIADriver`
whose node selector names the OS, must name a driver branch that some GPU Operator release supports
on that OS (R535 was never built for Ubuntu 24.04). The GPU Operator release alone must support its
`values.driver.version` branch on at least one OS. Judged before the resource's step, so `pulumi up`
refuses the pool before it exists. Whether the release the stack runs supports the branch on each
pool's OS needs the release and the pools together: `gpu-driver-branch-supported` judges that after
every step.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..matrix import Finding, Matrix, OsName, load_matrix
from ._declared_drivers import OPERATOR_OS, declared_drivers
from ._matrix_common import finding_text, judged

OF = "gpu-driver-branch-supported"


def _blocking(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.level == "mandatory"]


def _supports(matrix: Matrix, release: str, os_name: OsName, findings: list[Finding]) -> bool:
    """The release supports the branch on the OS: it lists the OS at all (an unlisted OS is only an advisory
    for the pool, the image decides the deploy, but it is no support for the branch) and finds nothing blocking."""
    row = matrix.operator(release)
    return row is not None and os_name in row.branches and not _blocking(findings)


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    drivers = declared_drivers(args.resource_type, args.props, args.urn, args.name)
    if not drivers:
        return
    matrix = load_matrix()
    releases = matrix.operators()
    for driver in drivers:
        if driver.operator is not None:
            if matrix.operator(driver.operator) is None:
                continue  # an unknown release is the stack policy's finding
            per_os = {os_name: judged(matrix.operator_branch_support, driver.operator, os_name, driver.version,
                                      precompiled=driver.precompiled) for os_name in OPERATOR_OS}
            if not any(_supports(matrix, driver.operator, os_name, fs) for os_name, fs in per_os.items()):
                texts = " ".join(finding_text(f) for fs in per_os.values() for f in _blocking(fs))
                report(f"{driver.what}: GPU Operator {driver.operator} supports this branch on no OS: {texts}",
                       args.urn)
            continue
        if driver.os is None:
            continue
        verdicts = [(release, judged(matrix.operator_branch_support, release, driver.os, driver.version,
                                     precompiled=driver.precompiled)) for release in releases]
        if verdicts and not any(_supports(matrix, release, driver.os, fs) for release, fs in verdicts):
            newest = _blocking(verdicts[-1][1]) or verdicts[-1][1]
            report(f"{driver.what}: no GPU Operator release supports this driver branch on {driver.os}. "
                   + " ".join(finding_text(f) for f in newest), args.urn)


resource_part(
    OF,
    description=("A GPU pool or NVIDIADriver names a driver branch some GPU Operator release supports on its OS, "
                 "and the GPU Operator release supports its own driver branch somewhere; judged on the resource "
                 "alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

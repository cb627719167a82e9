"""gpu-driver-image-published-resource: the part of `gpu-driver-image-published` that judges one resource.

A GPU pool whose labels name an operator-installed driver and an Ubuntu OS, an `NVIDIADriver` whose
node selector names the OS, or the GPU Operator release itself (`values.driver.version`, judged
against every OS the operator builds drivers for) must name a driver whose container image NVIDIA
published (`Matrix.driver_image`). Judged before the resource's step, so `pulumi up` refuses the
pool or the release before it exists. Precompiled and branch-only drivers, the chart's default
driver and which pools an `NVIDIADriver` reaches need the whole stack: `gpu-driver-image-published`
judges those (and the registry check) after every step.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs

from ..base import resource_part
from ..matrix import load_matrix
from ..versions import parse_driver_version
from ._declared_drivers import OPERATOR_OS, declared_drivers
from ._matrix_common import TODAY_PROPERTY, config_today, finding_text, judged

OF = "gpu-driver-image-published"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    drivers = declared_drivers(args.resource_type, args.props, args.urn, args.name)
    if not drivers:
        return
    matrix = load_matrix()
    today = config_today(args.get_config())
    for driver in drivers:
        try:
            branch_only = parse_driver_version(driver.version).is_branch_only
        except ValueError:
            branch_only = False  # judged below: the parser's message names the value
        if driver.precompiled or branch_only:
            continue
        oses = (driver.os,) if driver.os is not None else OPERATOR_OS
        blocking = {os_name: [f for f in judged(matrix.driver_image, driver.version, os_name, today=today)
                              if f.level == "mandatory"] for os_name in oses}
        if all(blocking.values()):
            texts = " ".join(finding_text(f) for os_name in oses for f in blocking[os_name])
            scope = "" if driver.os is not None else " for any OS the GPU Operator builds drivers for"
            report(f"{driver.what}: no published driver image{scope}: {texts}", args.urn)


resource_part(
    OF,
    description=("A GPU pool, NVIDIADriver or GPU Operator release names a driver whose container image NVIDIA "
                 "published for its OS; judged on the resource alone, before it is created."),
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

"""one-driver-per-pool: each operator-managed GPU pool is served by exactly one operator driver.

For every GPU pool whose driver the GPU Operator installs (`gpu-platform.io/driver-source:
operator`, or Ubuntu), the operator drivers whose node selector matches the pool's nodes (the
ClusterPolicy default from the Helm values, or the chart's default driver when the values pin none,
and each `NVIDIADriver`) must be exactly one: none leaves the GPUs without a driver, two or more
`NVIDIADriver` selectors overlapping on one pool fight over its nodes. The pool's
`gpu-platform.io/driver` label, when set, must name the driver that serves it (the branch suffices
for a precompiled driver). Pools whose image bakes the driver are judged by
`preinstalled-driver-exclusive`.

In a first preview the operator release and the NVIDIADriver objects reach this policy with no
properties (`props.properties_pending`): it waits, rather than judge the operator absent.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import DRIVER_LABEL, HELM_RELEASE_TYPES, NVIDIA_DRIVER, POOL_LABEL, DriverSpec, Pool, build_inventory
from ..matrix import load_matrix
from ..versions import parse_driver_version
from ._matrix_common import driver_origin, gpu_pools, operator_drivers_for

NAME = "one-driver-per-pool"


def _name(spec: DriverSpec) -> str:
    return f"driver {spec.version} from {driver_origin(spec)}"


def _label_agrees(label: str, spec: DriverSpec) -> bool:
    if label == spec.version:
        return True
    try:
        declared, served = parse_driver_version(label), parse_driver_version(spec.version)
    except ValueError:
        return False
    if spec.use_precompiled or served.is_branch_only or declared.is_branch_only:
        return declared.branch == served.branch
    return declared == served


def _judge(pool: Pool, specs: list[DriverSpec], has_operator: bool, report: ReportViolation) -> None:
    where = f"GPU pool {pool.name!r} ({pool.os or 'operator-managed'})"
    if not has_operator:
        report(f"{where} expects its driver from the GPU Operator, but the stack has no gpu-operator Helm "
               "release; add the operator release, or use a node image that ships the driver "
               "(gpu-platform.io/driver-source=image).", pool.urn)
    elif not specs:
        report(f"{where} is served by no operator driver: driver.enabled=false or no NVIDIADriver node "
               f"selector matches its nodes; add an NVIDIADriver whose nodeSelector matches {POOL_LABEL}="
               f"{pool.name}, or enable the default driver.", pool.urn)
    elif len(specs) > 1:
        names = ", ".join(_name(s) for s in specs)
        report(f"{where} is selected by {len(specs)} operator drivers ({names}); their node selectors "
               f"overlap on this pool. Narrow the nodeSelectors (e.g. {POOL_LABEL}) so exactly one matches.", pool.urn)
    elif pool.driver_label and not _label_agrees(pool.driver_label, specs[0]):
        spec = specs[0]
        report(f"{where} is labelled {DRIVER_LABEL}={pool.driver_label} but {_name(spec)} serves it; set the "
               f"label to {spec.version} or point the driver at the pool.", pool.urn)


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    if inv.pending_of((*HELM_RELEASE_TYPES, NVIDIA_DRIVER)):
        # A Helm release or NVIDIADriver not known yet (first preview) may be the operator or a driver of any
        # pool: every operator-managed pool's verdict waits (`kubernetes-objects-pending` says so).
        return
    has_operator = inv.operator is not None
    for pool in gpu_pools(inv, matrix):
        if pool.driver_source == "operator":
            _judge(pool, operator_drivers_for(inv, matrix, pool), has_operator, report)


stack_policy(
    name=NAME,
    description="Each GPU pool is served by exactly one driver version: NVIDIADriver node selectors do not overlap, "
                "and no pool is left without one.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

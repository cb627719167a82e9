"""kubernetes-version-lifecycle: the EKS control plane is inside Amazon EKS standard support.

Judges each EKS cluster resource (`aws:eks/cluster:Cluster`, pulumi-eks `eks:index:Cluster`) by its
`version` with `Matrix.eks_lifecycle` on the policy config `today` (ISO date; default: the day the
policy runs): extended support, past extended support, unknown or not-yet-released versions are
reported at the policy's level (advisory, mandatory in prod). A cluster without `version` gets the
EKS default, the newest release, and is not judged.

The upgrade policy's support type (`upgradePolicy.supportType`, see `gpu_guard.eks_support`) shapes
the message of a version past standard support: under STANDARD EKS will upgrade the control plane
itself (the config check at program start refuses it); under EXTENDED the message names the
extended-support price.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs

from ..base import resource_policy
from ..eks_support import support_type_of, with_support_type
from ..inventory import EKS_CLUSTER_TYPES, get
from ..matrix import load_matrix
from ._matrix_common import TODAY_PROPERTY, config_today, judged, report_findings

NAME = "kubernetes-version-lifecycle"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type not in EKS_CLUSTER_TYPES:
        return
    version = get(args.props, "version")
    if version is None:
        return
    today = config_today(args.get_config())
    context = f"EKS cluster {args.name!r} runs Kubernetes {version} (judged on {today.isoformat()})"
    findings = with_support_type(judged(load_matrix().eks_lifecycle, str(version), today), support_type_of(args.props))
    report_findings(report, findings, context=context, urn=None, advisory_prefix=False)


resource_policy(
    name=NAME,
    description="The EKS control plane is inside Amazon EKS standard support.",
    validate=_validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    config_schema=PolicyConfigSchema(properties={"today": TODAY_PROPERTY}),
)

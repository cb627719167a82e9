"""alb-waf-attached: an internet-facing ALB has a WAFv2 web ACL (advisory; prod mandatory).

Sources:
- `alb.ingress.kubernetes.io/wafv2-acl-arn` (regional WAFv2 only; `none` removes the ACL):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#wafv2-acl-arn
- EKS Best Practices, load balancing: https://docs.aws.amazon.com/eks/latest/best-practices/load-balancing.html
"""

from __future__ import annotations

from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import get
from .alb_https_only import ANNOTATION, annotation, internet_facing_alb, is_ingress

WAF_ANNOTATION = ANNOTATION + "wafv2-acl-arn"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#wafv2-acl-arn
WAF_DISABLED = "none"
WAFV2_REGIONAL_ARN = "arn:aws:wafv2:"


def validate(args: Any, report_violation: ReportViolation) -> None:
    if not is_ingress(args.resource_type) or not internet_facing_alb(args.props):
        return
    name = get(args.props, "metadata", "name", default=args.name)
    acl = annotation(args.props, WAF_ANNOTATION)
    fix = (f"Fix: {WAF_ANNOTATION}: arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id> "
           "(a regional WAFv2 web ACL, e.g. with the AWS managed common rule set)")
    if not acl or acl == WAF_DISABLED:
        state = "not set" if acl is None else f"{acl!r}"
        report_violation(f"Internet-facing ALB Ingress '{name}' has no WAFv2 web ACL ({WAF_ANNOTATION} is "
                         f"{state}). {fix}.", args.urn)
    elif not acl.startswith(WAFV2_REGIONAL_ARN) or ":regional/webacl/" not in acl:
        report_violation(f"Internet-facing ALB Ingress '{name}' has {WAF_ANNOTATION} {acl!r}, which is not a regional "
                         f"WAFv2 web ACL ARN (ALBs take regional ACLs only). {fix}.", args.urn)


POLICY = resource_policy(
    "alb-waf-attached",
    "An internet-facing ALB Ingress has a regional WAFv2 web ACL.",
    validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
)

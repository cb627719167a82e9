"""alb-waf-attached: an internet-facing ALB has a WAFv2 web ACL (advisory; prod mandatory).

Cannot see, cannot block: without the annotation the web ACL may still come from the IngressClass's
IngressClassParams (`spec.wafv2AclArn`) or from an AWS Firewall Manager policy of the account's organization,
neither of which a resource policy sees. The advisory twin `alb-waf-attached-unseen` says so and names the
annotation; an annotation that removes the ACL (`none`) or is not a regional WAFv2 ARN is judged here.
Prod keeps prod's promise (issue 45): `policies/config/prod.json` raises the twin too, so a prod internet-facing
ALB must state its web ACL on the Ingress; a team whose WAF comes from Firewall Manager leaves the twin out of its
prod policy config (docs/policy-pack.md).

Sources:
- IngressClassParams `spec.wafv2AclArn`: https://github.com/kubernetes-sigs/aws-load-balancer-controller/pull/4312
- AWS Firewall Manager WAF policies (web ACLs associated with an account's ALBs):
  https://docs.aws.amazon.com/waf/latest/developerguide/waf-policies.html
- `alb.ingress.kubernetes.io/wafv2-acl-arn` (regional WAFv2 only; `none` removes the ACL):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#wafv2-acl-arn
- EKS Best Practices, load balancing: https://docs.aws.amazon.com/eks/latest/best-practices/load-balancing.html
"""

from __future__ import annotations

from typing import Any

from ..base import UNSEEN_MARK, EnforcementLevel, ReportViolation, in_our_project, resource_policy_with_unseen
from ..inventory import get
from .alb_https_only import ANNOTATION, annotation, internet_facing_alb, is_ingress

WAF_ANNOTATION = ANNOTATION + "wafv2-acl-arn"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#wafv2-acl-arn
WAF_DISABLED = "none"
WAFV2_REGIONAL_ARN = "arn:aws:wafv2:"


# This project's inference services set the annotation from their stack key (components/inference/ingress.py); a
# stack key exists only in this project's stacks, so another program's Ingress is told the annotation itself.
OUR_SERVICE = "gpu-platform:inference:InferenceService$"
STACK_KEY = "inferenceServices[].ingress.wafAclArn"


def _where(urn: str) -> str:
    """Where the user sets the web ACL: our stack key for an inference service of this project, else the annotation."""
    parts = urn.split("::")
    if in_our_project(urn) and len(parts) > 2 and OUR_SERVICE in parts[2]:
        return f"{STACK_KEY} (it sets {WAF_ANNOTATION})"
    return WAF_ANNOTATION


def validate(args: Any, report_violation: ReportViolation) -> None:
    if not is_ingress(args.resource_type) or not internet_facing_alb(args.props):
        return
    name = get(args.props, "metadata", "name", default=args.name)
    acl = annotation(args.props, WAF_ANNOTATION)
    fix = f"Fix: {_where(args.urn)}: arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id> " + (
        "(a regional WAFv2 web ACL, e.g. with the AWS managed common rule set)")
    if not acl:
        report_violation(f"{UNSEEN_MARK}Internet-facing ALB Ingress '{name}' sets no {WAF_ANNOTATION}: its web ACL "
                         "comes from its IngressClassParams' spec.wafv2AclArn or an AWS Firewall Manager policy, if "
                         "any, and a resource policy sees neither. To let the pack judge it: "
                         f"{fix.removeprefix('Fix: ')}.", args.urn)
    elif acl == WAF_DISABLED:
        report_violation(f"Internet-facing ALB Ingress '{name}' has no WAFv2 web ACL ({WAF_ANNOTATION} is "
                         f"{acl!r}, which removes it). {fix}.", args.urn)
    elif not acl.startswith(WAFV2_REGIONAL_ARN) or ":regional/webacl/" not in acl:
        report_violation(f"Internet-facing ALB Ingress '{name}' has {WAF_ANNOTATION} {acl!r}, which is not a regional "
                         f"WAFv2 web ACL ARN (ALBs take regional ACLs only). {fix}.", args.urn)


POLICY = resource_policy_with_unseen(
    "alb-waf-attached",
    "An internet-facing ALB Ingress has a regional WAFv2 web ACL; one it leaves to its IngressClassParams or to "
    "Firewall Manager is advisory.",
    validate,
    unseen_description="Advisory twin of alb-waf-attached: an internet-facing ALB Ingress without the WAF annotation, "
                       "whose web ACL may come from its IngressClassParams or AWS Firewall Manager, which a resource "
                       "policy cannot see; it names what lets the pack judge. Prod raises it: a prod ALB states its "
                       "web ACL on the Ingress.",
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    unseen_prod=EnforcementLevel.MANDATORY,
)

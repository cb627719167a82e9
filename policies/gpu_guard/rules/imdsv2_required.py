"""imdsv2-required: launch templates and EC2NodeClasses require IMDSv2 with a hop limit of at most 2.

IMDSv1 answers any unauthenticated GET, so an SSRF in an inference server reads the node role's
credentials; a hop limit above 2 lets those credentials leave the node through extra network hops.

Cannot see, cannot block: a launch template that leaves `httpTokens` unset gets EC2's default, which is not
in the stack: `required` when the AMI's ImdsSupport is v2.0 (AL2023 and Bottlerocket EKS AMIs are) and the
account's instance-metadata defaults express no preference, else the account default, else `optional`. The
pack cannot see the AMI's ImdsSupport nor the account's defaults, so the advisory twin `imdsv2-required-unseen`
says so and names `httpTokens: required`; an `httpTokens` the template states is judged here.

Sources:
- HttpTokens default (the AMI's ImdsSupport, the account-level default):
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateInstanceMetadataOptionsRequest.html and
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/configuring-IMDS-new-instances.html
- EKS Best Practices, restrict access to the instance profile:
  https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
- Launch template metadata options (httpTokens required|optional, hop limit 1..64):
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateInstanceMetadataOptionsRequest.html
- Karpenter EC2NodeClass metadataOptions defaults (required / hop limit 1):
  https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions
"""

from __future__ import annotations

from typing import Any

from ..base import UNSEEN_MARK, ReportViolation, resource_policy_with_unseen
from ..inventory import LAUNCH_TEMPLATE, get

# Two hops: the node itself plus one container network hop (pods without host networking).
# Source: https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
MAX_HOP_LIMIT = 2
# EC2 default hop limit when a launch template leaves it out.
# Source: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateInstanceMetadataOptionsRequest.html
EC2_DEFAULT_HOP_LIMIT = 1
# Karpenter's EC2NodeClass defaults (tests/policies/test_karpenter_schema.py checks them against the CRD).
# Source: https://github.com/aws/karpenter-provider-aws/blob/v1.14.1/pkg/apis/crds/karpenter.k8s.aws_ec2nodeclasses.yaml
KARPENTER_DEFAULT_HTTP_TOKENS = "required"
KARPENTER_DEFAULT_HOP_LIMIT = 1

_FIX_LT = "metadataOptions: {httpEndpoint: enabled, httpTokens: required, httpPutResponseHopLimit: 2}"
_FIX_NODECLASS = "remove spec.metadataOptions (Karpenter defaults to httpTokens: required, hop limit 1) or set " \
    "httpTokens: required, httpPutResponseHopLimit: 1"


def _hop_problem(hops: Any) -> str | None:
    try:
        value = int(hops)
    except (TypeError, ValueError):
        return f"httpPutResponseHopLimit {hops!r} is not a number"
    if value > MAX_HOP_LIMIT:
        return f"httpPutResponseHopLimit is {value}, above {MAX_HOP_LIMIT}"
    return None


def _launch_template(args: Any, report: ReportViolation) -> None:
    options = get(args.props, "metadataOptions")
    where = f"Launch template '{args.name}'"
    unseen = ("the AMI's ImdsSupport and the account's instance-metadata defaults decide whether instances accept "
              "IMDSv1, and a preview sees neither. To let the pack judge it: " + _FIX_LT)
    if options is None:
        report(f"{UNSEEN_MARK}{where} sets no metadataOptions: {unseen}.", args.urn)
        return
    if str(get(options, "httpEndpoint", default="enabled")) == "disabled":
        return  # no metadata service at all
    tokens = get(options, "httpTokens")
    if tokens is None:
        report(f"{UNSEEN_MARK}{where}: metadataOptions.httpTokens is unset: {unseen}.", args.urn)
    elif str(tokens) != "required":
        report(f"{where}: metadataOptions.httpTokens is {tokens!r}; IMDSv2 requires 'required'. Fix: {_FIX_LT}.",
               args.urn)
    problem = _hop_problem(get(options, "httpPutResponseHopLimit", default=EC2_DEFAULT_HOP_LIMIT))
    if problem:
        report(f"{where}: metadataOptions.{problem} (at most {MAX_HOP_LIMIT}). Fix: {_FIX_LT}.", args.urn)


def _node_class(args: Any, report: ReportViolation) -> None:
    options = get(args.props, "spec", "metadataOptions")
    if options is None:
        return  # Karpenter's defaults: required, hop limit 1
    name = get(args.props, "metadata", "name", default=args.name)
    where = f"EC2NodeClass '{name}'"
    if str(get(options, "httpEndpoint", default="enabled")) == "disabled":
        return
    # An explicit null is an omitted field: the API server drops it and Karpenter's default applies.
    tokens = get(options, "httpTokens", default=None) or KARPENTER_DEFAULT_HTTP_TOKENS
    if str(tokens) != "required":
        state = repr(tokens)
        report(f"{where}: spec.metadataOptions.httpTokens is {state}; IMDSv2 requires 'required'. "
               f"Fix: {_FIX_NODECLASS}.", args.urn)
    hops = get(options, "httpPutResponseHopLimit", default=None)
    problem = _hop_problem(KARPENTER_DEFAULT_HOP_LIMIT if hops is None else hops)
    if problem:
        report(f"{where}: spec.metadataOptions.{problem} (at most {MAX_HOP_LIMIT}). Fix: {_FIX_NODECLASS}.",
               args.urn)


def validate(args: Any, report_violation: ReportViolation) -> None:
    if args.resource_type == LAUNCH_TEMPLATE:
        _launch_template(args, report_violation)
    elif args.resource_type.startswith("kubernetes:karpenter.k8s.aws/") and args.resource_type.endswith(
            ":EC2NodeClass"):
        _node_class(args, report_violation)


POLICY = resource_policy_with_unseen(
    "imdsv2-required",
    "Launch templates and EC2NodeClasses require IMDSv2 (httpTokens: required) with a hop limit of at most 2.",
    validate,
    unseen_description="Advisory twin of imdsv2-required: a launch template that leaves httpTokens to the AMI and "
                       "the account's instance-metadata defaults, which a preview cannot see; it names what lets the "
                       "pack judge.",
)

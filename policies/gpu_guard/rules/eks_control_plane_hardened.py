"""eks-control-plane-hardened: every EKS control plane encrypts Secrets, logs its API, uses access entries
and keeps its public endpoint closed to the internet; in prod it is also deletion-protected on STANDARD support.

Judges `aws:eks/cluster:Cluster` wherever it appears: in a real preview pulumi-eks's `Cluster` registers
one as its child (the engine never analyzes a remote component's own inputs; the offline gate emulates it,
tools/engine/mocks/eks_children.py). Each finding is one report; an `encryptionConfig` unknown as a whole
(a first preview) makes only the first wait, never the others:

- `encryptionConfig` names a KMS key (`provider.keyArn`) for the `secrets` resource;
- `enabledClusterLogTypes` holds `api`, `audit` and `authenticator`;
- `accessConfig.authenticationMode` is `API` (access entries only; `CONFIG_MAP` and
  `API_AND_CONFIG_MAP` keep the aws-auth ConfigMap, which any cluster admin can edit);
- a public endpoint (`vpcConfig.endpointPublicAccess`, default true) is not open to `0.0.0.0/0`
  (`vpcConfig.publicAccessCidrs`, default `["0.0.0.0/0"]`);
- policy config `requireDeletionProtection` (prod): `deletionProtection` is true;
- policy config `requireStandardSupport` (prod): `upgradePolicy.supportType` is `STANDARD` (the API
  default is EXTENDED, which bills the extended-support price once standard support ends).

Sources:
- EKS best practices, control plane logging and private endpoint:
  https://docs.aws.amazon.com/eks/latest/best-practices/auditing-and-logging.html
  https://docs.aws.amazon.com/eks/latest/best-practices/control-plane.html
- Secrets envelope encryption: https://docs.aws.amazon.com/eks/latest/userguide/envelope-encryption.html
- Access entries replace aws-auth: https://docs.aws.amazon.com/eks/latest/userguide/grant-k8s-access.html
- vpcConfig defaults (public endpoint on, publicAccessCidrs 0.0.0.0/0), deletionProtection:
  https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html
- Upgrade policy and prices: https://docs.aws.amazon.com/eks/latest/userguide/view-upgrade-policy.html,
  https://aws.amazon.com/eks/pricing/
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs
from pulumi_policy.proxy import UnknownValueError

from ..base import EnforcementLevel, ReportViolation, in_our_project, resource_policy
from ..eks_support import EXTENDED_SUPPORT_PRICE_PER_HOUR, support_type_of
from ..inventory import get

NAME = "eks-control-plane-hardened"
EKS_CLUSTER = "aws:eks/cluster:Cluster"
# Source: https://docs.aws.amazon.com/eks/latest/best-practices/auditing-and-logging.html
REQUIRED_LOG_TYPES = ("api", "audit", "authenticator")
OPEN_TO_ALL = "0.0.0.0/0"
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_VpcConfigRequest.html
DEFAULT_PUBLIC_ACCESS_CIDRS = (OPEN_TO_ALL,)
# Stack keys exist only in this project's stacks (CONFIG.md section 1: every key is `gpu-platform:<key>`); a foreign
# program's cluster is fixed through its own resource input.
def _fix(urn: str, ours: str, resource_input: str) -> str:
    """Where the user sets it: our stack key for a cluster of this project, else the cluster's own input."""
    if in_our_project(urn):
        return f"Fix: {ours}."
    return f"Fix: {resource_input} on the cluster (an input of aws.eks.Cluster and of pulumi_eks.Cluster)."

CONFIG_SCHEMA = PolicyConfigSchema(properties={
    "requireDeletionProtection": {"type": "boolean", "default": False,
                                  "description": "Ask for deletionProtection: true (prod)."},
    "requireStandardSupport": {"type": "boolean", "default": False,
                               "description": "Ask for upgradePolicy.supportType STANDARD (prod)."},
})


def _has_kms_secrets(props: Any) -> bool | None:
    """Whether `encryptionConfig` encrypts Secrets with a KMS key; None while it is unknown as a whole.

    pulumi-eks builds the block with an `apply` on the key's ARN (nodejs/eks/cluster/cluster.ts lines
    592-606 at pulumi/pulumi-eks@7bf0c1b1), so in a first preview, before the key exists, the whole block is
    unknown. The check then waits: at `pulumi up` the key is created first and Analyze judges the cluster's
    known inputs before its step, where a violation still stops it. The other checks do not wait for it.
    """
    try:
        configs = get(props, "encryptionConfig")
        if hasattr(configs, "keys"):  # one block (the provider's schema), or a list of them
            configs = [configs]
        for config in configs or []:
            try:
                key = get(config, "provider", "keyArn")
            except UnknownValueError:
                # The key's ARN is an output of the KMS key, unknown in a first preview; a key is configured.
                key = True
            if key and "secrets" in (get(config, "resources") or []):
                return True
    except UnknownValueError:
        return None
    return False


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    if args.resource_type != EKS_CLUSTER:
        return
    props = args.props
    where = f"EKS cluster {args.name!r}"
    if _has_kms_secrets(props) is False:
        report(f"{where} does not encrypt Secrets with a KMS key (encryptionConfig). Fix: encryptionConfig "
               "{provider: {keyArn: <KMS key ARN>}, resources: [secrets]}.", None)
    logs = set(get(props, "enabledClusterLogTypes") or [])
    missing = [t for t in REQUIRED_LOG_TYPES if t not in logs]
    if missing:
        report(f"{where} does not send the {', '.join(missing)} control-plane logs (enabledClusterLogTypes). "
               f"Fix: enable at least {', '.join(REQUIRED_LOG_TYPES)}.", None)
    mode = get(props, "accessConfig", "authenticationMode", default="CONFIG_MAP")
    if mode != "API":
        report(f"{where} authenticates with {mode} (accessConfig.authenticationMode), which keeps the aws-auth "
               "ConfigMap. Fix: authenticationMode API with access entries.", None)
    vpc = get(props, "vpcConfig") or {}
    if get(vpc, "endpointPublicAccess", default=True):
        cidrs = get(vpc, "publicAccessCidrs") or list(DEFAULT_PUBLIC_ACCESS_CIDRS)
        if OPEN_TO_ALL in cidrs:
            report(f"{where} has a public API endpoint open to {OPEN_TO_ALL} (vpcConfig.publicAccessCidrs). Fix: "
                   "list your egress ranges in publicAccessCidrs, or endpointPublicAccess false.", None)
    config = args.get_config() or {}
    if config.get("requireDeletionProtection") and get(props, "deletionProtection") is not True:
        report(f"{where} has no deletion protection (deletionProtection). "
               + _fix(args.urn, "deletionProtection true (stack key cluster.deletionProtection)",
                      "deletion_protection=True"), None)
    if config.get("requireStandardSupport"):
        support = support_type_of(props)
        if support != "STANDARD":
            report(f"{where} uses the {support} support type (upgradePolicy.supportType), billed at "
                   f"{EXTENDED_SUPPORT_PRICE_PER_HOUR} per hour once standard support ends. "
                   + _fix(args.urn, "supportType STANDARD (stack key cluster.supportType: standard)",
                          'upgrade_policy={"support_type": "STANDARD"}'), None)


resource_policy(
    name=NAME,
    description="EKS control planes encrypt Secrets with KMS, send api/audit/authenticator logs, use access "
                "entries and keep the public endpoint closed to 0.0.0.0/0; prod adds deletion protection and "
                "STANDARD support.",
    validate=_validate,
    enforcement=EnforcementLevel.ADVISORY,
    prod=EnforcementLevel.MANDATORY,
    config_schema=CONFIG_SCHEMA,
)

"""Checks that only a real deployment can fail: documentation values in the stack, a deployer without access.

Each runs before any resource is registered and raises one ConfigError naming file, key, value and fix.

- Documentation values (`refuse_documentation_values`), in every section: the shipped stacks carry RFC 5737
  ranges in `endpointPublicAccessCidrs`, AWS's documentation account in principal, certificate, WAF and KMS key
  ARNs, and a placeholder snapshot id. A preview works with them; a real `pulumi up` would not: no machine
  running Pulumi is inside a documentation range, so every Kubernetes resource times out once the control plane
  exists; `CreateAccessEntry` fails for a principal in an account that is not yours; a placeholder snapshot
  never binds, so every replica stays Pending on its volume; the HTTPS listener fails without a certificate of
  yours, the WAF association without your web ACL, a restore without your key.
  Refused when `pulumi.runtime.is_dry_run()` is False (an update), never during a preview.
  One exception, decided by the account the run really is in
  (`aws.get_caller_identity`, asked only when the stack holds such values): when that account is itself a
  documentation account, the run deploys nothing of yours (no one holds its credentials; it is the account
  the offline gate's mocks answer, tools/engine/mocks/values.py), so the refusal is logged as one warning,
  `REAL_UP_REFUSED` + the message, and the run goes on; `python -m tools.preview --phase up` lists it.
  In any real account the run is refused exactly as before.
- A deployer without access (`check_deployer_access`): the identity running Pulumi is in none of the
  cluster's principal lists and the existing cluster has no access entry for it, so every Kubernetes
  step would fail. (Listing the creator is no longer a conflict: components/access.py adopts its entry.)
- A preview role that would create the cluster (`check_preview_principal_not_creator`): EKS's creator entry
  is admin, so the view-only identity of every pull request would become a cluster admin.
- The cluster's creator is decided by the configuration, not by who runs Pulumi (`cluster_creator`,
  `check_caller_is_creator`): the first `deployerPrincipalArns` entry (the deploy workflow's role). EKS gives
  the creator its own entry, so the program leaves that principal's entry out while the cluster does not exist;
  were that principal the caller, a pull-request or `preview-prod-main` preview (run as the preview role) and
  the `pulumi up --plan` that applies its saved plan (run as the deploy role) would register different access
  entries, and the engine refuses an update whose resources differ from the plan. So the resource set is the
  same whoever runs it, and a `pulumi up` that would create the cluster as another identity is refused (its
  creator entry would be unmanaged, and the configured creator's entry missing); a preview warns.
- The Spot service-linked role taken (`check_spot_service_linked_role`): a pool can run Spot, the stack says
  `karpenter.spotServiceLinkedRole: create`, and the account already holds `AWSServiceRoleForEC2Spot` (it ran
  Spot before, another stack of the account made it, or this stack was destroyed: the role is retained). IAM
  refuses the create with InvalidInput "Service role name AWSServiceRoleForEC2Spot has been taken in this
  account" midway through `pulumi up`, after the cluster and more were created; the check stops the up before
  anything is registered. Looked up with ListRoles by the role's path (`aws.iam.get_roles`, the provider's
  aws_iam_roles data source), which answers an empty list where GetRole would fail with NoSuchEntity. In a
  preview it is a warning (`REAL_UP_REFUSED` + the message, listed by tools.preview as `realUpRefused`), as
  for a deployer without access: the account can still change before the up (the other stack destroyed), a
  pull-request preview must show the whole plan, and the up itself is what fails.

Sources:
- RFC 5737 documentation ranges: https://www.rfc-editor.org/rfc/rfc5737
- Placeholder snapshot ids of AWS's examples (snap-1234567890abcdef0, e.g. in
  https://docs.aws.amazon.com/cli/latest/reference/ec2/enable-fast-snapshot-restores.html) and this project's
  snap-0123456789abcdef0: the hex digits counted out in order
- AWS documentation account 111122223333 (and 444455556666, 777788889999) in examples:
  https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_elements_principal.html
- Creator admin in pulumi-eks: https://github.com/pulumi/pulumi-eks/blob/master/nodejs/eks/cluster/cluster.ts
- Access entry conflicts: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html
- Session issuer of an assumed role: https://docs.aws.amazon.com/STS/latest/APIReference/API_GetCallerIdentity.html
- A service-linked role's path is /aws-service-role/<service principal>/ and its name is the service's own:
  https://docs.aws.amazon.com/IAM/latest/UserGuide/using-service-linked-roles.html; EC2 Spot's is
  AWSServiceRoleForEC2Spot for spot.amazonaws.com:
  https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/service-linked-roles-spot-instance-requests.html
- ListRoles with PathPrefix (an empty list, no error, when nothing matches):
  https://docs.aws.amazon.com/IAM/latest/APIReference/API_ListRoles.html, read by the aws_iam_roles data source:
  https://registry.terraform.io/providers/hashicorp/aws/latest/docs/data-sources/iam_roles
  (hashicorp/terraform-provider-aws website/docs/d/iam_roles.html.markdown, "Roles filtered by path prefix")
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pulumi
import pulumi_aws as aws

from components.config import (
    ClusterConfig,
    ConfigError,
    InferenceServiceConfig,
    KarpenterConfig,
    Problem,
    raise_problems,
    stack_file_name,
)
from components.config.loader import problems_message

DOCUMENTATION_NETWORKS: tuple[ipaddress.IPv4Network, ...] = tuple(
    ipaddress.IPv4Network(n) for n in ("192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24")
)
DOCUMENTATION_ACCOUNTS: frozenset[str] = frozenset({"111122223333", "444455556666", "777788889999"})
# Snapshot ids whose hex digits are counted out in order: placeholders, no real snapshot id.
PLACEHOLDER_HEX_RUNS: tuple[str, ...] = ("0123456789abcdef", "1234567890abcdef")

# The warning a run in a documentation account logs instead of refusing (tools/preview/model.py reads it).
REAL_UP_REFUSED = "a real `pulumi up` of this stack file would be refused: "

# The EC2 Spot service-linked role: its service principal, name and IAM path (module docstring, sources).
SPOT_SERVICE = "spot.amazonaws.com"
SPOT_SERVICE_LINKED_ROLE = "AWSServiceRoleForEC2Spot"
SPOT_ROLE_PATH = f"/aws-service-role/{SPOT_SERVICE}/"

_CIDR_FIX = ("set the egress address of the machine that runs `pulumi up` (e.g. the output of "
             "`curl https://checkip.amazonaws.com` followed by /32) or your VPN range, or [] for a "
             "private-only endpoint reached from inside the VPC")


def _account(arn: str) -> str:
    return arn.split(":")[4] if arn.count(":") >= 5 else ""


def documentation_problems(config: ClusterConfig) -> list[Problem]:
    """Every documentation range or account the cluster section holds, as problems to print."""
    problems: list[Problem] = []
    for i, cidr in enumerate(config.endpoint_public_access_cidrs):
        network = ipaddress.IPv4Network(cidr)
        if any(network.subnet_of(doc) for doc in DOCUMENTATION_NETWORKS):
            problems.append(Problem(
                ("cluster", "endpointPublicAccessCidrs", i), cidr,
                "an RFC 5737 documentation range: no machine running `pulumi up` is inside it, so every "
                "Kubernetes resource would time out once the control plane exists", (), _CIDR_FIX))
    for key_path, arn in config.principals():
        path = ("cluster", *key_path)
        account = _account(arn)
        if account in DOCUMENTATION_ACCOUNTS:
            problems.append(Problem(
                path, arn, f"account {account} is AWS's documentation account, so CreateAccessEntry would fail",
                (), "set the ARN of a role in your own account (`aws sts get-caller-identity` shows the account "
                    "id), or remove the key"))
    return problems


def _account_problem(path: tuple[str | int, ...], arn: str, what: str, fix: str) -> list[Problem]:
    account = _account(arn)
    if account not in DOCUMENTATION_ACCOUNTS:
        return []
    return [Problem(path, arn, f"account {account} is AWS's documentation account, so {what}", (), fix)]


def service_documentation_problems(services: Sequence[InferenceServiceConfig]) -> list[Problem]:
    """Documentation values of the inference services: snapshot ids, certificate, WAF and KMS key ARNs."""
    problems: list[Problem] = []
    for i, service in enumerate(services):
        base: tuple[str | int, ...] = ("inferenceServices", i)
        volume = service.model_volume
        if volume is not None:
            if any(run in volume.snapshot_id for run in PLACEHOLDER_HEX_RUNS):
                problems.append(Problem(
                    (*base, "modelVolume", "snapshotId"), volume.snapshot_id,
                    "a placeholder snapshot id from the documentation: the VolumeSnapshot never becomes ready, so "
                    "every replica stays Pending on its model volume", (),
                    "set the id of your model snapshot (`aws ec2 describe-snapshots --owner-ids self`)"))
            if volume.kms_key_arn is not None:
                problems += _account_problem((*base, "modelVolume", "kmsKeyArn"), volume.kms_key_arn,
                                             "no volume can be restored with that key",
                                             "set the KmsKeyId of your snapshot, or remove the key")
        ingress = service.ingress
        if ingress is not None:
            problems += _account_problem((*base, "ingress", "certificateArn"), ingress.certificate_arn,
                                         "the ALB's HTTPS listener cannot use that certificate",
                                         "set the ARN of your ACM certificate for the host "
                                         "(`aws acm list-certificates`)")
            if ingress.waf_acl_arn is not None:
                problems += _account_problem((*base, "ingress", "wafAclArn"), ingress.waf_acl_arn,
                                             "the ALB cannot be associated with that web ACL",
                                             "set the ARN of your regional web ACL "
                                             "(`aws wafv2 list-web-acls --scope REGIONAL`)")
    return problems


def refuse_documentation_values(config: ClusterConfig, *, services: Sequence[InferenceServiceConfig] = (),
                                dry_run: bool | None = None, caller_account: str | None = None) -> None:
    """At `pulumi up` (not in a preview): raise ConfigError when the stack still holds documentation values.

    `caller_account` (default: `aws.get_caller_identity()`, asked only when there is something to refuse):
    in a documentation account the refusal is a warning instead (module docstring).
    """
    is_preview = pulumi.runtime.is_dry_run() if dry_run is None else dry_run
    if is_preview:
        return
    problems = documentation_problems(config) + service_documentation_problems(services)
    if not problems:
        return
    account = aws.get_caller_identity().account_id if caller_account is None else caller_account
    if account in DOCUMENTATION_ACCOUNTS:
        pulumi.log.warn(REAL_UP_REFUSED + problems_message(problems, stack_file_name()))
        return
    raise_problems(problems, stack_file_name())


def deploying_principal() -> str:
    """The IAM role or user ARN of the identity running Pulumi (the issuer of an assumed-role session)."""
    caller = aws.get_caller_identity()
    if ":assumed-role/" in caller.arn:
        return aws.iam.get_session_context(arn=caller.arn).issuer_arn
    return caller.arn


def cluster_creator(config: ClusterConfig, caller: str) -> str:
    """The principal whose entry EKS makes when the cluster is created: the first deployer, else the caller.

    The caller only when `deployerPrincipalArns` is empty (then nothing deploys this stack from CI, and a
    person's `pulumi up` creates it as before); module docstring.
    """
    return config.deployer_principal_arns[0] if config.deployer_principal_arns else caller


def check_caller_is_creator(config: ClusterConfig, caller: str, *, cluster_exists: bool,
                            dry_run: bool | None = None) -> None:
    """A `pulumi up` that would create the cluster as another identity than `cluster_creator`: refuse it.

    A preview role is left to `check_preview_principal_not_creator`; a preview warns (module docstring).
    """
    creator = cluster_creator(config, caller)
    if cluster_exists or caller == creator or caller in config.preview_principal_arns:
        return
    message = (
        f"{stack_file_name()}: cluster.deployerPrincipalArns[0] = {creator!r} creates cluster {config.name!r} (EKS "
        f"gives it the creator's admin access entry, so this stack leaves its entry out), but {caller} runs this "
        "`pulumi up`: it would get an admin entry this stack does not manage and the first deployer none; fix: "
        "run the first `pulumi up` as the first entry of cluster.deployerPrincipalArns, or list this identity "
        "first there")
    # A preview warns; so does a run in a documentation account (no real deployment: the offline gate's mocks), as
    # `refuse_documentation_values` does.
    arn = caller.split(":")
    in_documentation_account = len(arn) > 4 and arn[4] in DOCUMENTATION_ACCOUNTS
    if (pulumi.runtime.is_dry_run() if dry_run is None else dry_run) or in_documentation_account:
        pulumi.log.warn(REAL_UP_REFUSED + message)
        return
    raise ConfigError(message)


def check_deployer_access(config: ClusterConfig, deployer: str, *, cluster_exists: bool, has_entry: bool) -> None:
    """The identity running Pulumi is not in the cluster section: say what that means for its Kubernetes steps.

    Creating the cluster, it gets EKS's creator entry, which the stack does not manage: a warning asks
    to list it in `deployerPrincipalArns`. On an existing cluster without an entry for it, every
    Kubernetes step would fail ("configured Kubernetes cluster is unreachable", Unauthorized): a
    `pulumi up` stops before anything changes, a preview warns.
    """
    if not cluster_exists:
        pulumi.log.warn(
            f"{deployer} creates cluster {config.name!r} and gets the creator's admin access entry from EKS, which "
            "this stack does not manage; when it is an identity that deploys this stack (the deploy workflow's "
            "role, a person running `pulumi up`), list it in cluster.deployerPrincipalArns so that the next "
            "`pulumi up` adopts it (and removing it later removes its access); a pull-request preview role "
            "(cluster.previewPrincipalArns) never runs `pulumi up`")
        return
    if has_entry:
        return
    message = (
        f"{stack_file_name()}: cluster.deployerPrincipalArns: {deployer} runs Pulumi but has no access entry in "
        f"cluster {config.name!r}, so every Kubernetes step would fail with Unauthorized (\"configured Kubernetes "
        "cluster is unreachable\"); fix: add it to cluster.deployerPrincipalArns (a pull-request preview role: "
        "cluster.previewPrincipalArns) and run `pulumi up` once as an identity that can create EKS access "
        "entries (it may be this one: its entry is created before any Kubernetes step)")
    if pulumi.runtime.is_dry_run():
        pulumi.log.warn(message)
        return
    raise ConfigError(message)


def check_preview_principal_not_creator(config: ClusterConfig, caller: str, *, cluster_exists: bool,
                                        dry_run: bool | None = None) -> None:
    """A pull-request preview role about to create the cluster: refuse the up (a preview warns).

    EKS gives the identity that creates a cluster an admin access entry (pulumi-eks sets
    `bootstrapClusterCreatorAdminPermissions: true`), and components/access.py leaves the creator to that entry:
    the view-only role of every pull request would hold cluster-admin from then on.
    """
    if cluster_exists or caller not in config.preview_principal_arns:
        return
    message = (
        f"{stack_file_name()}: cluster.previewPrincipalArns: {caller} is a pull-request preview role (view-only) "
        f"but would create cluster {config.name!r}, and EKS gives the identity that creates a cluster the "
        "creator's admin access entry (AmazonEKSClusterAdminPolicy): every pull request would then run as a "
        "cluster admin; fix: run the first `pulumi up` as a role listed in cluster.deployerPrincipalArns (the "
        "deploy workflow's role), never as a preview role")
    if pulumi.runtime.is_dry_run() if dry_run is None else dry_run:
        pulumi.log.warn(REAL_UP_REFUSED + message)
        return
    raise ConfigError(message)


def spot_service_linked_role_exists() -> bool:
    """Whether the account holds AWSServiceRoleForEC2Spot (ListRoles by its path: no error when it has none)."""
    return SPOT_SERVICE_LINKED_ROLE in aws.iam.get_roles(path_prefix=SPOT_ROLE_PATH).names


def check_spot_service_linked_role(config: KarpenterConfig | None, *, exists: bool | None = None,
                                   dry_run: bool | None = None) -> None:
    """`karpenter.spotServiceLinkedRole: create` in an account that already has the role: refuse the up.

    Asked only when a pool can run Spot and the mode is `create` (`exists`: default the account's answer).
    A `pulumi up` raises one ConfigError before anything is registered; a preview warns (module docstring).
    """
    if config is None or not config.runs_spot or config.spot_service_linked_role != "create":
        return
    if not (spot_service_linked_role_exists() if exists is None else exists):
        return
    message = (
        f"{stack_file_name()}: karpenter.spotServiceLinkedRole = \"create\": this account already has the Spot "
        f"service-linked role {SPOT_SERVICE_LINKED_ROLE} (path {SPOT_ROLE_PATH}), so IAM would refuse to create "
        "it (\"Service role name AWSServiceRoleForEC2Spot has been taken in this account\") midway through "
        "`pulumi up`; fix: set karpenter.spotServiceLinkedRole: adopt (the stack imports the role and never "
        "deletes it), or none when an account baseline manages it")
    if pulumi.runtime.is_dry_run() if dry_run is None else dry_run:
        pulumi.log.warn(REAL_UP_REFUSED + message)
        return
    raise ConfigError(message)

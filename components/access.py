"""EKS access entries keyed by principal: one entry (and its access policy association) per IAM principal.

Every access entry the platform creates goes through `access_entries` (cluster admins, deployers, the
preview and read-only roles) or `principal_access_entry` (one entry, e.g. a node role's `EC2_LINUX`
entry). The Pulumi name of an entry is derived from its principal ARN (`access_entry_name`), never from
a list position: removing A from `[A, B]` deletes A's entry and leaves B's alone, and reordering the list
changes nothing. Keyed by position, the removal would change `admin-0`'s principal from A to B; the
engine replaces a resource by creating the new one before deleting the old, so `CreateAccessEntry` for
B would fail with 409 (ResourceInUseException) while `admin-1` still held B.

An entry that already exists in EKS but not in the stack is adopted (`import`), never created twice:
the cluster creator's entry, which EKS makes with the cluster because pulumi-eks sets
`bootstrapClusterCreatorAdminPermissions: true` (and ignores later changes to it). On the run that
creates the cluster, the identity running it is not given an entry of its own (EKS's is on its way);
the next run adopts it, whoever runs it.

Sources:
- One access entry per principal, 409 on a second: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateAccessEntry.html
- The creator's entry: https://docs.aws.amazon.com/eks/latest/userguide/access-entries.html and pulumi-eks
  `nodejs/eks/cluster/cluster.ts:733-752` (`bootstrapClusterCreatorAdminPermissions: true` at 739, in
  `ignoreChanges` at 751-752), the same at v4.3.0 and master 7bf0c1b1 (the v4.4.0 tag of our pin is not
  in the stored mirror): https://github.com/pulumi/pulumi-eks/blob/v4.3.0/nodejs/eks/cluster/cluster.ts#L733-L752
- Replacement creates before it deletes unless `deleteBeforeReplace`:
  https://www.pulumi.com/docs/iac/concepts/resources/options/deletebeforereplace/
- The import option, and that an `import` id equal to the id in the state is no import:
  https://github.com/pulumi/pulumi/blob/1b5949891b3cefcb9974752b24a5ecef0acc86c8/pkg/resource/deploy/step_generator.go#L1102-L1113
- Ids (`<cluster>:<principal>`, `<cluster>#<principal>#<policy>`) and the not-found error of a lookup
  ("couldn't find resource"): https://github.com/hashicorp/terraform-provider-aws/blob/main/internal/service/eks/access_entry.go
  and https://www.pulumi.com/registry/packages/aws/api-docs/eks/accesspolicyassociation/#import
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import pulumi
import pulumi_aws as aws

from components import iam

EntryType = Literal["STANDARD", "EC2_LINUX", "EC2_WINDOWS", "FARGATE_LINUX"]

# What a lookup of an access entry that does not exist fails with: the AWS provider's not-found error,
# or the EKS exception behind it. Any other failure (throttling, access denied) stops the program.
_NOT_FOUND = ("couldn't find resource", "ResourceNotFoundException")
_NAME_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True)
class AccessGrant:
    """One principal's access: the entry type and the cluster-scoped access policy it gets (None: no policy)."""

    principal_arn: str
    policy: str | None
    entry_type: EntryType = "STANDARD"


def access_entry_name(prefix: str, principal_arn: str) -> str:
    """`<prefix>-access-<role or user name>-<8 hex of the ARN>`: the same principal, the same name.

    The readable part is the last path element of the ARN; the hash of the whole ARN keeps two
    principals apart that share a name (other account, other path, role vs user).
    """
    readable = _NAME_UNSAFE.sub("-", principal_arn.rsplit("/", 1)[-1]).strip("-") or "principal"
    digest = hashlib.sha256(principal_arn.encode()).hexdigest()[:8]
    return f"{prefix}-access-{readable}-{digest}"


def cluster_exists(cluster_name: str) -> bool:
    """Whether EKS already has a cluster of this name in the provider's region."""
    return cluster_name in (aws.eks.get_clusters().names or [])


def entry_exists(cluster_name: str, principal_arn: str) -> bool:
    """Whether the cluster already has an access entry for the principal (managed by this stack or not)."""
    try:
        aws.eks.get_access_entry(cluster_name=cluster_name, principal_arn=principal_arn)
    except Exception as exc:  # an invoke failure arrives as a bare Exception carrying the provider's message
        if any(marker in str(exc) for marker in _NOT_FOUND):
            return False
        raise
    return True


def existing_entries(cluster_name: str, principals: Iterable[str]) -> set[str]:
    """The principals that already have an access entry in an existing cluster (empty for a cluster to create)."""
    wanted = list(principals)
    if not wanted or not cluster_exists(cluster_name):
        return set()
    return {arn for arn in wanted if entry_exists(cluster_name, arn)}


def principal_access_entry(
    prefix: str,
    cluster_name: pulumi.Input[str],
    grant: AccessGrant,
    *,
    parent: pulumi.Resource,
    adopt_in: str | None = None,
    depends_on: Sequence[pulumi.Resource] = (),
    aliases: Sequence[pulumi.Alias] = (),
    association_aliases: Sequence[pulumi.Alias] = (),
) -> list[pulumi.Resource]:
    """One principal's access entry (and its policy association), named by the principal.

    `adopt_in`: the name of the cluster in which the entry already exists; it is then imported, not created.
    """
    name = access_entry_name(prefix, grant.principal_arn)
    entry = aws.eks.AccessEntry(
        name,
        cluster_name=cluster_name,
        principal_arn=grant.principal_arn,
        type=grant.entry_type,
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=list(depends_on),
            aliases=list(aliases),
            import_=f"{adopt_in}:{grant.principal_arn}" if adopt_in else None,
        ),
    )
    if grant.policy is None:
        return [entry]
    policy_arn = iam.access_policy_arn(grant.policy)
    association = aws.eks.AccessPolicyAssociation(
        name,
        cluster_name=cluster_name,
        principal_arn=grant.principal_arn,
        policy_arn=policy_arn,
        access_scope=aws.eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
        opts=pulumi.ResourceOptions(
            parent=parent,
            depends_on=[entry],
            aliases=list(association_aliases),
            import_=f"{adopt_in}#{grant.principal_arn}#{policy_arn}" if adopt_in else None,
        ),
    )
    return [entry, association]


def access_entries(
    prefix: str,
    cluster_name: str,
    grants: Sequence[AccessGrant],
    *,
    parent: pulumi.Resource,
    adopt: Collection[str] = (),
    skip: Collection[str] = (),
    depends_on: Sequence[pulumi.Resource] = (),
    legacy: Mapping[str, tuple[Sequence[pulumi.Alias], Sequence[pulumi.Alias]]] | None = None,
) -> list[pulumi.Resource]:
    """Access entries for `grants`, one per principal: those in `adopt` imported, those in `skip` left to EKS.

    `legacy`: principal -> (aliases of its entry, aliases of its association), the names an earlier
    release of the program gave them, so that a stack deployed with those names keeps its entries.
    """
    created: list[pulumi.Resource] = []
    for grant in grants:
        if grant.principal_arn in skip:
            continue
        entry_aliases, association_aliases = (legacy or {}).get(grant.principal_arn, ((), ()))
        created += principal_access_entry(
            prefix, cluster_name, grant, parent=parent, depends_on=depends_on,
            adopt_in=cluster_name if grant.principal_arn in adopt else None,
            aliases=entry_aliases, association_aliases=association_aliases,
        )
    return created

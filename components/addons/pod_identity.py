"""EKS Pod Identity for one controller's service account: its own role, its own policy, one association.

Least privilege per controller: each service account gets a role that only that service account can
assume (the association binds role, namespace and service account), with exactly the policy the
controller documents. The trust policy is the one EKS Pod Identity requires: principal
`pods.eks.amazonaws.com`, actions `sts:AssumeRole` and `sts:TagSession`, restricted with
`aws:SourceAccount` so that no other account's cluster can use the role.

Requires: the `eks-pod-identity-agent` add-on (components.cluster installs it).
Sources:
- https://docs.aws.amazon.com/eks/latest/userguide/pod-id-role.html (trust policy)
- https://docs.aws.amazon.com/eks/latest/userguide/pod-id-association.html
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws

from components.iam import managed_policy_arn

POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"


def trust_policy(account_id: str) -> str:
    """The role trust policy EKS Pod Identity documents, scoped to this account."""
    return json.dumps({
        "Version": "2012-10-17",
        "Statement": [{
            "Effect": "Allow",
            "Principal": {"Service": POD_IDENTITY_PRINCIPAL},
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Condition": {"StringEquals": {"aws:SourceAccount": account_id}},
        }],
    }, sort_keys=True)


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
def pod_identity(
    name: str,
    *,
    parent: pulumi.Resource,
    cluster_name: pulumi.Input[str],
    namespace: str,
    service_account: str,
    policy: dict[str, Any] | None = None,
    managed_policies: Sequence[str] = (),
    depends_on: Sequence[pulumi.Resource] = (),
    associate: bool = True,
) -> tuple[aws.iam.Role, list[pulumi.Resource], aws.eks.PodIdentityAssociation | None]:
    """A role for `namespace/service_account` with `policy` (inline document) and/or AWS managed policies.

    Returns the role, its grants and the association; `associate=False` leaves the association to an EKS
    add-on's own `podIdentityAssociations` (it then manages the service account's binding itself).
    """
    account = aws.get_caller_identity().account_id
    role = aws.iam.Role(
        f"{name}-role",
        assume_role_policy=trust_policy(account),
        description=f"EKS Pod Identity for {namespace}/{service_account} (gpu-platform)",
        opts=pulumi.ResourceOptions(parent=parent),
    )
    grants: list[pulumi.Resource] = []
    if policy is not None:
        grants.append(aws.iam.RolePolicy(
            f"{name}-policy",
            role=role.name,
            policy=json.dumps(policy, sort_keys=True),
            opts=pulumi.ResourceOptions(parent=parent),
        ))
    for managed in managed_policies:
        grants.append(aws.iam.RolePolicyAttachment(
            f"{name}-{managed.rsplit('/', 1)[-1]}",
            role=role.name,
            policy_arn=managed_policy_arn(managed),
            opts=pulumi.ResourceOptions(parent=parent),
        ))
    if not associate:
        return role, grants, None
    association = aws.eks.PodIdentityAssociation(
        f"{name}-association",
        cluster_name=cluster_name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role.arn,
        opts=pulumi.ResourceOptions(parent=parent, depends_on=[*grants, *depends_on]),
    )
    return role, grants, association
# pragma: no mutate end

"""The security baseline of both stacks, read off what the program registers (issue 20).

IMDSv2 on every launch template, encrypted root volumes and Secrets, endpoint CIDRs that are never the whole
internet, no wildcard principal in any IAM document, controllers on Pod Identity rather than the node role,
and the prod cluster and its Secrets key protected from `pulumi destroy`.
"""

from __future__ import annotations

import ipaddress

import pytest

from tests.security.documents import STACKS, policy_documents, stack_run, statements

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# The AWS-managed policies a node needs and nothing more: every controller gets its own role through Pod
# Identity. Source: https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html
NODE_POLICIES = {"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
                 "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
                 "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"}


@pytest.mark.parametrize("stack", STACKS)
def test_every_launch_template_requires_imdsv2_with_hop_limit_1(stack: str):
    templates = stack_run(stack).of_type(LAUNCH_TEMPLATE)
    assert templates
    for template in templates:
        metadata = template.inputs["metadataOptions"]
        assert (metadata["httpTokens"], metadata["httpPutResponseHopLimit"]) == ("required", 1), template.name


@pytest.mark.parametrize("stack", STACKS)
def test_every_root_volume_is_encrypted(stack: str):
    for template in stack_run(stack).of_type(LAUNCH_TEMPLATE):
        disks = template.inputs["blockDeviceMappings"]
        assert disks and all(d["ebs"]["encrypted"] == "true" for d in disks), template.name


@pytest.mark.parametrize("stack", STACKS)
def test_secrets_are_encrypted_with_a_rotating_customer_key(stack: str):
    result = stack_run(stack)
    key = result.one("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    cluster = result.one("eks:index:Cluster")
    assert "encryptionConfigKeyArn" in cluster.inputs


@pytest.mark.parametrize("stack", STACKS)
def test_the_public_endpoint_is_never_open_to_the_internet(stack: str):
    cluster = stack_run(stack).one("eks:index:Cluster").inputs
    cidrs = cluster.get("publicAccessCidrs") or []
    assert cluster["endpointPrivateAccess"] is True
    assert cidrs or cluster["endpointPublicAccess"] is False
    for cidr in cidrs:
        assert ipaddress.IPv4Network(cidr).prefixlen >= 8, cidr


@pytest.mark.parametrize("stack", STACKS)
def test_no_iam_document_has_a_wildcard_principal(stack: str):
    documents = policy_documents(stack)
    assert documents
    for document in documents:
        for statement in statements(document.document):
            assert "NotPrincipal" not in statement, document.where
            if statement.get("Effect") == "Deny":
                # A Deny with Principal "*" only narrows access: the interruption queue's DenyHTTP refuses every
                # caller that does not use TLS (aws:SecureTransport false), as upstream's Karpenter template does
                # (https://docs.aws.amazon.com/AWSSimpleQueueService/latest/SQSDeveloperGuide/sqs-security-best-practices.html).
                continue
            principal = statement.get("Principal")
            assert principal != "*", document.where
            if isinstance(principal, dict):
                for values in principal.values():
                    assert "*" not in ([values] if isinstance(values, str) else values), document.where


@pytest.mark.parametrize("stack", STACKS)
def test_controllers_use_pod_identity_and_the_node_role_holds_only_node_policies(stack: str):
    result = stack_run(stack)
    addons = {a.inputs["addonName"] for a in result.of_type("aws:eks/addon:Addon")}
    assert "eks-pod-identity-agent" in addons
    assert result.one("eks:index:Cluster").inputs.get("createOidcProvider") is False
    # The node roles are the roles EC2 assumes (instances); every other role belongs to a controller.
    node_roles = {r.name for r in result.of_type("aws:iam/role:Role")
                  if "ec2.amazonaws.com" in str(r.inputs.get("assumeRolePolicy"))}
    assert node_roles
    for role in node_roles:
        # The role input is the role's auto-name: the resource name plus the random suffix Pulumi adds.
        attached = {a.inputs["policyArn"]
                    for a in result.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                    if str(a.inputs["role"]).rpartition("-")[0] == role}
        assert attached == NODE_POLICIES, role
        assert not [r for r in result.of_type("aws:iam/rolePolicy:RolePolicy")
                    if str(r.inputs["role"]).rpartition("-")[0] == role], role


def test_the_prod_cluster_and_its_secrets_key_are_protected():
    result = stack_run("prod")
    assert result.one("eks:index:Cluster").protect
    assert result.one("aws:kms/key:Key").protect
    assert result.one("eks:index:Cluster").inputs["deletionProtection"] is True


def test_dev_can_be_torn_down():
    result = stack_run("dev")
    assert not result.one("eks:index:Cluster").protect
    assert not result.one("aws:kms/key:Key").protect

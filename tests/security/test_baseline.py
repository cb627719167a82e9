"""The security baseline of both stacks, read off what the program registers (issue 20).

IMDSv2 on every launch template, encrypted root volumes and Secrets, endpoint CIDRs that are never the whole
internet, no wildcard principal in any IAM document, controllers on Pod Identity rather than the node role (every
controller that calls AWS, none on IRSA), encrypted queues and gp3 StorageClasses, a TLS 1.3 policy and WAF on
prod's public load balancers, and the prod cluster and its Secrets key protected from `pulumi destroy`.
"""

from __future__ import annotations

import ipaddress
import json
import re
from typing import Any

import pytest

from tests.security.documents import STACKS, policy_documents, stack_run, statements

LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
# The AWS-managed policies a node needs and nothing more: every controller gets its own role through Pod
# Identity. Source: https://docs.aws.amazon.com/eks/latest/userguide/create-node-role.html
NODE_POLICIES = {"arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
                 "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryPullOnly",
                 "arn:aws:iam::aws:policy/AmazonEKS_CNI_Policy"}
# Karpenter's node role also carries SSM, as upstream's getting-started template attaches it to KarpenterNodeRole
# (aws/karpenter-provider-aws v1.14.1 cloudformation.yaml, pinned as iam/karpenter-cloudformation.yaml): Bottlerocket's
# control container registers with SSM, the only way into a node without SSH.
KARPENTER_NODE_POLICIES = NODE_POLICIES | {"arn:aws:iam::aws:policy/AmazonSSMManagedInstanceCore"}


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
        assert attached == (KARPENTER_NODE_POLICIES if role == "karpenter-node-role" else NODE_POLICIES), role
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


# --- Public load balancers (prod), queue and volume encryption, Pod Identity for every AWS-calling controller ---

INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"
ALB = "alb.ingress.kubernetes.io/"
# TLS 1.3 with 1.2 as the floor, or TLS 1.3 only. Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/
# application/describe-ssl-policies.html (ELBSecurityPolicy-TLS13-1-2-2021-06 is the console's recommended default)
TLS_POLICY = re.compile(r"^ELBSecurityPolicy-TLS13-1-[23]-")


def public_load_balancer_problems(annotations: dict[str, str]) -> list[str]:
    """What an internet-facing ALB Ingress lacks: a TLS 1.2+/1.3 policy, a WAF web ACL, HTTPS for every listener.
    Annotations: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/"""
    if annotations.get(f"{ALB}scheme") != "internet-facing":
        return []
    problems = []
    if not TLS_POLICY.match(annotations.get(f"{ALB}ssl-policy", "")):
        problems.append("ssl-policy")
    if not annotations.get(f"{ALB}wafv2-acl-arn", "").startswith("arn:aws:wafv2:"):
        problems.append("wafv2-acl-arn")
    listeners = json.loads(annotations.get(f"{ALB}listen-ports", '[{"HTTP": 80}]'))
    if any("HTTP" in port for port in listeners) and annotations.get(f"{ALB}ssl-redirect") != "443":
        problems.append("ssl-redirect")
    if not any("HTTPS" in port for port in listeners):
        problems.append("listen-ports")
    return problems


def test_prod_public_load_balancers_have_a_tls13_policy_waf_and_https_only():
    result = stack_run("prod")
    public = [i for i in result.of_type(INGRESS)
              if i.inputs["metadata"]["annotations"].get(f"{ALB}scheme") == "internet-facing"]
    assert public, "prod exposes its service through an internet-facing ALB"
    for ingress in public:
        assert public_load_balancer_problems(ingress.inputs["metadata"]["annotations"]) == [], ingress.name
    # No other way to a public load balancer: no Service of type LoadBalancer in either stack.
    for stack in STACKS:
        assert not [s for s in stack_run(stack).of_type("kubernetes:core/v1:Service")
                    if s.inputs.get("spec", {}).get("type") == "LoadBalancer"], stack


@pytest.mark.parametrize(("change", "problems"), [
    ({f"{ALB}ssl-policy": "ELBSecurityPolicy-2016-08"}, ["ssl-policy"]),
    ({f"{ALB}ssl-policy": "ELBSecurityPolicy-TLS-1-2-2017-01"}, ["ssl-policy"]),
    ({f"{ALB}wafv2-acl-arn": ""}, ["wafv2-acl-arn"]),
    ({f"{ALB}ssl-redirect": ""}, ["ssl-redirect"]),
    ({f"{ALB}listen-ports": '[{"HTTP": 80}]'}, ["listen-ports"]),
    ({f"{ALB}ssl-policy": "ELBSecurityPolicy-TLS13-1-3-2021-06"}, []),
    ({f"{ALB}scheme": "internal", f"{ALB}wafv2-acl-arn": ""}, []),
])
def test_the_public_load_balancer_check_fails_what_it_must(change: dict[str, str], problems: list[str]):
    prod = stack_run("prod").one(INGRESS).inputs["metadata"]["annotations"]
    assert public_load_balancer_problems({**prod, **change}) == problems


@pytest.mark.parametrize("stack", STACKS)
def test_every_queue_is_encrypted(stack: str):
    queues = stack_run(stack).of_type("aws:sqs/queue:Queue")
    assert queues, "the Karpenter interruption queue"
    for queue in queues:
        assert queue.inputs.get("sqsManagedSseEnabled") is True or queue.inputs.get("kmsMasterKeyId"), queue.name


@pytest.mark.parametrize("stack", STACKS)
def test_every_ebs_storage_class_makes_encrypted_gp3_volumes(stack: str):
    classes = [c for c in stack_run(stack).of_type("kubernetes:storage.k8s.io/v1:StorageClass")
               if c.inputs["provisioner"] == "ebs.csi.aws.com"]
    assert classes, "the model volume's StorageClass"
    for storage_class in classes:
        # Source: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md
        assert storage_class.inputs["parameters"]["encrypted"] == "true", storage_class.name
        assert storage_class.inputs["parameters"]["type"] == "gp3", storage_class.name


# The controllers that call AWS APIs, by the Helm chart or EKS add-on that installs them, and the service account
# their Pod Identity association must name. KEDA (Prometheus scaler), the GPU Operator, kube-prometheus-stack and
# the snapshot controller call no AWS API and get no role.
AWS_CONTROLLERS = {"oci://public.ecr.aws/karpenter/karpenter": ("kube-system", "karpenter"),
                   "aws-load-balancer-controller": ("kube-system", "aws-load-balancer-controller")}
AWS_ADDONS = {"aws-ebs-csi-driver": "ebs-csi-controller-sa"}
POD_IDENTITY_TRUST = {"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
                      "Action": ["sts:AssumeRole", "sts:TagSession"]}


def _role_name(arn: str) -> str:
    return arn.rpartition("/")[2].rpartition("-")[0]  # the role's auto-name less Pulumi's random suffix


def _assert_pod_identity_role(result: Any, arn: str) -> None:
    (role,) = [r for r in result.of_type("aws:iam/role:Role") if r.name == _role_name(arn)]
    (trust,) = statements(json.loads(role.inputs["assumeRolePolicy"]))
    assert {k: trust[k] for k in POD_IDENTITY_TRUST} == POD_IDENTITY_TRUST, role.name


@pytest.mark.parametrize("stack", STACKS)
def test_every_controller_that_calls_aws_gets_its_role_through_pod_identity_and_none_through_irsa(stack: str):
    result = stack_run(stack)
    associations = {(a.inputs["namespace"], a.inputs["serviceAccount"]): a.inputs["roleArn"]
                    for a in result.of_type("aws:eks/podIdentityAssociation:PodIdentityAssociation")}
    controllers = [AWS_CONTROLLERS[r.inputs["chart"]] for r in result.of_type("kubernetes:helm.sh/v3:Release")
                   if r.inputs["chart"] in AWS_CONTROLLERS]
    assert controllers, "Karpenter at least"
    for account in controllers:
        assert account in associations, account
        _assert_pod_identity_role(result, associations[account])
    addons = [a for a in result.of_type("aws:eks/addon:Addon") if a.inputs["addonName"] in AWS_ADDONS]
    for addon in addons:
        assert "serviceAccountRoleArn" not in addon.inputs, addon.name
        (association,) = addon.inputs["podIdentityAssociations"]
        assert association["serviceAccount"] == AWS_ADDONS[addon.inputs["addonName"]]
        _assert_pod_identity_role(result, association["roleArn"])
    # IRSA would annotate a service account with a role ARN: nothing the program registers carries one.
    # Source: https://docs.aws.amazon.com/eks/latest/userguide/associate-service-account-role.html
    assert not [r.name for r in result.resources if "eks.amazonaws.com/role-arn" in json.dumps(r.inputs)]

"""The control plane on pulumi-eks: the exact inputs handed to `eks.Cluster`, and the mocks' answer to it."""

from __future__ import annotations

import base64
import copy
import inspect
import json
from typing import Any

import pulumi_eks as eks
import pytest

from components.cluster import SERVICE_IPV4_CIDR, cluster_dns_ip, kubeconfig_endpoint_and_ca
from components.config import ConfigError
from tests.components.harness import Run, run, stack_values
from tools.engine.mocks.eks import RESOURCE_REFERENCE_OUTPUTS, eks_cluster_outputs

EKS_COMPONENT = "eks:index:Cluster"
LOG_TYPES = ["api", "audit", "authenticator", "controllerManager", "scheduler"]


def dev() -> Run:
    return run(stack_values("dev"))


def prod() -> Run:
    return run(stack_values("prod"), stack="prod")


def _without_ids(inputs: dict[str, Any]) -> dict[str, Any]:
    """The inputs with the ids the mocks generate (VPC, subnets, KMS key) replaced by their shape."""
    out = copy.deepcopy(inputs)
    assert out.pop("vpcId").startswith("vpc-")
    assert all(s.startswith("subnet-") for s in out.pop("subnetIds"))
    assert out.pop("encryptionConfigKeyArn").startswith("arn:aws:kms:us-west-2:")
    return out


def _expected(name: str, cidrs: list[str], *, deletion_protection: bool) -> dict[str, Any]:
    return {
        "name": name,
        "version": "1.35",
        "endpointPrivateAccess": True,
        "endpointPublicAccess": True,
        "publicAccessCidrs": cidrs,
        "skipDefaultNodeGroup": True,
        "skipDefaultSecurityGroups": True,
        "authenticationMode": "API",
        "enabledClusterLogTypes": LOG_TYPES,
        "deletionProtection": deletion_protection,
        "upgradePolicy": {"supportType": "STANDARD"},
        "kubernetesServiceIpAddressRange": "172.20.0.0/16",
        "bootstrapSelfManagedAddons": False,
        "corednsAddonOptions": {"enabled": False, "resolveConflictsOnCreate": "OVERWRITE",
                                "resolveConflictsOnUpdate": "OVERWRITE"},
        "kubeProxyAddonOptions": {"enabled": True, "resolveConflictsOnCreate": "OVERWRITE",
                                  "resolveConflictsOnUpdate": "OVERWRITE"},
        "useDefaultVpcCni": False,
        "createOidcProvider": False,
        "tags": {"Name": name},
    }


def test_dev_hands_eks_cluster_exactly_these_inputs():
    cluster = dev().one(EKS_COMPONENT)
    assert cluster.remote is True
    assert _without_ids(cluster.inputs) == _expected("gpu-dev", ["203.0.113.0/24"], deletion_protection=False)


def test_prod_hands_eks_cluster_exactly_these_inputs():
    # Access entries are the component's own children, keyed by principal (tests/components/test_day_two.py).
    cluster = prod().one(EKS_COMPONENT)
    assert _without_ids(cluster.inputs) == _expected("gpu-prod", ["198.51.100.0/24"], deletion_protection=True)


def test_prod_gives_the_operations_role_a_view_entry_after_the_control_plane():
    result = prod()
    entry = result.one("aws:eks/accessEntry:AccessEntry", "eks-mcp-readonly")
    association = result.one("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "eks-mcp-readonly")
    assert entry.inputs["principalArn"] == "arn:aws:iam::111122223333:role/eks-mcp-readonly"
    assert entry.inputs["type"] == "STANDARD"
    assert association.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSViewPolicy"
    assert association.inputs["accessScope"] == {"type": "cluster"}
    assert result.one(EKS_COMPONENT).urn in entry.dependencies


def test_control_plane_uses_the_vpc_private_subnets_and_the_rotating_kms_key():
    result = dev()
    cluster = result.one(EKS_COMPONENT).inputs
    private = [s.id for s in result.of_type("aws:ec2/subnet:Subnet") if "-private-" in s.name]
    assert len(private) == 2
    assert sorted(cluster["subnetIds"]) == sorted(private)  # which subnets, not the order they registered in
    assert cluster["vpcId"] == result.one("aws:ec2/vpc:Vpc").id
    key = result.one("aws:kms/key:Key")
    assert key.inputs["enableKeyRotation"] is True
    assert cluster["encryptionConfigKeyArn"] == key.outputs["arn"]


def test_admin_principals_get_cluster_admin_access_entries():
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"]["adminPrincipalArns"] = ["arn:aws:iam::210987654321:role/platform-admins"]
    result = run(values)
    # (the shipped dev stack also lists its CI roles: the preview role's entry is there too)
    entry = result.one("aws:eks/accessEntry:AccessEntry", "gpu-dev-access-platform-admins-")
    association = result.one("aws:eks/accessPolicyAssociation:AccessPolicyAssociation", "platform-admins")
    assert entry.name == association.name
    assert entry.name.startswith("gpu-dev-access-platform-admins-")
    assert entry.inputs == {"clusterName": "gpu-dev", "principalArn": "arn:aws:iam::210987654321:role/platform-admins",
                            "type": "STANDARD"}
    assert association.inputs["policyArn"] == "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"


def test_public_endpoint_is_off_without_allowed_cidrs():
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"]["endpointPublicAccessCidrs"] = []
    cluster = run(values).one(EKS_COMPONENT).inputs
    assert cluster["endpointPublicAccess"] is False
    assert "publicAccessCidrs" not in cluster


@pytest.mark.parametrize(("support", "expected"), [("standard", "STANDARD"), ("extended", "EXTENDED")])
def test_support_type_reaches_the_upgrade_policy(support: str, expected: str):
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"]["supportType"] = support
    assert run(values).one(EKS_COMPONENT).inputs["upgradePolicy"] == {"supportType": expected}


def test_deletion_protection_defaults_to_on():
    values = copy.deepcopy(stack_values("dev"))
    del values["cluster"]["deletionProtection"]
    assert run(values).one(EKS_COMPONENT).inputs["deletionProtection"] is True


def test_kubernetes_provider_uses_the_kubeconfig_of_the_component():
    # Same cluster, server and CA as the component's kubeconfig; its own get-token arguments (test_day_two.py).
    result = dev()
    cluster = result.one(EKS_COMPONENT)
    provider = result.one("pulumi:providers:kubernetes")
    ours, theirs = json.loads(provider.inputs["kubeconfig"]), cluster.outputs["kubeconfig"]
    assert kubeconfig_endpoint_and_ca(ours) == kubeconfig_endpoint_and_ca(theirs)
    assert cluster.urn in provider.dependencies


def test_node_groups_and_add_ons_wait_for_the_control_plane():
    result = dev()
    cluster = result.one(EKS_COMPONENT)
    system = result.one("aws:eks/nodeGroup:NodeGroup", "system")
    assert cluster.urn in system.dependencies
    assert system.inputs["clusterName"] == "gpu-dev"


def test_gpu_bootstrap_reads_endpoint_and_ca_from_the_component_kubeconfig():
    result = dev()
    server, ca = kubeconfig_endpoint_and_ca(result.one(EKS_COMPONENT).outputs["kubeconfig"])
    template = next(r for r in result.of_type("aws:ec2/launchTemplate:LaunchTemplate") if "l4-spot" in r.name)
    script = base64.b64decode(template.inputs["userData"]).decode()
    assert f"--apiserver-endpoint {server}" in script
    assert f"--b64-cluster-ca {ca}" in script


def test_cluster_dns_ip_is_the_tenth_address_of_the_service_range():
    assert cluster_dns_ip(SERVICE_IPV4_CIDR) == "172.20.0.10"
    assert cluster_dns_ip("10.100.0.0/16") == "10.100.0.10"


# --- the mocks' answer, against the schema of the installed SDK ------------------------------------


def _sdk_outputs() -> dict[str, str]:
    """Output property name -> return annotation, from the `pulumi_eks.Cluster` getters of the installed SDK."""
    out: dict[str, str] = {}
    for _, member in inspect.getmembers(eks.Cluster):
        getter = getattr(member, "fget", None)
        name = getattr(getter, "_pulumi_name", None)
        if name:
            out[name] = str(getter.__annotations__.get("return"))
    return out


def test_sdk_under_test_is_pulumi_eks_4_4_0():
    from importlib.metadata import version  # noqa: PLC0415

    assert version("pulumi-eks") == "4.4.0"


def test_mock_outputs_are_exactly_the_plain_outputs_of_the_schema():
    sdk = _sdk_outputs()
    answered = eks_cluster_outputs("gpu-dev", {"name": "gpu-dev", "skipDefaultSecurityGroups": True})
    assert set(answered) | RESOURCE_REFERENCE_OUTPUTS == set(sdk)
    assert not set(answered) & RESOURCE_REFERENCE_OUTPUTS
    for name in RESOURCE_REFERENCE_OUTPUTS:
        assert "pulumi_aws" in sdk[name] or "outputs." in sdk[name], f"{name} is not a resource reference"
    for name, value in answered.items():
        expected = {"Output[str]": str, "Output[typing.Any]": dict}.get(sdk[name].split("output.", 1)[-1])
        assert expected is not None and isinstance(value, expected), (name, sdk[name])


def test_mock_kubeconfig_names_the_cluster_and_authenticates_with_aws_eks_get_token():
    answered = eks_cluster_outputs("gpu-dev", {"name": "gpu-dev"})
    config = answered["kubeconfig"]
    assert json.loads(answered["kubeconfigJson"]) == config
    server, ca = kubeconfig_endpoint_and_ca(config)
    assert server.startswith("https://") and server.endswith(".us-west-2.eks.amazonaws.com")
    assert ca
    args = config["users"][0]["user"]["exec"]["args"]
    assert args[:4] == ["eks", "get-token", "--cluster-name", "gpu-dev"]


def test_mock_auto_names_a_cluster_without_name_like_pulumi_eks():
    answered = eks_cluster_outputs("gpu", {})
    assert "--cluster-name" in answered["kubeconfig"]["users"][0]["user"]["exec"]["args"]
    name = answered["kubeconfig"]["users"][0]["user"]["exec"]["args"][3]
    assert name.startswith("gpu-eksCluster-")


# --- the support type at program start ------------------------------------------------------------


def _on_1_34(support: str) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"].update({"kubernetesVersion": "1.34", "supportType": support})
    for group in values["gpuNodeGroups"]:
        group["kubeletVersion"] = "1.34"
    return values


def test_past_standard_support_on_the_standard_upgrade_policy_stops_the_program():
    from datetime import date  # noqa: PLC0415

    from components.config import load_stack_config  # noqa: PLC0415

    with pytest.raises(ConfigError) as error:
        load_stack_config(_on_1_34("standard"), stack_file="Pulumi.dev.yaml", today=date(2026, 12, 15))
    assert 'cluster.kubernetesVersion = "1.34": EKS 1.34 left standard support on 2026-12-02' in str(error.value)
    assert "The upgrade policy is STANDARD, so EKS upgrades this control plane" in str(error.value)


def test_past_standard_support_on_the_extended_upgrade_policy_is_an_advisory_naming_the_price():
    from datetime import date  # noqa: PLC0415

    from components.config import load_stack_config, matrix_advisories  # noqa: PLC0415

    values = _on_1_34("extended")
    config = load_stack_config(values, stack_file="Pulumi.dev.yaml", today=date(2026, 12, 15))
    advisories = matrix_advisories(config, stack_file="Pulumi.dev.yaml", today=date(2026, 12, 15))
    assert any("costs USD 0.60 per hour in extended support instead of USD 0.10" in a for a in advisories)

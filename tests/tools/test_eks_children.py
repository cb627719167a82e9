"""The children pulumi-eks's Cluster registers, emulated offline (tools/engine/mocks/eks_children.py).

pulumi-eks's Construct runs during a preview and registers `aws:eks/cluster:Cluster` and the rest through the
engine, which analyzes them (pulumi/pulumi pkg/resource/deploy/source_eval.go lines 2826-2882). The emulation
is pinned to the pulumi-eks lines it comes from: tests/tools/fixtures/pulumi_eks_source.yaml holds their text
at the commit read (https://github.com/pulumi/pulumi-eks at 7bf0c1b1, v4.3.0-9; the project pins 4.4.0).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import RunPreview
from tests.result_view import entries
from tests.tools.test_phases import POLICY_CONFIG, TODAY, deployable_stack_file
from tools.engine.mocks import eks_children
from tools.engine.mocks.eks_children import (
    PULUMI_EKS_COMMIT,
    SOURCE,
    Child,
    Cite,
    construct_cluster,
    not_emulated,
    sha1hash,
    uncovered,
)
from tools.engine.records import UNKNOWN

PINNED = yaml.safe_load((Path(__file__).parent / "fixtures" / "pulumi_eks_source.yaml").read_text())

# The inputs components/cluster.py sends (tests/components/test_eks_control_plane.py pins them), in a first
# preview: the KMS key's ARN and the subnet ids are unknown.
INPUTS: dict[str, Any] = {
    "name": "gpu-prod", "version": "1.35", "subnetIds": [UNKNOWN, UNKNOWN], "endpointPrivateAccess": True,
    "endpointPublicAccess": True, "publicAccessCidrs": ["52.94.76.0/24"], "skipDefaultNodeGroup": True,
    "skipDefaultSecurityGroups": True, "authenticationMode": "API", "encryptionConfigKeyArn": UNKNOWN,
    "enabledClusterLogTypes": ["api", "audit", "authenticator"], "deletionProtection": True,
    "upgradePolicy": {"supportType": "STANDARD"}, "kubernetesServiceIpAddressRange": "172.20.0.0/16",
    "bootstrapSelfManagedAddons": False, "corednsAddonOptions": {"enabled": False},
    "kubeProxyAddonOptions": {"enabled": True}, "useDefaultVpcCni": False, "createOidcProvider": False,
    "tags": {"Name": "gpu-prod"},
}


def _construct(inputs: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any], Cite]]:
    children: dict[str, tuple[str, dict[str, Any], Cite]] = {}

    def register(child: Child) -> tuple[str, dict[str, Any]]:
        children[child.name] = (child.type, child.inputs, child.cite)
        return f"urn:{child.name}", {**child.inputs, "id": UNKNOWN, "arn": UNKNOWN}

    construct_cluster("urn:eks", "gpu-prod-eks", inputs, outputs={"kubeconfig": UNKNOWN}, partition="aws",
                      register=register)
    return children


@pytest.mark.parametrize("key", sorted(SOURCE))
def test_every_citation_holds_the_pinned_text_of_its_line(key: str) -> None:
    cite = SOURCE[key]
    assert PINNED["commit"].startswith(PULUMI_EKS_COMMIT)
    text = PINNED["files"][cite.path]["lines"][cite.line]
    assert cite.snippet in text, f"{cite.path}:{cite.line} reads {text!r}"


def test_the_children_carry_the_names_pulumi_eks_gives_them() -> None:
    children = _construct(INPUTS)
    # cluster.ts / servicerole.ts build each name from a template literal on the cited line.
    expected = {}
    for key in ("serviceRole.name", "cluster.name", "kubeProxy.name", "k8sProvider.name", "vpcCni.name"):
        template = re.search(r"`([^`]*)`", SOURCE[key].snippet)
        assert template is not None
        expected[key] = template.group(1).replace("${name}", "gpu-prod-eks")
    role = f"{expected['serviceRole.name']}-role"
    attachment = f"{expected['serviceRole.name']}-{sha1hash('arn:aws:iam::aws:policy/AmazonEKSClusterPolicy')}"
    assert set(children) == {*expected.values(), role, attachment}
    assert children[expected["cluster.name"]][0] == "aws:eks/cluster:Cluster"
    assert children[expected["cluster.name"]][2] == SOURCE["cluster"]
    # No access entry and no aws-auth ConfigMap for these inputs (no default node group, mode API).
    assert not any(t in ("aws:eks/accessEntry:AccessEntry", "kubernetes:core/v1:ConfigMap") for t, _, _ in
                   children.values())


def test_sha1hash_is_pulumi_eks_s_eight_hex_digits() -> None:
    assert SOURCE["sha1hash"].snippet == 'return shasum.digest("hex").substring(0, 8);'
    assert sha1hash("abc") == "a9993e36"  # SHA-1("abc") = a9993e36 4706816a ... (FIPS 180-2, appendix A.1)


def test_a_first_preview_leaves_encryption_config_unknown_as_a_whole_and_the_rest_known() -> None:
    cluster = _construct(INPUTS)["gpu-prod-eks-eksCluster"][1]

    assert cluster["encryptionConfig"] == UNKNOWN  # cluster.ts lines 592-606: an apply on the key's ARN
    assert cluster["version"] == "1.35"
    assert cluster["upgradePolicy"] == {"supportType": "STANDARD"}
    assert cluster["deletionProtection"] is True
    assert cluster["vpcConfig"]["publicAccessCidrs"] == ["52.94.76.0/24"]
    assert cluster["accessConfig"] == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}
    assert cluster["tags"] == {"Name": "gpu-prod"}  # the program's tags override pulumi-eks's `${name}-eksCluster`


def test_once_the_key_exists_encryption_config_names_it_for_secrets() -> None:
    arn = "arn:aws:kms:us-west-2:111122223333:key/k"
    cluster = _construct({**INPUTS, "encryptionConfigKeyArn": arn})["gpu-prod-eks-eksCluster"][1]

    assert cluster["encryptionConfig"] == {"provider": {"keyArn": arn}, "resources": ["secrets"]}


def test_inputs_that_change_the_emulated_children_are_named_not_half_emulated() -> None:
    assert uncovered(INPUTS) == []
    missing = uncovered({**INPUTS, "serviceRole": "urn:role", "autoMode": {"enabled": True}})
    assert [m.split(" ")[0] for m in missing] == ["autoMode", "serviceRole"]


def test_inputs_that_only_add_children_are_named_with_the_types_they_add() -> None:
    """pulumi-eks examples/managed-nodegroups-py: default security groups, aws-auth (no authenticationMode) and
    instance roles add children beside those emulated; they are named, and the rest is emulated."""
    assert not_emulated(INPUTS) == []
    extra = dict(not_emulated({**INPUTS, "skipDefaultSecurityGroups": None, "authenticationMode": None,
                                "instanceRoles": ["urn:r"], "skipDefaultNodeGroup": None}))
    assert [why.split(" ")[0] for why in extra] == ["skipDefaultNodeGroup", "skipDefaultSecurityGroups",
                                                    "authenticationMode", "instanceRoles"]
    assert "aws:autoscaling/group:Group" in next(k for w, k in extra.items() if w.startswith("skipDefaultNodeGroup"))


def test_create_oidc_provider_registers_the_provider_for_the_cluster_s_issuer() -> None:
    children = _construct({**INPUTS, "createOidcProvider": True})
    kind, oidc, cite = children["gpu-prod-eks-oidcProvider"]
    assert (kind, cite) == ("aws:iam/openIdConnectProvider:OpenIdConnectProvider", SOURCE["oidcProvider"])
    assert oidc["clientIdLists"] == ["sts.amazonaws.com"]
    assert oidc["url"] == UNKNOWN  # the cluster's issuer: unknown until the cluster exists (a first preview)
    assert "gpu-prod-eks-oidcProvider" not in _construct(INPUTS)
    assert not_emulated({**INPUTS, "createOidcProvider": True}) == []


def test_the_default_cluster_security_group_is_emulated_and_named_in_the_cluster_s_vpc_config() -> None:
    children = _construct({**INPUTS, "skipDefaultSecurityGroups": None, "vpcId": "vpc-1"})
    sg_type, sg, _ = children["gpu-prod-eks-eksClusterSecurityGroup"]
    assert (sg_type, sg["vpcId"], sg["revokeRulesOnDelete"]) == ("aws:ec2/securityGroup:SecurityGroup", "vpc-1", True)
    rule = children["gpu-prod-eks-eksClusterInternetEgressRule"][1]
    assert (rule["type"], rule["cidrBlocks"], rule["protocol"]) == ("egress", ["0.0.0.0/0"], "-1")
    assert children["gpu-prod-eks-eksCluster"][1]["vpcConfig"]["securityGroupIds"] == [UNKNOWN]
    assert "gpu-prod-eks-eksClusterSecurityGroup" not in _construct(INPUTS)


def _run(run_preview: RunPreview, stack: str, path: Path) -> Any:
    args = ["--stack", stack, "--config-file", str(path), "--phase", "preview", *TODAY, "--json"]
    if stack in POLICY_CONFIG:
        args += ["--policy-config", str(POLICY_CONFIG[stack])]
    return run_preview(*args)


def test_our_first_preview_judges_the_emulated_cluster_as_the_real_preview_does(
    run_preview: RunPreview, tmp_path: Path,
) -> None:
    run = _run(run_preview, "dev", deployable_stack_file("dev", tmp_path))

    assert run.returncode == 0, run.explain()
    doc = run.json()
    cluster = next(r for r in doc["resources"] if r["type"] == "aws:eks/cluster:Cluster")
    assert cluster["inputs"]["encryptionConfig"] == UNKNOWN
    assert cluster["urn"] in {c["urn"] for c in doc["emulatedChildren"]}
    assert doc["notSeenOffline"] == []
    policies = {v["policy"] for v in entries(doc)}
    # The control-plane version is now visible to the stack policies, as in the real preview.
    assert "gpu-operator-kubernetes-supported-caveats" not in policies
    assert not [v for v in entries(doc) if "can't run policy" in v["message"]]


def test_prod_s_deletion_protection_and_support_type_gate_the_first_preview(
    run_preview: RunPreview, tmp_path: Path,
) -> None:
    path = deployable_stack_file("prod", tmp_path)
    text = path.read_text()
    assert "deletionProtection: true" in text and "supportType: standard" in text
    path.write_text(text.replace("deletionProtection: true", "deletionProtection: false")
                    .replace("supportType: standard", "supportType: extended"))

    run = _run(run_preview, "prod", path)

    assert run.returncode == 1, run.explain()
    found = [v for v in run.violations() if v["policy"] == "eks-control-plane-hardened"]
    assert {v["enforcement"] for v in found} == {"mandatory"}
    assert {v["blocks"] for v in found} == {"before-create"}
    messages = " ".join(v["message"] for v in found)
    assert "(deletionProtection)" in messages and "EXTENDED support type" in messages
    assert "encryptionConfig" not in messages  # unknown in a first preview: it waits, silently


def _pinned_pulumi_eks() -> str:
    lines = (Path(__file__).resolve().parents[2] / "requirements.txt").read_text().splitlines()
    return next(line.split("==", 1)[1].strip() for line in lines if line.startswith("pulumi-eks=="))


def test_the_pulumi_eks_pin_is_the_one_the_emulation_was_accepted_for() -> None:
    # A new pulumi-eks pin changes what its Construct registers: read its source, move PULUMI_EKS_COMMIT,
    # PULUMI_EKS_DESCRIBE, the fixture and EMULATED_FOR_PIN together.
    assert _pinned_pulumi_eks() == eks_children.EMULATED_FOR_PIN


# The mirror's newest pulumi/pulumi-eks snapshot (re-fetched 2026-12-02) still ends at master 7bf0c1b1 (2026-08-12;
# tags end at v4.3.0); d3bdb2e3 is the unmerged PR branch liutao-samsung/fix-service-url (v4.0.1-7), not newer.
# PyPI's 4.4.0a1790235441 pre-release (a 2026-09-24 build) shows v4.4.0 was tagged after the snapshot.
@pytest.mark.xfail(strict=True, reason="the source read is pulumi-eks v4.3.0-9-g7bf0c1b1; no source snapshot holds "
                                       "the pinned 4.4.0's tag (the newest, re-fetched, ends at master 7bf0c1b1; "
                                       "d3bdb2e3 is an older v4.0.1-7 PR branch): read v4.4.0, then drop this marker")
def test_the_emulated_source_is_the_pinned_release() -> None:
    assert eks_children.PULUMI_EKS_DESCRIBE.split("-")[0] == f"v{_pinned_pulumi_eks()}"


def test_each_child_records_the_property_dependencies_the_engine_would() -> None:
    """An input built from another resource's output carries that resource (the Node SDK sends it per property): the
    role for the control plane's roleArn, the security group for its vpcConfig and the egress rule, the control plane
    for what reads its name."""
    children: dict[str, Child] = {}

    def register(child: Child) -> tuple[str, dict[str, Any]]:
        children[child.name] = child
        return f"urn:{child.name}", {**child.inputs, "id": UNKNOWN, "arn": UNKNOWN}

    inputs = {**INPUTS, "skipDefaultSecurityGroups": False, "vpcId": "vpc-1", "createOidcProvider": True}
    construct_cluster("urn:eks", "gpu-prod-eks", inputs, outputs={"kubeconfig": UNKNOWN}, partition="aws",
                      register=register)
    control_plane = children["gpu-prod-eks-eksCluster"].property_dependencies
    assert control_plane["roleArn"] == ("urn:gpu-prod-eks-eksRole-role",)
    assert control_plane["vpcConfig"] == ("urn:gpu-prod-eks-eksClusterSecurityGroup",)
    assert children["gpu-prod-eks-eksClusterSecurityGroup"].property_dependencies == {}
    assert children["gpu-prod-eks-eksClusterInternetEgressRule"].property_dependencies == {
        "securityGroupId": ("urn:gpu-prod-eks-eksClusterSecurityGroup",)}
    assert children["gpu-prod-eks-kube-proxy"].property_dependencies == {
        "clusterName": ("urn:gpu-prod-eks-eksCluster",)}
    assert children["gpu-prod-eks-oidcProvider"].property_dependencies == {"url": ("urn:gpu-prod-eks-eksCluster",)}

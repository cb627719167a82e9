"""The children pulumi-eks's `eks:index:Cluster` registers through the engine, emulated for our inputs.

A remote component's inputs are never analyzed (its provider registers the component itself with `{}` props,
which is: tools/engine/view.py): its provider's Construct runs, during a preview too, and registers
children that the engine analyzes like any resource. The pulumi-eks
plugin (Node.js) does not run offline, so `construct_cluster` registers, for the inputs the program sends,
the children pulumi-eks's `createCore` registers, with the values a preview gives them: a value pulumi-eks
builds with `apply` over an unknown input is unknown as a whole (a first preview: `encryptionConfig`, built
from the KMS key's ARN), a plain input passes through known (`version`, `upgradePolicy`,
`deletionProtection`, the public CIDRs).

Read at pulumi/pulumi-eks commit 7bf0c1b1 (`git describe`: v4.3.0-9-g7bf0c1b1), the newest snapshot the
source mirror holds (re-fetched 2026-12-02: master still 7bf0c1b1, tags end at v4.3.0); the project pins
pulumi-eks 4.4.0 (requirements.txt), whose source could not be read here. What was checked instead: the
generated Python SDKs of 4.3.0 and 4.4.0 (built from the provider's schema) declare the same resources,
inputs and outputs (diff of the wheels: only code-generation and whitespace changes), so the interface is
unchanged; what `createCore` registers in 4.4.0 is still unread. The lines each child comes from are in
`SOURCE`; tests/tools/fixtures/pulumi_eks_source.yaml holds their text at that commit and
tests/tools/test_eks_children.py pins the emulation to it.

Emulated: the `eks:index:ServiceRole` component with its `aws:iam/role:Role` and the AmazonEKSClusterPolicy
attachment, the cluster security group and its egress rule (unless `skipDefaultSecurityGroups`), the
`aws:eks/cluster:Cluster`, the kube-proxy `aws:eks/addon:Addon`, the cluster's `pulumi:providers:kubernetes`, and
the `eks:index:VpcCniAddon` with its `aws:eks/addon:Addon`, and the OIDC provider with `createOidcProvider`
(its CA thumbprint, which pulumi-eks reads over TLS, unknown).
Not emulated: the add-ons' `addonVersion` (pulumi-eks looks it up with `aws.eks.getAddonVersion`, which
the mocks do not answer: unknown here) and the VPC CNI's `configurationValues`; the children use the
stack's default AWS provider (pulumi-eks's own @pulumi/aws version is not modelled). Inputs that change the emulated
children (`UNCOVERED`: Auto Mode, a service role or cluster security group of the program's own, ...) make
`construct_cluster` emulate nothing and say why, rather than judge half its children. Inputs that only add children
beside them (`ADDITIVE`: the default node group, the node security group, the aws-auth ConfigMap, access entries,
CoreDNS, Fargate, StorageClasses) are emulated except what they add, which is named with its
types: tools/engine/unseen.py makes the verdicts that could read those types pending.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tools.engine.records import UNKNOWN, has_unknown

PULUMI_EKS_REPO = "https://github.com/pulumi/pulumi-eks"
PULUMI_EKS_COMMIT = "7bf0c1b1"
PULUMI_EKS_DESCRIBE = "v4.3.0-9-g7bf0c1b1"
# The pulumi-eks pin (requirements.txt) this emulation is accepted for, although its tag's source was not read
# (module docstring). tests/tools/test_eks_children.py fails when the pin moves away from it, so a new pin is
# read before it is emulated, and shows (strict xfail) that PULUMI_EKS_DESCRIBE is not that pin's tag yet.
EMULATED_FOR_PIN = "4.4.0"
CLUSTER_TS = "nodejs/eks/cluster/cluster.ts"
SERVICE_ROLE_TS = "nodejs/eks/servicerole.ts"
CNI_ADDON_TS = "nodejs/eks/addons/cni-addon.ts"


@dataclass(frozen=True)
class Cite:
    """One source line at PULUMI_EKS_COMMIT: the file, the line number and a snippet of its text."""

    path: str
    line: int
    snippet: str

    def url(self) -> str:
        return f"{PULUMI_EKS_REPO}/blob/{PULUMI_EKS_COMMIT}/{self.path}#L{self.line}"


# What each emulated value comes from. The test reads every line's text from the pinned fixture.
SOURCE: dict[str, Cite] = {
    "serviceRole": Cite(CLUSTER_TS, 529, "eksServiceRole = new ServiceRole("),
    "serviceRole.name": Cite(CLUSTER_TS, 530, "`${name}-eksRole`"),
    "serviceRole.policy": Cite(CLUSTER_TS, 516, 'const managedPolicies = ["AmazonEKSClusterPolicy"];'),
    "serviceRole.service": Cite(CLUSTER_TS, 533, 'service: "eks.amazonaws.com",'),
    "serviceRole.description": Cite(CLUSTER_TS, 534, 'description: "Allows EKS to manage clusters on your behalf.",'),
    "serviceRole.actions": Cite(CLUSTER_TS, 541, 'assumeRoleActions: ["sts:AssumeRole", "sts:TagSession"],'),
    "role": Cite(SERVICE_ROLE_TS, 89, "const role = new aws.iam.Role("),
    "role.name": Cite(SERVICE_ROLE_TS, 90, "`${name}-role`"),
    "attachment": Cite(SERVICE_ROLE_TS, 102, "new aws.iam.RolePolicyAttachment("),
    "attachment.name": Cite(SERVICE_ROLE_TS, 103, "`${name}-${sha1hash(policy.id)}`"),
    "sha1hash": Cite(SERVICE_ROLE_TS, 24, 'return shasum.digest("hex").substring(0, 8);'),
    "encryptionConfig": Cite(CLUSTER_TS, 600, "encryptionConfig = encryptionProvider.apply("),
    "encryptionConfig.resources": Cite(CLUSTER_TS, 604, 'resources: ["secrets"]'),
    "clusterSecurityGroup": Cite(CLUSTER_TS, 555, "eksClusterSecurityGroup = new aws.ec2.SecurityGroup("),
    "clusterSecurityGroup.name": Cite(CLUSTER_TS, 556, "`${name}-eksClusterSecurityGroup`,"),
    "clusterSecurityGroup.revokeRulesOnDelete": Cite(CLUSTER_TS, 559, "revokeRulesOnDelete: true,"),
    "clusterEgressRule": Cite(CLUSTER_TS, 572, "const eksClusterInternetEgressRule = new aws.ec2.SecurityGroupRule("),
    "clusterEgressRule.name": Cite(CLUSTER_TS, 573, "`${name}-eksClusterInternetEgressRule`,"),
    "vpcConfig.securityGroupIds": Cite(CLUSTER_TS, 702, "securityGroupIds: eksClusterSecurityGroup"),
    "cluster": Cite(CLUSTER_TS, 687, "const eksCluster = new aws.eks.Cluster("),
    "cluster.name": Cite(CLUSTER_TS, 688, "`${name}-eksCluster`"),
    "cluster.bootstrapSelfManagedAddons": Cite(CLUSTER_TS, 700, ": args.bootstrapSelfManagedAddons ?? true,"),
    "cluster.publicAccessCidrs": Cite(CLUSTER_TS, 710,
                                      ".all([args.publicAccessCidrs, args.endpointPublicAccess ?? true])"),
    "cluster.version": Cite(CLUSTER_TS, 722, "version: args.version,"),
    "cluster.tags": Cite(CLUSTER_TS, 727, "Name: `${name}-eksCluster`,"),
    "cluster.encryptionConfig": Cite(CLUSTER_TS, 732, "encryptionConfig,"),
    "cluster.accessConfig": Cite(CLUSTER_TS, 739, "bootstrapClusterCreatorAdminPermissions: true,"),
    "cluster.upgradePolicy": Cite(CLUSTER_TS, 742, "upgradePolicy: args.upgradePolicy,"),
    "cluster.deletionProtection": Cite(CLUSTER_TS, 743, "deletionProtection: args.deletionProtection,"),
    "kubernetesNetworkConfig": Cite(CLUSTER_TS, 616,
                                    'serviceIpv4Cidr: ipFamily === "ipv4" ? serviceIpv4Cidr : undefined,'),
    "oidcProvider": Cite(CLUSTER_TS, 1255, "oidcProvider = new aws.iam.OpenIdConnectProvider("),
    "oidcProvider.name": Cite(CLUSTER_TS, 1256, "`${name}-oidcProvider`,"),
    "oidcProvider.clientIdLists": Cite(CLUSTER_TS, 1258, 'clientIdLists: ["sts.amazonaws.com"],'),
    "oidcProvider.url": Cite(CLUSTER_TS, 1259, "url: eksCluster.identities[0].oidcs[0].issuer,"),
    "oidcProvider.thumbprint": Cite(CLUSTER_TS, 1252, "const fingerprint = getIssuerCAThumbprint("),
    "kubeProxy": Cite(CLUSTER_TS, 779, "const kubeProxyAddon = new aws.eks.Addon("),
    "kubeProxy.name": Cite(CLUSTER_TS, 780, "`${name}-kube-proxy`"),
    "k8sProvider": Cite(CLUSTER_TS, 914, "const k8sProvider = new k8s.Provider("),
    "k8sProvider.name": Cite(CLUSTER_TS, 915, "`${name}-eks-k8s`"),
    "accessEntries": Cite(CLUSTER_TS, 1033, "if (defaultInstanceRole) {"),
    "noInstanceRole": Cite(CLUSTER_TS, 946, "(!args.skipDefaultNodeGroup && args.createInstanceRole === undefined)"),
    "awsAuth": Cite(CLUSTER_TS, 1002, "if (supportsConfigMap(args.authenticationMode)) {"),
    "vpcCni": Cite(CLUSTER_TS, 1095, "? new VpcCniAddon("),
    "vpcCni.name": Cite(CLUSTER_TS, 1096, "`${name}-vpc-cni`"),
    "vpcCniAddon": Cite(CNI_ADDON_TS, 297, "const addon = new aws.eks.Addon("),
}

# Inputs that change the children this module emulates (the cluster's own inputs, its role): with one of them
# `construct_cluster` emulates nothing rather than half of it. (input, test, why).
UNCOVERED: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("autoMode", lambda v: isinstance(v, Mapping) and bool(v.get("enabled")), "EKS Auto Mode's compute config"),
    ("serviceRole", lambda v: v is not None, "a cluster without its own service role"),
    ("instanceRole", lambda v: v is not None, "an instance profile and access entry"),
    ("createInstanceRole", lambda v: v is True, "an instance role and its access entry"),
    ("creationRoleProvider", lambda v: v is not None, "a creation-role provider"),
    ("clusterSecurityGroup", lambda v: v is not None, "a cluster security group of the program's own"),
)

_NODE_KINDS = ("aws:autoscaling/group:Group", "aws:ec2/launchTemplate:LaunchTemplate", "aws:iam/",
               "aws:ec2/securityGroup", "aws:eks/accessEntry:AccessEntry", "kubernetes:core/v1:ConfigMap",
               "aws:eks/addon:Addon")

# Inputs that only add children this module does not emulate, beside those it does: (input, test, why, the types
# of what they add). The preview emulates the rest and tools/engine/unseen.py makes the verdicts that could read
# those types pending (cluster.ts: the default node group 2154-2190, the node security group 2120-2140, aws-auth
# 1002, access entries 1033, the OIDC provider 1247-1263, CoreDNS 1175-1212, Fargate 1150-1170, StorageClasses).
ADDITIVE: tuple[tuple[str, Callable[[Any], bool], str, tuple[str, ...]], ...] = (
    ("skipDefaultNodeGroup", lambda v: v is not True, "a default node group, its instance role and CoreDNS",
     _NODE_KINDS),
    ("skipDefaultSecurityGroups", lambda v: v is not True, "the node security group and its rules",
     ("aws:ec2/securityGroup:SecurityGroup", "aws:ec2/securityGroupRule:SecurityGroupRule")),
    ("authenticationMode", lambda v: v != "API", "the aws-auth ConfigMap", ("kubernetes:core/v1:ConfigMap",)),
    ("accessEntries", bool, "access entries", ("aws:eks/accessEntry:AccessEntry", "aws:eks/accessPolicyAssociation")),
    ("corednsAddonOptions", lambda v: isinstance(v, Mapping) and v.get("enabled") is True, "the CoreDNS add-on",
     ("aws:eks/addon:Addon",)),
    ("fargate", bool, "a Fargate profile and its pod execution role",
     ("aws:eks/fargateProfile:FargateProfile", "aws:iam/", "aws:eks/addon:Addon")),
    ("instanceRoles", lambda v: v is not None, "instance role mappings (aws-auth or access entries)",
     ("kubernetes:core/v1:ConfigMap", "aws:eks/accessEntry:AccessEntry")),
    ("storageClasses", bool, "StorageClasses", ("kubernetes:storage.k8s.io/v1:StorageClass",)),
)

@dataclass(frozen=True)
class Child:
    """One registration pulumi-eks makes: type, name, parent URN, inputs, whether custom, where it comes from."""

    type: str
    name: str
    parent: str
    inputs: dict[str, Any]
    custom: bool
    cite: Cite
    depends_on: tuple[str, ...] = ()
    ignore_changes: tuple[str, ...] = ()
    # Per input, the resources whose outputs it is built from: what the engine records as property dependencies
    # (an Output input carries its resources; the SDK sends them per property, and `dependencies` holds them too).
    property_dependencies: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


# Registers a child the way the engine does; hands back its URN and state (with `id`).
Register = Callable[[Child], tuple[str, dict[str, Any]]]


def applied(*sources: Any, build: Callable[[], Any]) -> Any:
    """`pulumi.all(sources).apply(build)`: unknown as a whole when a source holds an unknown (a preview)."""
    return UNKNOWN if any(has_unknown(s) for s in sources) else build()


def sha1hash(text: str) -> str:
    """pulumi-eks's `sha1hash` (servicerole.ts): the first 8 hex digits of the SHA-1 of `text`."""
    return hashlib.sha1(text.encode()).hexdigest()[:8]


def uncovered(inputs: Mapping[str, Any]) -> list[str]:
    """Why the emulation would be wrong for these inputs (it then emulates nothing): one entry per such input."""
    return [f"{key} ({why})" for key, test, why in UNCOVERED if test(inputs.get(key))]


def not_emulated(inputs: Mapping[str, Any]) -> list[tuple[str, tuple[str, ...]]]:
    """What pulumi-eks adds for these inputs beside the emulated children: (why, the types it adds) per input."""
    return [(f"{key} ({why})", kinds) for key, test, why, kinds in ADDITIVE if test(inputs.get(key))]


def _without_none(value: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


def construct_cluster(urn: str, name: str, inputs: Mapping[str, Any], *, outputs: Mapping[str, Any],
                      partition: str, register: Register) -> None:
    """Register, through `register`, the children pulumi-eks registers for an `eks:index:Cluster`.

    `urn`/`name`: the component's; `inputs`: what the program sent; `outputs`: what the component answered
    (its kubeconfig); the caller checked `uncovered(inputs)` is empty.

    Each child records the property dependencies pulumi-eks's own outputs give it (the role for the control plane's
    `roleArn`, the security group for its `vpcConfig`, the control plane for what reads its name). The program's
    dependencies of the component's inputs (a VPC's subnets) are not forwarded: a value they give a child is unknown
    where they are (an awsx VPC's outputs), and a policy that reads it says so (tools/engine/unseen.py).
    """

    def deps(**by_key: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
        return {k: tuple(dict.fromkeys(v)) for k, v in by_key.items() if v}

    tags = inputs.get("tags")
    # The service role (cluster.ts 514-543; servicerole.ts 73-110).
    role_component = f"{name}-eksRole"
    policy_id = "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
    policy_arn = f"arn:{partition}:iam::aws:policy/AmazonEKSClusterPolicy"
    actions = ["sts:AssumeRole", "sts:TagSession"]
    role_urn, _ = register(Child("eks:index:ServiceRole", role_component, urn, _without_none({
        "service": "eks.amazonaws.com", "description": "Allows EKS to manage clusters on your behalf.",
        "managedPolicyArns": [{"id": policy_id, "arn": policy_arn}], "tags": tags, "assumeRoleActions": actions,
    }), False, SOURCE["serviceRole"], (), ()))
    assume = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Action": actions, "Effect": "Allow", "Principal": {"Service": ["eks.amazonaws.com"]}}]},
        separators=(",", ":"))
    iam_role, role_out = register(Child("aws:iam/role:Role", f"{role_component}-role", role_urn, _without_none({
        "description": "Allows EKS to manage clusters on your behalf.", "assumeRolePolicy": assume, "tags": tags,
    }), True, SOURCE["role"], (), ()))
    attachment, _ = register(Child("aws:iam/rolePolicyAttachment:RolePolicyAttachment",
                             f"{role_component}-{sha1hash(policy_id)}", role_urn,
                             {"policyArn": policy_arn, "role": role_out.get("id", UNKNOWN)}, True,
                             SOURCE["attachment"], (iam_role,), (), deps(role=(iam_role,))))

    # The cluster security group and its egress rule, unless skipped (cluster.ts 548-585).
    security_groups = None
    sg_deps: tuple[str, ...] = ()
    if inputs.get("skipDefaultSecurityGroups") is not True:
        sg_name = f"{name}-eksClusterSecurityGroup"
        sg_urn, sg_out = register(Child("aws:ec2/securityGroup:SecurityGroup", sg_name, urn, {
            "vpcId": inputs.get("vpcId", UNKNOWN),  # else the default VPC, which pulumi-eks looks up
            "revokeRulesOnDelete": True,
            "tags": applied(tags, inputs.get("clusterSecurityGroupTags"), build=lambda: {
                "Name": sg_name, **(inputs.get("clusterSecurityGroupTags") or {}), **(tags or {})}),
        }, True, SOURCE["clusterSecurityGroup"], (), ()))
        register(Child("aws:ec2/securityGroupRule:SecurityGroupRule", f"{name}-eksClusterInternetEgressRule", urn, {
            "description": "Allow internet access.", "type": "egress", "fromPort": 0, "toPort": 0, "protocol": "-1",
            "cidrBlocks": ["0.0.0.0/0"], "securityGroupId": sg_out.get("id", UNKNOWN),
        }, True, SOURCE["clusterEgressRule"], (sg_urn,), (), deps(securityGroupId=(sg_urn,))))
        security_groups = [sg_out.get("id", UNKNOWN)]
        sg_deps = (sg_urn,)

    # The cluster (cluster.ts 592-606 and 687-760).
    key_arn = inputs.get("encryptionConfigKeyArn")
    encryption = None if key_arn is None else applied(
        key_arn, build=lambda: {"provider": {"keyArn": key_arn}, "resources": ["secrets"]})
    cidrs = inputs.get("publicAccessCidrs")
    public = inputs.get("endpointPublicAccess")
    service_cidr = inputs.get("kubernetesServiceIpAddressRange")
    ip_family = inputs.get("ipFamily")
    network = None
    if service_cidr or ip_family:
        network = applied(service_cidr, ip_family, build=lambda: _without_none({
            "serviceIpv4Cidr": service_cidr if (ip_family or "ipv4") == "ipv4" else None,
            "ipFamily": ip_family or "ipv4"}))
    mode = inputs.get("authenticationMode")
    cluster_inputs = _without_none({
        "name": inputs.get("name"),
        "roleArn": role_out.get("arn", UNKNOWN),
        "kubernetesNetworkConfig": network,
        "bootstrapSelfManagedAddons": inputs.get("bootstrapSelfManagedAddons", True),
        "vpcConfig": _without_none({
            "securityGroupIds": security_groups,
            "subnetIds": inputs.get("subnetIds"),
            "endpointPrivateAccess": inputs.get("endpointPrivateAccess"),
            "endpointPublicAccess": public,
            "publicAccessCidrs": None if not cidrs else applied(cidrs, public, build=lambda: cidrs),
        }),
        "version": inputs.get("version"),
        "enabledClusterLogTypes": inputs.get("enabledClusterLogTypes"),
        "tags": applied(tags, inputs.get("clusterTags"), build=lambda: {
            "Name": f"{name}-eksCluster", **(inputs.get("clusterTags") or {}), **(tags or {})}),
        "encryptionConfig": encryption,
        "accessConfig": {"authenticationMode": mode, "bootstrapClusterCreatorAdminPermissions": True} if mode else None,
        "upgradePolicy": inputs.get("upgradePolicy"),
        "deletionProtection": inputs.get("deletionProtection"),
    })
    cluster_urn, cluster_out = register(Child(
        "aws:eks/cluster:Cluster", f"{name}-eksCluster", urn, cluster_inputs, True, SOURCE["cluster"],
        (iam_role, attachment), ("accessConfig.bootstrapClusterCreatorAdminPermissions", "bootstrapSelfManagedAddons"),
        deps(roleArn=(iam_role,), vpcConfig=sg_deps)))
    cluster_name = cluster_out.get("name", UNKNOWN)

    if inputs.get("createOidcProvider") is True:  # cluster.ts 1247-1263
        identities = cluster_out.get("identities", UNKNOWN)
        register(Child("aws:iam/openIdConnectProvider:OpenIdConnectProvider", f"{name}-oidcProvider", urn, {
            "clientIdLists": ["sts.amazonaws.com"],
            "url": applied(identities, build=lambda: identities[0]["oidcs"][0]["issuer"]),
            # pulumi-eks reads the issuer's CA thumbprint over TLS when it runs (getIssuerCAThumbprint): not offline.
            "thumbprintLists": [UNKNOWN],
        }, True, SOURCE["oidcProvider"], (), (), deps(url=(cluster_urn,))))

    kube_proxy = inputs.get("kubeProxyAddonOptions") or {}
    if kube_proxy.get("enabled", True):  # cluster.ts 764: on unless Auto Mode
        register(Child("aws:eks/addon:Addon", f"{name}-kube-proxy", urn, _without_none({
            "clusterName": cluster_name, "addonName": "kube-proxy", "preserve": True, "tags": tags,
            "resolveConflictsOnCreate": kube_proxy.get("resolveConflictsOnCreate", "OVERWRITE"),
            "resolveConflictsOnUpdate": kube_proxy.get("resolveConflictsOnUpdate", "OVERWRITE"),
            "addonVersion": kube_proxy.get("version", UNKNOWN),
        }), True, SOURCE["kubeProxy"], (cluster_urn,), (), deps(clusterName=(cluster_urn,))))

    kubeconfig = outputs.get("kubeconfig", UNKNOWN)
    register(Child("pulumi:providers:kubernetes", f"{name}-eks-k8s", urn, {
        "kubeconfig": applied(kubeconfig, build=lambda: json.dumps(kubeconfig, separators=(",", ":"))),
    }, True, SOURCE["k8sProvider"], (), ()))

    if inputs.get("useDefaultVpcCni") is not True:  # cluster.ts 1091-1092
        cni_urn, _ = register(Child("eks:index:VpcCniAddon", f"{name}-vpc-cni", urn, _without_none({
            "clusterName": cluster_name, "clusterVersion": inputs.get("version"), "tags": tags,
        }), False, SOURCE["vpcCni"], (), ()))
        register(Child("aws:eks/addon:Addon", f"{name}-vpc-cni", cni_urn, _without_none({
            "clusterName": cluster_name, "addonVersion": UNKNOWN, "addonName": "vpc-cni",
            "resolveConflictsOnCreate": "OVERWRITE", "resolveConflictsOnUpdate": "OVERWRITE", "preserve": True,
            "tags": tags,
        }), True, SOURCE["vpcCniAddon"], (cluster_urn,), (), deps(clusterName=(cluster_urn,))))

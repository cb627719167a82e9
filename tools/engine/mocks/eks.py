"""What the offline preview answers for pulumi-eks's `eks:index:Cluster`, a remote component.

The real children (the `aws:eks/cluster:Cluster`, its security groups, IAM role, add-ons, OIDC provider)
are registered by pulumi-eks's Node.js provider plugin, which does not run offline: the recording mocks
see one `eks:index:Cluster` with its inputs and answer it with the outputs below, shaped as the
component's schema says. The children themselves, which the real `pulumi preview` judges, are emulated
from pulumi-eks's source by tools/engine/mocks/eks_children.py.

Outputs answered: every output of the schema whose type is plain data (strings, the kubeconfig object).
Outputs left out: the resource references (`eksCluster`, `core`, `awsProvider`, `instanceRoles`,
`clusterSecurityGroup`, `nodeSecurityGroup`, `eksClusterIngressRule`, `defaultNodeGroup`), which a
mock cannot hand back as live resources; the program reads none of them.

Source: the output properties of `pulumi_eks.Cluster` in the installed SDK (pulumi-eks 4.4.0,
`pulumi_eks/cluster.py`), which tests/components/test_eks_control_plane.py checks these keys against;
the schema they are generated from is
https://github.com/pulumi/pulumi-eks/blob/master/provider/cmd/pulumi-resource-eks/schema.json
(`resources["eks:index:Cluster"].properties`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from tools.engine.mocks.eks_children import ADDITIVE, uncovered
from tools.engine.mocks.values import (
    MockContext,
    ResourceRequest,
    certificate_authority,
    eks_endpoint,
    eks_oidc_issuer,
    stable_hex,
)
from tools.engine.records import UNKNOWN

# The outputs that reference other resources; see the module docstring.
RESOURCE_REFERENCE_OUTPUTS: frozenset[str] = frozenset({
    "eksCluster", "core", "awsProvider", "instanceRoles", "clusterSecurityGroup", "nodeSecurityGroup",
    "eksClusterIngressRule", "defaultNodeGroup",
})


def eks_kubeconfig(cluster: str, region: str) -> dict[str, Any]:
    """The kubeconfig pulumi-eks generates: one cluster, `aws eks get-token` for the user.

    Source: https://github.com/pulumi/pulumi-eks/blob/master/nodejs/eks/cluster/cluster.ts (generateKubeconfig)
    Source: https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html
    """
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{
            "name": "kubernetes",
            "cluster": {"server": eks_endpoint(cluster, region),
                        "certificate-authority-data": certificate_authority(cluster)},
        }],
        "contexts": [{"name": "aws", "context": {"cluster": "kubernetes", "user": "aws"}}],
        "current-context": "aws",
        "users": [{
            "name": "aws",
            "user": {"exec": {
                "apiVersion": "client.authentication.k8s.io/v1beta1",
                "command": "aws",
                "args": ["eks", "get-token", "--cluster-name", cluster, "--output", "json"],
            }},
        }],
    }


def eks_cluster_name(name: str, inputs: Mapping[str, Any]) -> str:
    """The EKS cluster's name: `inputs["name"]` when given, else pulumi's auto-name of `<name>-eksCluster`."""
    given = inputs.get("name")
    return given if isinstance(given, str) else f"{name}-eksCluster-{stable_hex('eks-name', name, length=7)}"


def eks_cluster_outputs(name: str, inputs: dict[str, Any], *, region: str = "us-west-2",
                        partition: str = "aws", account: str = "123456789012") -> dict[str, Any]:
    """The plain-data outputs of an `eks:index:Cluster` registered as `name` with `inputs`.

    The EKS cluster is called `inputs["name"]` when given; pulumi-eks otherwise auto-names it
    `<name>-eksCluster-<suffix>`.
    """
    cluster = eks_cluster_name(name, inputs)
    config = eks_kubeconfig(cluster, region)
    issuer = eks_oidc_issuer(cluster, region).removeprefix("https://")
    # skipDefaultSecurityGroups: clusterSecurityGroupId is the security group EKS creates for the cluster,
    # and pulumi-eks creates no node security group or ingress rule.
    own_groups = not inputs.get("skipDefaultSecurityGroups")
    return {
        "kubeconfig": config,
        "kubeconfigJson": json.dumps(config),
        "clusterSecurityGroupId": "sg-" + stable_hex("cluster-sg", cluster),
        "nodeSecurityGroupId": "sg-" + stable_hex("node-sg", cluster) if own_groups else "",
        "clusterIngressRuleId": "sgr-" + stable_hex("ingress", cluster) if own_groups else "",
        "oidcIssuer": issuer,
        "oidcProviderUrl": issuer,
        "oidcProviderArn": f"arn:{partition}:iam::{account}:oidc-provider/{issuer}",
        "defaultNodeGroupAsgName": "",
        "fargateProfileId": "",
        "fargateProfileStatus": "",
        "autoModeNodeRoleName": "",
    }


# The outputs each part of the Cluster that is not emulated answers (tools/engine/mocks/eks_children.py, ADDITIVE):
# pulumi-eks reads them from the children that part registers (cluster.ts: the default node group's ASG name,
# 2154-2190; the node security group and its ingress rule, 2120-2140; the Fargate profile, 1150-1170).
NOT_EMULATED_OUTPUTS: dict[str, tuple[str, ...]] = {
    "skipDefaultNodeGroup": ("defaultNodeGroupAsgName",),
    "skipDefaultSecurityGroups": ("nodeSecurityGroupId", "clusterIngressRuleId"),
    "fargate": ("fargateProfileId", "fargateProfileStatus"),
}


def answer_eks_cluster(req: ResourceRequest) -> dict[str, Any]:
    """The RESOURCE_OUTPUTS handler for `eks:index:Cluster` (registered by tools/engine/mocks/monitor.py).

    What the gate does not emulate it does not know, in any phase: a Cluster it does not emulate (`uncovered`)
    answers every output unknown, and one it emulates but for some children (`ADDITIVE`) answers the outputs those
    children give unknown. A made-up value there (a kubeconfig, a security group id) would let a policy judge it
    as known, where the real preview reads the provider's; unknown, a policy that reads it says it cannot run
    (tools/engine/unseen.py makes that `-pending`, naming the Cluster).
    """
    ctx = req.ctx
    outputs = eks_cluster_outputs(req.name, req.inputs, region=ctx.region, partition=ctx.partition,
                                  account=ctx.account)
    if uncovered(req.inputs):
        return dict.fromkeys(outputs, UNKNOWN)
    added = [k for key, test, _, _ in ADDITIVE if test(req.inputs.get(key)) for k in NOT_EMULATED_OUTPUTS.get(key, ())]
    return {**outputs, **dict.fromkeys(added, UNKNOWN)}


def get_log_groups(args: dict[str, Any], ctx: MockContext) -> dict[str, Any]:
    """`aws.cloudwatch.get_log_groups`: a fresh account has no log group under the prefix."""
    prefix = str(args.get("logGroupNamePrefix") or "")
    return {"id": ctx.region, "region": ctx.region, "logGroupNamePrefix": prefix, "logGroupNames": [], "arns": []}

"""AwsLoadBalancerController: the controller that turns `ingressClassName: alb` Ingresses into ALBs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.addons.lbc_iam_policy import POLICY
from components.addons.pod_identity import pod_identity
from components.config import AddonsConfig

# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/installation/
# (helm repo add eks https://aws.github.io/eks-charts; chart eks/aws-load-balancer-controller in kube-system)
CHART_REPOSITORY = "https://aws.github.io/eks-charts"
CHART = "aws-load-balancer-controller"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "aws-load-balancer-controller"


def helm_values(cluster_name: pulumi.Input[str], region: str, vpc_id: pulumi.Input[str],
                tags: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Chart values; every key exists in the chart's values.yaml (.upstream-cache/charts, v3.5.0, pinned in
    upstream.lock.json).

    - `region` and `vpcId` are passed: the controller otherwise asks the instance metadata service, which
      the nodes' IMDSv2 hop limit hides from pods (installation guide, "Using the Amazon EC2 instance
      metadata server version 2").
    - Two replicas with a PDB on the system nodes: the controller's webhooks admit every Ingress and
      pod with a readiness gate, so one replica down must not stop admissions.
    - `enableServiceMutatorWebhook: false`: the controller would otherwise take over every
      `type: LoadBalancer` Service in the cluster; the platform asks it only for Ingresses.
    - `defaultTags` (stack key `tags`, only when set): on every ALB, target group, listener and security group
      the controller creates.
    Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/installation/
    Source: https://github.com/kubernetes-sigs/aws-load-balancer-controller/blob/v3.5.0/helm/aws-load-balancer-controller/values.yaml
    """
    return {
        "clusterName": cluster_name,
        "region": region,
        "vpcId": vpc_id,
        "replicaCount": 2,
        "podDisruptionBudget": {"maxUnavailable": 1},
        "serviceAccount": {"create": True, "name": SERVICE_ACCOUNT},
        "nodeSelector": labels.system_node_selector(),
        "enableServiceMutatorWebhook": False,
        **({"defaultTags": dict(tags)} if tags else {}),
    }


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
class AwsLoadBalancerController(pulumi.ComponentResource):
    """The AWS Load Balancer Controller (Helm) on the system nodes, with its own Pod Identity role.

    Requires: Cluster (Kubernetes provider, system node group, eks-pod-identity-agent); public subnets
    tagged `kubernetes.io/role/elb` (components.cluster tags them).
    Conflicts: another controller claiming the `alb` IngressClass.
    Sources:
    - Installation, IAM policy, chart: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/installation/
    - Pod Identity: https://docs.aws.amazon.com/eks/latest/userguide/pod-identities.html
    """

    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        config: AddonsConfig,
        *,
        cluster_name: pulumi.Input[str],
        region: str,
        vpc_id: pulumi.Input[str],
        provider: k8s.Provider,
        tags: Mapping[str, str] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:addons:AwsLoadBalancerController", name, None, opts)
        _, _, association = pod_identity(
            f"{name}-identity", parent=self, cluster_name=cluster_name, namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT, policy=POLICY)
        self.values = helm_values(cluster_name, region, vpc_id, tags)
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            chart=CHART,
            version=config.aws_load_balancer_controller.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            namespace=NAMESPACE,
            values=self.values,
            opts=pulumi.ResourceOptions(parent=self, provider=provider,
                                        depends_on=[*depends_on, *([association] if association else [])]),
        )
        self.register_outputs({"chartVersion": config.aws_load_balancer_controller.version})
# pragma: no mutate end

"""The program: stack configuration in, components out. `__main__.py` calls `build` and exports the result."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi
import pulumi_kubernetes as k8s

from components.cluster import Cluster
from components.config import StackConfig
from components.deploy_checks import check_spot_service_linked_role, refuse_documentation_values
from components.gpu_node_group import GpuManagedNodeGroup
from components.gpu_operator import GpuOperatorRelease
from components.karpenter import KarpenterController, KarpenterGpuPool

if TYPE_CHECKING:
    from components.inference.serving import Serving


@dataclass
class Platform:
    """Everything `build` created, for exports and tests."""

    cluster: Cluster
    gpu_node_groups: dict[str, GpuManagedNodeGroup] = field(default_factory=dict)
    gpu_operator: GpuOperatorRelease | None = None
    karpenter: KarpenterController | None = None
    karpenter_pools: dict[str, KarpenterGpuPool] = field(default_factory=dict)
    serving: Serving | None = None

    def exports(self) -> dict[str, Any]:
        """The stack outputs."""
        out: dict[str, Any] = {
            "clusterName": self.cluster.cluster_name,
            "kubernetesVersion": self.cluster.kubernetes_version,
            "vpcId": self.cluster.vpc_id,
            "privateSubnetIds": self.cluster.private_subnet_ids,
            "kubeconfig": self.cluster.kubeconfig,
            "systemNodeSelector": self.cluster.system_node_group.node_selector,
            "gpuNodeGroups": {name: group.node_group_name for name, group in self.gpu_node_groups.items()},
            "gpuNodeLabels": {
                **{name: group.labels for name, group in self.gpu_node_groups.items()},
                **{name: pool.labels for name, pool in self.karpenter_pools.items()},
            },
        }
        if self.karpenter is not None:
            out["karpenter"] = {
                "interruptionQueue": self.karpenter.queue_name,
                "nodeRoleName": self.karpenter.node_role_name,
                "nodePools": {name: sorted(pool.node_pools) for name, pool in self.karpenter_pools.items()},
            }
        if self.gpu_operator is not None:
            out["gpuOperatorNamespace"] = self.gpu_operator.namespace
            out["gpuOperatorValues"] = json.dumps(self.gpu_operator.values, sort_keys=True)
            tests = self.gpu_operator.smoke_tests
            out["smokeTests"] = {name: {"job": t.job_name, "image": t.image} for name, t in tests.items()}
        if self.serving is not None:
            out["inferenceServices"] = {
                name: {"namespace": s.config.namespace, "host": s.config.ingress.host if s.config.ingress else None}
                for name, s in self.serving.services.items()}
        return out


def build(config: StackConfig) -> Platform:
    """Create every component the stack configuration asks for."""
    # Imported here: the serving add-ons (Helm, Pod Identity, EKS add-ons) load only for a stack with services.
    from components.inference.serving import build_serving, monitoring_stack  # noqa: PLC0415

    refuse_documentation_values(config.cluster, services=config.inference_services)
    if config.tags:
        pulumi.runtime.register_stack_transformation(kubernetes_labels(config.tags))
    check_spot_service_linked_role(config.karpenter)
    cluster = Cluster(config.cluster.name, config.cluster, config.system_node_group)
    platform = Platform(cluster=cluster)
    pools = {pool.name: pool for pool in config.gpu_pools()}
    for group in config.gpu_node_groups:
        platform.gpu_node_groups[group.name] = GpuManagedNodeGroup(
            f"{config.cluster.name}-{group.name}", group, pools[group.name], cluster
        )
    if config.karpenter is not None:
        platform.karpenter = KarpenterController("karpenter", config.karpenter, cluster, config.cluster.name,
                                                 existing_cluster=config.cluster.existing)
        for karpenter_pool in config.karpenter.pools:
            platform.karpenter_pools[karpenter_pool.name] = KarpenterGpuPool(
                f"{config.cluster.name}-{karpenter_pool.name}", karpenter_pool, pools[karpenter_pool.name], cluster,
                platform.karpenter, cluster_name=config.cluster.name, existing_cluster=config.cluster.existing,
                tags=config.tags)
    monitoring = monitoring_stack(config.addons, cluster) if config.inference_services else None
    if config.gpu_operator is not None:
        platform.gpu_operator = GpuOperatorRelease(
            "gpu-operator",
            config.gpu_operator,
            config.operator_pools(),
            provider=cluster.provider,
            depends_on=[*cluster.workload_dependencies, *([monitoring] if monitoring is not None else [])],
        )
    if monitoring is not None:
        gpu_dependencies = [*platform.gpu_node_groups.values(), *platform.karpenter_pools.values(),
                            *([platform.gpu_operator] if platform.gpu_operator is not None else [])]
        platform.serving = build_serving(config.inference_services, config.addons, list(pools.values()), cluster,
                                         monitoring, gpu_dependencies=gpu_dependencies, tags=config.tags)
    return platform


def kubernetes_labels(tags: Mapping[str, str]) -> Callable[[pulumi.ResourceTransformationArgs],
                                                             pulumi.ResourceTransformationResult | None]:
    """A stack transformation that adds the stack's `tags` as labels to every Kubernetes object the program
    registers with literal metadata (a mapping or ObjectMetaArgs); a label the object sets itself wins.
    Helm releases are not objects: what a chart renders is labelled by the chart."""
    def transform(args: pulumi.ResourceTransformationArgs) -> pulumi.ResourceTransformationResult | None:
        if not args.type_.startswith("kubernetes:") or "metadata" not in args.props:
            return None
        meta = args.props["metadata"]
        if isinstance(meta, Mapping):
            own = meta.get("labels") or {}
            if not isinstance(own, Mapping):
                return None
            props: dict[str, Any] = {**args.props, "metadata": {**meta, "labels": {**tags, **own}}}
        elif isinstance(meta, k8s.meta.v1.ObjectMetaArgs):
            own = meta.labels or {}
            if not isinstance(own, Mapping):
                return None
            meta.labels = {**tags, **own}
            props = dict(args.props)
        else:
            return None
        return pulumi.ResourceTransformationResult(props, args.opts)
    return transform


def export(platform: Platform) -> None:
    for key, value in platform.exports().items():
        pulumi.export(key, value)

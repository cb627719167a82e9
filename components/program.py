"""The program: stack configuration in, components out. `__main__.py` calls `build` and exports the result."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pulumi

from components.cluster import Cluster
from components.config import ConfigError, StackConfig, stack_file_name
from components.deploy_checks import refuse_documentation_values
from components.gpu_node_group import GpuManagedNodeGroup
from components.gpu_operator import GpuOperatorRelease

# Sections the schema accepts whose components land in later issues; a stack that sets them is
# stopped rather than silently previewed without them.
PENDING_SECTIONS: dict[str, str] = {
    "karpenter": "the Karpenter component (NodePools, EC2NodeClasses, interruption queue)",
    "inferenceServices": "the inference service component (Deployment, KEDA ScaledObject, ALB ingress, model volume)",
}


def require_built_sections(config: StackConfig) -> None:
    """Raise ConfigError naming each valid-but-unbuilt section the stack sets."""
    present = {
        "karpenter": config.karpenter is not None,
        "inferenceServices": bool(config.inference_services),
    }
    for section, is_set in present.items():
        if is_set:
            raise ConfigError(
                f"{stack_file_name()}: {section} = (set): the section is valid, but {PENDING_SECTIONS[section]} "
                f"has not landed yet, so nothing would deploy it; fix: remove gpu-platform:{section} from the "
                "stack until that component exists"
            )


@dataclass
class Platform:
    """Everything `build` created, for exports and tests."""

    cluster: Cluster
    gpu_node_groups: dict[str, GpuManagedNodeGroup] = field(default_factory=dict)
    gpu_operator: GpuOperatorRelease | None = None

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
            "gpuNodeLabels": {name: group.labels for name, group in self.gpu_node_groups.items()},
        }
        if self.gpu_operator is not None:
            out["gpuOperatorNamespace"] = self.gpu_operator.namespace
            out["gpuOperatorValues"] = json.dumps(self.gpu_operator.values, sort_keys=True)
            tests = self.gpu_operator.smoke_tests
            out["smokeTests"] = {name: {"job": t.job_name, "image": t.image} for name, t in tests.items()}
        return out


def build(config: StackConfig) -> Platform:
    """Create every component the stack configuration asks for."""
    require_built_sections(config)
    refuse_documentation_values(config.cluster)
    cluster = Cluster(config.cluster.name, config.cluster, config.system_node_group)
    platform = Platform(cluster=cluster)
    pools = {pool.name: pool for pool in config.gpu_pools()}
    for group in config.gpu_node_groups:
        platform.gpu_node_groups[group.name] = GpuManagedNodeGroup(
            f"{config.cluster.name}-{group.name}", group, pools[group.name], cluster
        )
    if config.gpu_operator is not None:
        platform.gpu_operator = GpuOperatorRelease(
            "gpu-operator",
            config.gpu_operator,
            config.operator_pools(),
            provider=cluster.provider,
            depends_on=cluster.workload_dependencies,
        )
    return platform


def export(platform: Platform) -> None:
    for key, value in platform.exports().items():
        pulumi.export(key, value)

"""Serving: the add-ons the configured inference services need (each once, only when used), then the services.

- kube-prometheus-stack whenever a service exists (every service gets a ServiceMonitor and a dashboard,
  KEDA's triggers query its Prometheus);
- KEDA when a service has `autoscaling`; the AWS Load Balancer Controller when one has `ingress`;
- the EBS CSI driver and the snapshot controller when one has a `modelVolume`.
Dependencies are declared, not implied by order: a service waits for the add-ons whose CRDs and
controllers its objects need.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.addons.keda import Keda
from components.addons.load_balancer import AwsLoadBalancerController
from components.addons.monitoring import MonitoringStack
from components.addons.storage import EbsSnapshotStorage
from components.cluster import Cluster
from components.config import AddonsConfig, GpuPool, InferenceServiceConfig
from components.inference.ingress import READINESS_GATE_LABEL
from components.inference.service import InferenceService
from policies.gpu_guard.matrix import load_matrix

# The image's default user is root, but the pods run Triton as its own non-root user (uid 1000, no privilege
# escalation, every capability dropped, RuntimeDefault seccomp: components/inference/workload.py), which
# `baseline` admits (so would `restricted`). `baseline` is enforced so that a user's own sidecar or debug pod in
# the namespace is held to the same floor without having to meet every `restricted` rule.
# Source: https://kubernetes.io/docs/concepts/security/pod-security-standards/
POD_SECURITY = "baseline"


def service_cuda(config: InferenceServiceConfig) -> str:
    """The CUDA runtime of the service's image: `cudaVersion`, else what the matrix reads from the tag.

    The config loader already refused a service whose CUDA is neither set nor known.
    """
    if config.cuda_version is not None:
        return config.cuda_version
    revealed = load_matrix().image_cuda(config.image)
    if revealed is None:
        raise ValueError(f"inference service {config.name}: CUDA unknown; the config loader should have refused it")
    return revealed.cuda


@dataclass
class Serving:
    """What `build_serving` created."""

    monitoring: MonitoringStack
    keda: Keda | None = None
    load_balancer: AwsLoadBalancerController | None = None
    storage: EbsSnapshotStorage | None = None
    services: dict[str, InferenceService] = field(default_factory=dict)


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
def monitoring_stack(addons: AddonsConfig, cluster: Cluster) -> MonitoringStack:
    """kube-prometheus-stack; built before the GPU Operator, whose DCGM ServiceMonitor needs its CRDs."""
    return MonitoringStack("monitoring", addons, provider=cluster.provider, depends_on=cluster.workload_dependencies)


def build_serving(services: Sequence[InferenceServiceConfig], addons: AddonsConfig, pools: Sequence[GpuPool],
                  cluster: Cluster, monitoring: MonitoringStack, *,
                  gpu_dependencies: Sequence[pulumi.Resource] = (),
                  tags: Mapping[str, str] | None = None) -> Serving:
    """The add-ons the services need and one InferenceService each; `services` is not empty."""
    base = list(cluster.workload_dependencies)
    provider = cluster.provider
    serving = Serving(monitoring=monitoring)
    needed: list[pulumi.Resource] = [serving.monitoring]
    if any(s.autoscaling is not None for s in services):
        serving.keda = Keda("keda", addons, provider=provider, depends_on=[*base, serving.monitoring])
        needed.append(serving.keda)
    if any(s.ingress is not None for s in services):
        serving.load_balancer = AwsLoadBalancerController(
            "aws-load-balancer-controller", addons, cluster_name=cluster.cluster_name,
            region=aws.get_region().region, vpc_id=cluster.vpc_id, provider=provider, tags=tags,
            depends_on=base)
        needed.append(serving.load_balancer)
    if any(s.model_volume is not None for s in services):
        keys = [s.model_volume.kms_key_arn for s in services
                if s.model_volume is not None and s.model_volume.kms_key_arn is not None]
        serving.storage = EbsSnapshotStorage("ebs-storage", addons, cluster_name=cluster.cluster_name,
                                             kms_key_arns=keys, tags=tags, depends_on=base)
        needed.append(serving.storage)

    namespaces: dict[str, k8s.core.v1.Namespace] = {}
    for service in services:
        if service.namespace not in namespaces:
            ns_labels = {"pod-security.kubernetes.io/enforce": POD_SECURITY}
            if any(s.ingress is not None for s in services if s.namespace == service.namespace):
                ns_labels[READINESS_GATE_LABEL[0]] = READINESS_GATE_LABEL[1]
            namespaces[service.namespace] = k8s.core.v1.Namespace(
                f"namespace-{service.namespace}",
                metadata=k8s.meta.v1.ObjectMetaArgs(name=service.namespace, labels=ns_labels),
                opts=pulumi.ResourceOptions(provider=provider, depends_on=base))
        serving.services[service.name] = InferenceService(
            service.name, service, pools, cuda=service_cuda(service), zones=cluster.zones,
            prometheus_url=serving.monitoring.prometheus_url, provider=provider,
            depends_on=[namespaces[service.namespace], *needed, *gpu_dependencies])
    return serving
# pragma: no mutate end

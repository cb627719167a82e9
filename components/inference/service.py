"""InferenceService: one configured Triton or vLLM service as Kubernetes objects (and its EBS Fast Snapshot Restore).

The manifests come from the pure functions of this package (workload, model_volume, ingress, scaling,
dashboard); this module only registers them, in dependency order, with the right Pulumi options.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.config import GpuPool, InferenceServiceConfig
from components.inference import budget, dashboard, ingress, model_volume, scaling, workload


# Registration only (its arguments come from the pure functions of this package, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
def _meta(manifest: dict[str, Any]) -> Any:
    """The manifest's metadata. The manifests are camelCase dicts, which the SDK passes through as they are;
    its typed `...ArgsDict` forms spell keys in snake_case, hence `Any` for the type checker."""
    return _field(manifest, "metadata")


def _field(manifest: dict[str, Any], key: str) -> Any:
    return manifest[key]


class InferenceService(pulumi.ComponentResource):
    """A Triton or vLLM inference service (`runtime`): Deployment, Service, PDB, model volume, ALB Ingress, KEDA,
    monitoring.

    Children (named `<name>-<role>`): StorageClass, VolumeSnapshotContent (protected, retained on delete,
    `deletionPolicy: Retain`) and VolumeSnapshot when `modelVolume` is set, plus one
    `aws.ebs.FastSnapshotRestore` per zone with `fastSnapshotRestore`; the Deployment (each replica its
    own restored volume, see components/inference/model_volume.py), its ClusterIP Service,
    PodDisruptionBudget and ingress NetworkPolicy; an ALB Ingress with `ingress`; a KEDA ScaledObject with
    `autoscaling`; a ServiceMonitor and a Grafana dashboard ConfigMap.

    Requires: Cluster (provider, zones); the namespace; MonitoringStack (ServiceMonitor CRD, Prometheus
    for KEDA), Keda with `autoscaling`, AwsLoadBalancerController with `ingress`, EbsSnapshotStorage with
    `modelVolume` (their CRDs and controllers), passed as `depends_on`.
    Conflicts: another HPA or ScaledObject on the same Deployment (KEDA owns its HPA).
    FSR zones: `zones` is the cluster's private-subnet zones, where every pool launches nodes (managed node
    groups take every private subnet; an EC2NodeClass selects private subnets of the same cluster), so a replica of any
    of the service's pools restores in a zone that has FSR.

    Sources:
    - Pulumi `protect` / `retainOnDelete`: https://www.pulumi.com/docs/iac/concepts/options/protect/ and
      https://www.pulumi.com/docs/iac/concepts/options/retainondelete/
    - Fast Snapshot Restore (per snapshot and Availability Zone):
      https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fast-snapshot-restore.html
    - https://www.pulumi.com/registry/packages/aws/api-docs/ebs/fastsnapshotrestore/
    - Custom timeouts (the Deployment's await, each FastSnapshotRestore's wait for `enabled`), derived in
      components/inference/budget.py: https://www.pulumi.com/docs/iac/concepts/options/customtimeouts/
    """

    config: InferenceServiceConfig
    deployment: k8s.apps.v1.Deployment
    service: k8s.core.v1.Service
    manifests: list[dict[str, Any]]

    def __init__(
        self,
        name: str,
        config: InferenceServiceConfig,
        pools: Sequence[GpuPool],
        *,
        cuda: str,
        zones: Sequence[str],
        prometheus_url: str,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:inference:InferenceService", name, None, opts)
        self.config = config
        self.manifests = []

        def k8s_opts(*after: pulumi.Resource, **extra: Any) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[*depends_on, *after],
                                          **extra)

        pod_volume: dict[str, Any] | None = None
        volume_objects: list[pulumi.Resource] = []
        volume = config.model_volume
        if volume is not None:
            storage_class = model_volume.storage_class(config, volume)
            content = model_volume.snapshot_content(config, volume)
            snapshot = model_volume.volume_snapshot(config, volume)
            self.manifests += [storage_class, content, snapshot]
            sc = k8s.storage.v1.StorageClass(
                f"{name}-storage-class", metadata=_meta(storage_class),
                provisioner=storage_class["provisioner"], parameters=_field(storage_class, "parameters"),
                reclaim_policy=storage_class["reclaimPolicy"],
                volume_binding_mode=storage_class["volumeBindingMode"],
                allow_volume_expansion=storage_class["allowVolumeExpansion"], opts=k8s_opts())
            # The content points at the golden snapshot: never deleted by Pulumi (protect), and when removed
            # from the program (a new snapshot rolled out) left in the cluster (retainOnDelete); the CSI side
            # keeps the EBS snapshot either way (deletionPolicy: Retain).
            vsc = k8s.apiextensions.CustomResource(
                f"{name}-snapshot-content", api_version=content["apiVersion"], kind=content["kind"],
                metadata=_meta(content), spec=_field(content, "spec"),
                opts=k8s_opts(protect=True, retain_on_delete=True))
            vs = k8s.apiextensions.CustomResource(
                f"{name}-snapshot", api_version=snapshot["apiVersion"], kind=snapshot["kind"],
                metadata=_meta(snapshot), spec=_field(snapshot, "spec"), opts=k8s_opts(vsc))
            volume_objects = [sc, vs]
            pod_volume = model_volume.ephemeral_volume(config, volume)
            if volume.fast_snapshot_restore:
                # Each waits for `enabled` (optimizing takes 60 min per TiB): budget.fsr_create_timeout. The
                # Deployment waits for them, so the first replicas restore at full speed, as the startup budget
                # assumes (components/config/serving.py).
                create = budget.fsr_create_timeout(volume.snapshot_gib)
                volume_objects += [
                    aws.ebs.FastSnapshotRestore(
                        f"{name}-fsr-{zone}", availability_zone=zone, snapshot_id=volume.snapshot_id,
                        opts=pulumi.ResourceOptions(parent=self,
                                                    custom_timeouts=pulumi.CustomTimeouts(create=create)))
                    for zone in zones]

        deployment = workload.deployment(config, pools, cuda, pod_volume)
        service = workload.service(config)
        pdb = workload.pod_disruption_budget(config)
        netpol = workload.network_policy(config)
        self.manifests += [deployment, service, pdb, netpol]
        self.service = k8s.core.v1.Service(
            f"{name}-service", metadata=_meta(service), spec=_field(service, "spec"), opts=k8s_opts())
        before_pods: list[pulumi.Resource] = list(volume_objects)
        if config.ingress is not None:
            # Before the Deployment: the controller injects the ALB readiness gate into a pod only if a
            # TargetGroupBinding selecting it exists when the pod is created
            # (kubernetes-sigs/aws-load-balancer-controller @ v3.5.0 pkg/inject/pod_readiness/pod_readiness_gate.go:
            # 65-98). It creates the bindings while reconciling the Ingress, before it writes the Ingress status
            # (controllers/ingress/group_controller.go:164-187), and pulumi-kubernetes awaits that status
            # (pulumi/pulumi-kubernetes @ v4.32.0 provider/pkg/await/ingress.go:296-335; the Service's Endpoints
            # object need only exist, :353-434), so the first pods get their readiness gate too.
            ing = ingress.ingress_manifest(config, config.ingress)
            self.manifests.append(ing)
            before_pods.append(k8s.networking.v1.Ingress(
                f"{name}-ingress", metadata=_meta(ing), spec=_field(ing, "spec"), opts=k8s_opts(self.service)))
        create, update = budget.deployment_timeouts(config.startup_seconds, config.max_replicas)
        self.deployment = k8s.apps.v1.Deployment(
            f"{name}-deployment", metadata=_meta(deployment), spec=_field(deployment, "spec"),
            opts=k8s_opts(*before_pods, custom_timeouts=pulumi.CustomTimeouts(create=create, update=update)))
        k8s.policy.v1.PodDisruptionBudget(
            f"{name}-pdb", metadata=_meta(pdb), spec=_field(pdb, "spec"), opts=k8s_opts())
        k8s.networking.v1.NetworkPolicy(
            f"{name}-network-policy", metadata=_meta(netpol), spec=_field(netpol, "spec"), opts=k8s_opts())

        if config.autoscaling is not None:
            scaled = scaling.scaled_object(config, config.autoscaling, prometheus_url)
            self.manifests.append(scaled)
            k8s.apiextensions.CustomResource(
                f"{name}-scaled-object", api_version=scaled["apiVersion"], kind=scaled["kind"],
                metadata=_meta(scaled), spec=_field(scaled, "spec"), opts=k8s_opts(self.deployment))
        monitor = scaling.service_monitor(config)
        board = dashboard.dashboard_config_map(config)
        self.manifests += [monitor, board]
        k8s.apiextensions.CustomResource(
            f"{name}-service-monitor", api_version=monitor["apiVersion"], kind=monitor["kind"],
            metadata=_meta(monitor), spec=_field(monitor, "spec"), opts=k8s_opts(self.service))
        k8s.core.v1.ConfigMap(f"{name}-dashboard", metadata=_meta(board), data=_field(board, "data"), opts=k8s_opts())
        self.register_outputs({"deployment": config.name, "namespace": config.namespace,
                               "host": config.ingress.host if config.ingress else None})
# pragma: no mutate end

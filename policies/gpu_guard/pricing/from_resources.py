"""The estimate's `Stack` from the resources the pack sees (the `cost-budget` policy): the same quantities the typed
config gives `gpu-platform cost` (tools/cost/from_config.py), read where the engine records them.

- region: the default AWS provider's `region` input (the engine registers it with the stack's `aws:` config), else a
  subnet's availabilityZone; none known: nothing is priced (`Read.unread` says so);
- the control plane: the EKS cluster's version, upgradePolicy.supportType and enabledClusterLogTypes;
- node groups: instanceTypes, capacityType, scalingConfig; root volumes from diskSize or the launch template's
  block device mappings (linked as the inventory links them);
- Karpenter NodePools: the inventory's pool (types, capacity-type requirement), spec.limits nvidia.com/gpu, and
  its EC2NodeClass's block device mappings;
- services: each GPU Deployment, its replicas from the KEDA ScaledObject that targets it (min/max, the cron
  trigger's window and desiredReplicas) else spec.replicas, its pools those it can be scheduled on (managed node
  groups first), its model volume from the pod's ephemeral claim and its StorageClass, FSR from the
  FastSnapshotRestore resources of that snapshot, an ALB from an Ingress of class alb on its Service;
- NAT gateways, KMS keys, zones (distinct subnet zones) counted.
A value the engine does not know yet (a first preview) is named in `unread`, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..inventory import EKS_CLUSTER_TYPES, LAUNCH_TEMPLATE, NODE_GROUP, SUBNET, build_inventory, reachable
from ..matrix import load_matrix
from ..props import Deferred, as_list, deferred_get, to_int
from .shape import KarpenterPool, ModelVolume, NodeGroup, Service, Stack, fixed_group_nodes

SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
DEPLOYMENT = "kubernetes:apps/v1:Deployment"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
KMS_KEY = "aws:kms/key:Key"
FSR = "aws:ebs/fastSnapshotRestore:FastSnapshotRestore"
SNAPSHOT_CONTENT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotContent"
AWS_PROVIDER = "pulumi:providers:aws"
_AZ = re.compile(r"^([a-z]{2}(?:-[a-z]+)+-\d)[a-z]$")
_GI = re.compile(r"^(\d+)Gi$")


@dataclass
class Read:
    stack: Stack | None
    unread: list[str] = field(default_factory=list)


class _Reader:
    def __init__(self) -> None:
        self.unread: list[str] = []

    def get(self, resource: Any, *path: Any, default: Any = None) -> Any:
        value = deferred_get(resource.props if hasattr(resource, "props") else resource, *path, default=default)
        if isinstance(value, Deferred):
            where = getattr(resource, "name", "?")
            self.unread.append(f"{getattr(resource, 'resource_type', 'value')} '{where}' {'.'.join(map(str, path))}")
            return None
        return value


def _gib(value: Any) -> int | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return int(value)
    match = _GI.match(str(value)) if isinstance(value, str) else None
    return int(match.group(1)) if match else None


def _region(r: _Reader, resources: list[Any]) -> str | None:
    for res in resources:
        if res.resource_type == AWS_PROVIDER or res.resource_type.startswith(AWS_PROVIDER + "::"):
            value = r.get(res, "region")
            if isinstance(value, str) and value:
                return value
    for res in resources:
        if res.resource_type == SUBNET:
            match = _AZ.match(str(r.get(res, "availabilityZone") or ""))
            if match:
                return match.group(1)
    return None


def _disk_sum(r: _Reader, mappings: Any) -> int | None:
    sizes = [_gib(r.get(m, "ebs", "volumeSize")) for m in as_list(mappings)]
    return sum(s for s in sizes if s is not None) if sizes and None not in sizes else None


def _node_groups(r: _Reader, resources: list[Any]) -> list[NodeGroup]:
    templates = {name: t for t in resources if t.resource_type == LAUNCH_TEMPLATE
                 and isinstance(name := r.get(t, "name"), str)}
    matrix = load_matrix()
    out = []
    for res in resources:
        if res.resource_type != NODE_GROUP:
            continue
        types = tuple(str(t) for t in as_list(r.get(res, "instanceTypes")))
        scaling = r.get(res, "scalingConfig") or {}
        running, maximum = fixed_group_nodes(to_int(scaling.get("desiredSize")) or 0,
                                             to_int(scaling.get("minSize")) or 0, to_int(scaling.get("maxSize")) or 0)
        disk = to_int(r.get(res, "diskSize"))
        if disk is None:
            deps = (getattr(res, "property_dependencies", None) or {}).get("launchTemplate") or []
            template = next((d for d in deps if d.resource_type == LAUNCH_TEMPLATE), None) or templates.get(
                r.get(res, "launchTemplate", "name"))
            disk = _disk_sum(r, r.get(template, "blockDeviceMappings")) if template is not None else None
        capacity = "spot" if str(r.get(res, "capacityType") or "ON_DEMAND").upper() == "SPOT" else "on-demand"
        system = not any(matrix.is_gpu_instance(t) for t in types)
        out.append(NodeGroup(str(r.get(res, "nodeGroupName") or res.name), f"node group '{res.name}'", types,
                             capacity, running, maximum, disk, system=system))
    return out


def _karpenter(r: _Reader, resources: list[Any]) -> list[KarpenterPool]:
    inventory = build_inventory(resources)
    out = []
    for pool in inventory.pools:
        if pool.kind != "karpenter-nodepool":
            continue
        capacity = pool.label_domain.get("karpenter.sh/capacity-type")
        capacities = tuple(sorted(capacity)) if isinstance(capacity, frozenset) else ("on-demand", "spot")
        limit = r.get(pool.props, "spec", "limits", "nvidia.com/gpu")
        node_class = inventory.node_classes.get(pool.node_class or "")
        disk = _disk_sum(r, r.get(node_class, "spec", "blockDeviceMappings")) if node_class is not None else None
        out.append(KarpenterPool(pool.name, f"NodePool '{pool.name}'", pool.instance_types,
                                 tuple(c for c in capacities if c in ("on-demand", "spot")),
                                 "on-demand" in capacities and "spot" in capacities,
                                 to_int(limit), disk))
    return out


def _named(resources: Iterable[Any], rtype: str) -> dict[str, Any]:
    return {str(deferred_get(res.props, "metadata", "name", default=res.name)): res for res in resources
            if res.resource_type == rtype}


def _services(r: _Reader, resources: list[Any]) -> list[Service]:
    inventory = build_inventory(resources)
    scaled = {str(r.get(s, "spec", "scaleTargetRef", "name")): s for s in resources if s.resource_type == SCALED_OBJECT}
    classes, deployments = _named(resources, STORAGE_CLASS), _named(resources, DEPLOYMENT)
    ingress_backends = {}
    for ing in resources:
        if ing.resource_type == INGRESS and r.get(ing, "spec", "ingressClassName") == "alb":
            scheme = r.get(ing, "metadata", "annotations", "alb.ingress.kubernetes.io/scheme")
            for rule in as_list(r.get(ing, "spec", "rules")):
                for path in as_list(r.get(rule, "http", "paths")):
                    ingress_backends[str(r.get(path, "backend", "service", "name"))] = scheme == "internet-facing"
    fsr = [res for res in resources if res.resource_type == FSR]
    pools = sorted(inventory.pools, key=lambda p: p.kind != "managed-node-group")
    out = []
    for workload in inventory.workloads:
        if workload.kind != "Deployment" or workload.gpus <= 0:
            continue
        obj = scaled.get(workload.name)
        deployment = deployments.get(workload.name)
        replicas = to_int(r.get(deployment, "spec", "replicas")) if deployment is not None else None
        low = to_int(r.get(obj, "spec", "minReplicaCount", default=0)) if obj is not None else replicas
        high = to_int(r.get(obj, "spec", "maxReplicaCount", default=100)) if obj is not None else replicas
        cron = next((t for t in as_list(r.get(obj, "spec", "triggers")) if t.get("type") == "cron"), None) \
            if obj is not None else None
        meta: Mapping[str, Any] = (cron or {}).get("metadata") or {}
        volume = _volume(r, deployment, classes, fsr, resources) if deployment is not None else None
        out.append(Service(
            workload.name, f"Deployment '{workload.name}'", tuple(p.name for p in pools if reachable(workload, p)),
            workload.gpus, low or 0, high or 0, wake_start=meta.get("start"), wake_end=meta.get("end"),
            wake_replicas=to_int(meta.get("desiredReplicas")) or 0,
            alb=workload.name in ingress_backends, internet_facing=ingress_backends.get(workload.name, False),
            volume=volume))
    return out


def _volume(r: _Reader, deployment: Any, classes: Mapping[str, Any], fsr: list[Any],
            resources: list[Any]) -> ModelVolume | None:
    for vol in as_list(r.get(deployment, "spec", "template", "spec", "volumes")):
        claim = r.get(vol, "ephemeral", "volumeClaimTemplate", "spec")
        if not isinstance(claim, Mapping) or claim.get("dataSource") is None:
            continue
        size = _gib(r.get(claim, "resources", "requests", "storage")) or 0
        params = r.get(classes.get(str(claim.get("storageClassName"))), "parameters") or {}
        snapshot = str(r.get(claim, "dataSource", "name"))
        handle = next((r.get(c, "spec", "source", "snapshotHandle") for c in resources
                       if c.resource_type == SNAPSHOT_CONTENT
                       and str(r.get(c, "metadata", "name")) == snapshot), None)
        enabled = [f for f in fsr if handle is not None and r.get(f, "snapshotId") == handle]
        return ModelVolume(size, size, to_int(params.get("iops")) or 3000, to_int(params.get("throughput")) or 125,
                           bool(enabled), to_int(params.get("volumeInitializationRate")))
    return None


def stack_from_resources(name: str, resources: Iterable[Any]) -> Read:
    """The `Stack` the resources describe, and what could not be read (named; never guessed)."""
    resources = list(resources)
    r = _Reader()
    region = _region(r, resources)
    # The control plane's own resource first: pulumi-eks's component (eks:index:Cluster) carries no props of its own.
    clusters = sorted((res for res in resources if res.resource_type in EKS_CLUSTER_TYPES),
                      key=lambda res: res.resource_type != EKS_CLUSTER_TYPES[0])
    if region is None:
        return Read(None, [*r.unread, "its AWS region (no aws provider `region` input, no subnet availabilityZone)"])
    zones = len({str(r.get(s, "availabilityZoneId") or r.get(s, "availabilityZone")) for s in resources
                 if s.resource_type == SUBNET}) or 1
    cluster = clusters[0] if clusters else None
    stack = Stack(
        name=name, region=region, zones=zones,
        nat_gateways=sum(1 for res in resources if res.resource_type == NAT_GATEWAY),
        kubernetes_version=str(r.get(cluster, "version") or "") if cluster is not None else "",
        support_type=str(r.get(cluster, "upgradePolicy", "supportType") or "EXTENDED").upper()
        if cluster is not None else "STANDARD",
        node_groups=tuple(_node_groups(r, resources)), karpenter_pools=tuple(_karpenter(r, resources)),
        services=tuple(_services(r, resources)),
        kms_keys=sum(1 for res in resources if res.resource_type == KMS_KEY),
        control_plane_logs=tuple(str(t) for t in as_list(r.get(cluster, "enabledClusterLogTypes")))
        if cluster is not None else (),
        has_cluster=cluster is not None)
    return Read(stack, r.unread)

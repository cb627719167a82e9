"""The estimate's `Stack` from a stack file's typed config (components/config): what `gpu-platform cost` and the
preview's cost section price. The pack builds the same `Stack` from the resources it sees (pricing/from_resources.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from components.cluster import CONTROL_PLANE_LOG_TYPES
from components.config import StackConfig
from components.config.loader import parse_stack_config, problems_message
from components.karpenter.pool import block_device_mappings
from policies.gpu_guard.pricing.shape import KarpenterPool, ModelVolume, NodeGroup, Service, Stack, fixed_group_nodes

PREFIX = "gpu-platform:"


class StackFileError(ValueError):
    """The stack file cannot be read or its config is invalid: the message names the file and the key."""


def read_stack_file(path: Path) -> tuple[dict[str, Any], str]:
    """(the `gpu-platform:` values decoded, aws:region) of Pulumi.<stack>.yaml."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as error:
        raise StackFileError(f"{path}: cannot be read ({error})") from error
    config = (data or {}).get("config") if isinstance(data, dict) else None
    if not isinstance(config, dict):
        raise StackFileError(f"{path}: no `config:` mapping")
    region = config.get("aws:region")
    if not isinstance(region, str):
        raise StackFileError(f"{path}: aws:region is not set; set it (e.g. `aws:region: us-west-2`)")
    raw = {k.removeprefix(PREFIX): (json.loads(v) if isinstance(v, str) and v[:1] in "[{" else v)
           for k, v in config.items() if k.startswith(PREFIX)}
    return raw, region


def load_stack(path: Path) -> tuple[StackConfig, str]:
    raw, region = read_stack_file(path)
    config, problems = parse_stack_config(raw)
    if config is None:
        raise StackFileError(problems_message(problems, path.name))
    return config, region


def stack_from_config(name: str, config: StackConfig, region: str) -> Stack:
    cluster = config.cluster
    zones = cluster.availability_zones
    system = config.system_node_group
    running, maximum = fixed_group_nodes(system.desired_size, system.min_size, system.max_size)
    groups = [NodeGroup(system.name, "gpu-platform:systemNodeGroup", tuple(system.instance_types),
                        "on-demand", running, maximum, system.disk_size_gib, system=True)]
    for i, group in enumerate(config.gpu_node_groups):
        running, maximum = fixed_group_nodes(group.desired_size, group.min_size, group.max_size)
        groups.append(NodeGroup(group.name, f"gpu-platform:gpuNodeGroups[{i}]", tuple(group.instance_types),
                                group.capacity_type, running, maximum, group.disk_size_gib))
    pools = [KarpenterPool(pool.name, f"gpu-platform:karpenter.pools[{i}]", tuple(pool.instance_types),
                           tuple(pool.capacity_types), pool.on_demand_fallback, pool.max_gpus,
                           sum(int(str(m["ebs"]["volumeSize"]).removesuffix("Gi"))
                               for m in block_device_mappings(pool.os, pool.disk_size_gib)))
             for i, pool in enumerate(config.karpenter.pools if config.karpenter else [])]
    services = []
    for i, service in enumerate(config.inference_services):
        wake = service.autoscaling.wake_schedule if service.autoscaling else None
        volume = service.model_volume
        services.append(Service(
            service.name, f"gpu-platform:inferenceServices[{i}]", tuple(service.node_pools), service.gpus_per_replica,
            service.min_replicas, service.max_replicas,
            wake_start=wake.start if wake else None, wake_end=wake.end if wake else None,
            wake_replicas=service.wake_replicas() if wake else 0,
            alb=service.ingress is not None,
            internet_facing=service.ingress is not None and service.ingress.scheme == "internet-facing",
            volume=ModelVolume(volume.size_gib, volume.snapshot_gib, volume.provisioned_iops, volume.throughput,
                               volume.fast_snapshot_restore, volume.volume_initialization_rate) if volume else None))
    existing = cluster.existing
    return Stack(name=name, region=region, zones=zones,
                 nat_gateways=0 if existing else (1 if cluster.single_nat_gateway else zones),
                 kubernetes_version=str(cluster.kubernetes_version), support_type=cluster.support_type.upper(),
                 node_groups=tuple(groups), karpenter_pools=tuple(pools), services=tuple(services),
                 kms_keys=0 if existing else 1,
                 control_plane_logs=() if existing else CONTROL_PLANE_LOG_TYPES, has_cluster=not existing)

"""What a stack runs, as the estimate needs it: built from the typed config (tools/cost/from_config.py) or from the
resources the pack sees (pricing/from_resources.py), priced by one function (pricing/estimate.py).

`key` on each part is the stack-config key a user changes to change that line (the budget's message names it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class NodeGroup:
    """A managed node group (or self-managed group): nothing in the stack resizes it, so it runs `running` nodes
    (`fixed_group_nodes`) and at most `maximum` (the ceiling)."""

    name: str
    key: str
    instance_types: tuple[str, ...]
    capacity: str  # on-demand | spot
    running: int
    maximum: int
    disk_gib: int | None  # None: not read
    system: bool = False


@dataclass(frozen=True)
class KarpenterPool:
    """A Karpenter NodePool: nodes exist while pods need them, up to `max_gpus` GPUs (spec.limits)."""

    name: str
    key: str
    instance_types: tuple[str, ...]
    capacity_types: tuple[str, ...]
    on_demand_fallback: bool
    max_gpus: int | None
    disk_gib: int | None  # every volume of a node (Bottlerocket: its OS volume and its data volume); None: not read


@dataclass(frozen=True)
class ModelVolume:
    size_gib: int
    snapshot_gib: int
    iops: int
    throughput_mibps: int
    fast_snapshot_restore: bool
    initialization_rate: int | None = None


@dataclass(frozen=True)
class Service:
    name: str
    key: str
    pools: tuple[str, ...]
    gpus_per_replica: int
    min_replicas: int
    max_replicas: int
    wake_start: str | None = None  # the cron window that wakes it (KEDA cron trigger)
    wake_end: str | None = None
    wake_replicas: int = 0
    alb: bool = False
    internet_facing: bool = False
    volume: ModelVolume | None = None


@dataclass(frozen=True)
class Stack:
    name: str
    region: str
    zones: int
    nat_gateways: int
    kubernetes_version: str
    support_type: str  # STANDARD | EXTENDED
    node_groups: tuple[NodeGroup, ...] = ()
    karpenter_pools: tuple[KarpenterPool, ...] = ()
    services: tuple[Service, ...] = ()
    kms_keys: int = 0
    control_plane_logs: tuple[str, ...] = ()
    has_cluster: bool = True  # False: the cluster lives in another stack (or is `existing`): no control-plane line


def fixed_group_nodes(desired: int, minimum: int, maximum: int) -> tuple[int, int]:
    """(nodes a managed node group runs, its ceiling). The one place this is decided.

    The stack runs no cluster autoscaler and ignores later changes to `scalingConfig.desiredSize`
    (components/gpu_node_group.py, system_node_group.py: ignore_changes), so a group runs the `desiredSize` it was
    created with, clamped to [minSize, maxSize] as EKS requires; its ceiling is `maxSize`.
    """
    return max(minimum, min(desired, maximum)), maximum

"""The ephemeral e2e stack's configuration, derived from dev's (`Pulumi.dev.yaml`).

What changes from dev, and why:
- `cluster.name` is the run id (the sweeper reads controllers' cluster tags by it; two runs never collide);
  deletion protection off; the API endpoint open to the runner's address only; the caller is the deployer.
- `aws:defaultTags` and `gpu-platform:tags` carry the run tags: the provider's resources, Karpenter's instances,
  volumes and launch templates (EC2NodeClass spec.tags), the load balancer controller's ALBs, target groups and
  security groups (defaultTags), the EBS CSI driver's volumes (extraVolumeTags), and every Kubernetes object
  (labels).
- every GPU pool runs the cheapest type of its own list (`cost.cheapest`), on demand (Spot interruptions would
  make the proof flaky, and Spot has a quota of its own); one node per managed group, room for one drift
  replacement in each Karpenter pool.
- each inference service: the model snapshot of the run, an Ingress (the ALB the request goes through), a short
  cooldown, and a wake window that cannot open during the run (the driver wakes it itself, below).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml

from tools.e2e.cap.cost import Shape, cheapest
from tools.e2e.runid import run_tags

PROJECT = "gpu-platform"
COOLDOWN_SECONDS = 120


@dataclass(frozen=True)
class Inputs:
    """What the user gives the run (environment of `make e2e`)."""

    run_id: str
    region: str
    snapshot_id: str
    snapshot_gib: int
    ingress_host: str
    certificate_arn: str
    endpoint_cidrs: tuple[str, ...]
    deployer_arn: str
    # The delete-only role of the workflow's cleanup job and sweep (E2E_CLEANUP_ROLE_ARN): the cluster admits it as
    # an admin, so the cleanup can empty the cluster (Ingresses and their ALBs, PVCs, NodePools) before destroy.
    cleanup_arn: str | None = None


def _key(name: str) -> str:
    return f"{PROJECT}:{name}"


def e2e_config(dev: dict[str, Any], inputs: Inputs, now: datetime) -> dict[str, Any]:
    """The `config:` mapping of the e2e stack (as `Pulumi.<stack>.yaml` holds it)."""
    config = copy.deepcopy(dev["config"])
    tags = run_tags(inputs.run_id)
    config["aws:region"] = inputs.region
    config["aws:defaultTags"] = {"tags": dict(tags)}
    config[_key("tags")] = dict(tags)

    cluster = config[_key("cluster")]
    cluster.update({"name": inputs.run_id, "deletionProtection": False,
                    "endpointPublicAccessCidrs": list(inputs.endpoint_cidrs),
                    "deployerPrincipalArns": [inputs.deployer_arn], "previewPrincipalArns": []})
    cluster.pop("adminPrincipalArns", None)
    if inputs.cleanup_arn:
        cluster["adminPrincipalArns"] = [inputs.cleanup_arn]
    cluster.pop("opsReadOnlyPrincipalArn", None)

    for group in config.get(_key("gpuNodeGroups"), []):
        group.update({"instanceTypes": [cheapest(group["instanceTypes"], inputs.region)], "capacityType": "on-demand",
                      "minSize": 1, "desiredSize": 1, "maxSize": 2})
    karpenter = config.get(_key("karpenter"))
    if karpenter is not None:
        for pool in karpenter.get("pools", []):
            pool.update({"instanceTypes": [cheapest(pool["instanceTypes"], inputs.region)],
                         "capacityTypes": ["on-demand"],
                         "onDemandFallback": False, "maxGpus": 2})
    # A window 12 hours away, one minute long: it never opens during a run, so the service sleeps when idle. The
    # end is the start plus one minute, hour included: at :59 an end of "0 <same hour>" would come 11 h later,
    # before the next start, and KEDA's cron scaler is active whenever the next end comes before the next start
    # (kedacore/keda pkg/scalers/cron_scaler.go, GetMetricsAndActivity), so the service would never sleep.
    closed = now + timedelta(hours=12)
    reopens = closed + timedelta(minutes=1)
    # Only the first service runs: it is the one the run sends its request to (driver.py `_service`), and the run's
    # model snapshot holds the e2e Triton model only. Another service of dev (vllm-dev since issue 48) would get the
    # same host, a snapshot it cannot load, and an internet-facing endpoint the pack refuses without an API key.
    services = config.get(_key("inferenceServices"), [])[:1]
    if _key("inferenceServices") in config:
        config[_key("inferenceServices")] = services
    for service in services:
        service["minReplicas"] = 0
        service["maxReplicas"] = 1
        volume = service.setdefault("modelVolume", {})
        volume["snapshotId"] = inputs.snapshot_id
        volume["sizeGiB"] = max(int(volume.get("sizeGiB", 20)), inputs.snapshot_gib)
        # Fast snapshot restore bills per Availability Zone per hour on the snapshot, which the sweeper never
        # touches (the user's is protected): off, so a failed destroy cannot leave it billing.
        volume["fastSnapshotRestore"] = False
        service["ingress"] = {"host": inputs.ingress_host, "certificateArn": inputs.certificate_arn,
                              "scheme": "internet-facing"}
        autoscaling = service.setdefault("autoscaling", {})
        autoscaling["cooldownSeconds"] = COOLDOWN_SECONDS
        autoscaling["wakeSchedule"] = {"timezone": "UTC", "start": f"{closed.minute} {closed.hour} * * *",
                                       "end": f"{reopens.minute} {reopens.hour} * * *"}
    return {"config": config}


def load_dev(repo: Path) -> dict[str, Any]:
    data = yaml.safe_load((repo / "Pulumi.dev.yaml").read_text(encoding="utf-8"))
    if not isinstance(data, dict) or "config" not in data:
        raise ValueError("Pulumi.dev.yaml: no `config:` mapping")
    return data


def shape(config: dict[str, Any], *, own_snapshot_gib: int = 0) -> Shape:
    """What the estimate prices, read from the e2e stack's configuration."""
    cfg = config["config"]
    cluster = cfg[_key("cluster")]
    zones = int(cluster.get("availabilityZones", 3))
    system = cfg.get(_key("systemNodeGroup"), {})
    mng: dict[str, int] = {}
    ebs = 0
    system_nodes = int(system.get("maxSize", system.get("desiredSize", 2)))
    ebs += system_nodes * int(system.get("diskSizeGiB", 50))
    for group in cfg.get(_key("gpuNodeGroups"), []):
        mng[group["instanceTypes"][0]] = mng.get(group["instanceTypes"][0], 0) + int(group["desiredSize"])
        ebs += (int(group["desiredSize"]) + 2 * zones) * int(group.get("diskSizeGiB", 100))
    karpenter: dict[str, int] = {}
    for pool in (cfg.get(_key("karpenter")) or {}).get("pools", []):
        karpenter[pool["instanceTypes"][0]] = karpenter.get(pool["instanceTypes"][0], 0) + 1
        ebs += 2 * int(pool.get("diskSizeGiB", 100))
    for service in cfg.get(_key("inferenceServices"), []):
        ebs += int(service.get("modelVolume", {}).get("sizeGiB", 0))
    return Shape(region=str(cfg["aws:region"]), zones=zones,
                 nat_gateways=1 if cluster.get("singleNatGateway") else zones,
                 system_type=str(system.get("instanceTypes", ["m7i.large"])[0]), system_nodes=system_nodes,
                 mng_gpu=mng, karpenter_gpu=karpenter, ebs_gib=ebs, snapshot_gib=own_snapshot_gib)

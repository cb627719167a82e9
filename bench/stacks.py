"""Generated stacks for the benchmark: prod's configuration with N inference services and P GPU pools.

`generated_config(base, services=N, pools=P)` takes a parsed `Pulumi.<stack>.yaml` (prod's, in the
benchmark) and returns it with `gpu-platform:gpuNodeGroups` replaced by P generated managed node groups
and `gpu-platform:inferenceServices` replaced by N generated services, written with the keys of
the stack config contract (docs/configuration.md), so the same file deploys. Every
other section (cluster, system node group, operator, Karpenter) stays as the base has it, so the numbers
include whatever the base stack deploys.

The values are chosen to pass the configuration checks and the compatibility matrix (they are prod's
own: Ubuntu 24.04 with the operator's driver, instance types prod uses); a generated stack is a
realistic large stack, not a broken one. Each service runs on one pool (round robin), every second one
has an internal ALB ingress, every fourth a model volume restored from a snapshot.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

PROJECT = "gpu-platform"

# Instance types prod's pools use (Pulumi.prod.yaml), known to the matrix with Ubuntu 24.04 and the R580 driver.
POOL_INSTANCE_TYPES: tuple[tuple[str, ...], ...] = (
    ("g5.xlarge", "g5.2xlarge"),
    ("g6.xlarge", "g6.2xlarge"),
    ("g5.xlarge",),
    ("g6.xlarge", "g5.xlarge"),
)
# Triton 25.01 ships CUDA 12.8.0 (matrix.yaml ngc_images), which the R580 driver runs.
SERVICE_IMAGE = "nvcr.io/nvidia/tritonserver:25.01-py3"
# ACM certificate ARN in the AWS documentation account (components/deploy_checks.py DOCUMENTATION_ACCOUNTS):
# a preview accepts it, `pulumi up` would not.
CERTIFICATE_ARN = "arn:aws:acm:us-west-2:111122223333:certificate/00000000-0000-0000-0000-000000000000"


def pool_name(i: int) -> str:
    return f"gpu-{i:03d}"


def service_name(j: int) -> str:
    return f"svc-{j:03d}"


def gpu_pools(count: int) -> list[dict[str, Any]]:
    """`gpuNodeGroups` entries: operator-driver pools on Ubuntu 24.04, half of them Spot, each a fixed four nodes:
    a node group keeps its desiredSize (nothing in the stack scales it: docs/day-two.md, "Node group sizes"), so a
    scaled service on it must fit those nodes (`scaled-workload-wakes-nodes`)."""
    return [
        {
            "name": pool_name(i),
            "instanceTypes": list(POOL_INSTANCE_TYPES[i % len(POOL_INSTANCE_TYPES)]),
            "os": "ubuntu-24.04",
            "capacityType": "spot" if i % 2 else "on-demand",
            "minSize": 1,
            "desiredSize": 4,
            "maxSize": 4,
            "diskSizeGiB": 200,
        }
        for i in range(count)
    ]


def inference_services(count: int, pools: list[str]) -> list[dict[str, Any]]:
    """`inferenceServices` entries, each pinned to one of `pools` (round robin)."""
    if count and not pools:
        raise ValueError("inference services need at least one GPU pool to run on")
    services: list[dict[str, Any]] = []
    for j in range(count):
        name = service_name(j)
        service: dict[str, Any] = {
            "name": name,
            "image": SERVICE_IMAGE,
            "gpusPerReplica": 1,
            "port": 8000,
            "metricsPort": 8002,
            "nodePools": [pools[j % len(pools)]],
            "minReplicas": 1,  # a node group does not scale from zero (scaled-workload-wakes-nodes)
            "maxReplicas": 4,  # the group's four 1-GPU nodes
            "autoscaling": {
                "query": f'sum(rate(nv_inference_request_success{{service="{name}"}}[1m]))',
                "threshold": "100",
                "activationThreshold": "1",
                "wakeSchedule": {"start": "0 7 * * 1-5", "end": "0 19 * * 1-5"},  # KEDA cron: the day's replicas
            },
            "startupSeconds": 1800,  # covers a lazy 100 GiB restore (components/inference/budget.py)
        }
        if j % 2 == 0:
            service["ingress"] = {"host": f"{name}.prod.example.com", "certificateArn": CERTIFICATE_ARN,
                                  "scheme": "internal"}
        if j % 4 == 0:
            service["modelVolume"] = {"snapshotId": f"snap-{j:017x}", "sizeGiB": 100, "mountPath": "/models"}
        services.append(service)
    return services


def generated_config(base: dict[str, Any], *, services: int, pools: int) -> dict[str, Any]:
    """`base` (a parsed stack file) with P generated GPU pools and N generated services."""
    if pools < 1:
        raise ValueError("a generated stack has at least one GPU pool")
    doc = copy.deepcopy(base)
    config = doc.setdefault("config", {})
    generated = gpu_pools(pools)
    config[f"{PROJECT}:gpuNodeGroups"] = generated
    config.pop(f"{PROJECT}:inferenceServices", None)
    if services:
        config[f"{PROJECT}:inferenceServices"] = inference_services(services, [p["name"] for p in generated])
    return doc


def write_stack(directory: Path, base_file: Path, *, services: int, pools: int) -> Path:
    """Write the generated stack next to nothing else: `<directory>/Pulumi.gen-s<N>-p<P>.yaml`."""
    base = yaml.safe_load(base_file.read_text(encoding="utf-8"))
    doc = generated_config(base, services=services, pools=pools)
    path = directory / f"Pulumi.gen-s{services}-p{pools}.yaml"
    header = (f"# Generated by bench/stacks.py from {base_file.name}: {services} inference services, "
              f"{pools} GPU pools.\n")
    path.write_text(header + yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path

"""How the stack policies scale: every registered policy over a synthetic stack of N pools and M workloads.

    .venv/bin/python bench/policy_scaling.py [--pools 50] [--workloads 400]

Runs in-process (no gate, no gRPC) so it isolates the policies' own cost: inventory building and
the workload x pool reachability every stack policy computes. Prints total seconds per policy,
slowest first (CPU seconds of this process, which a shared machine disturbs less than wall time, and
wall seconds), and the peak RSS of this process. Policies run in the pack's order (by name), each on
its own copy of the stack as the SDK hands it, so a `-caveats` twin shows what it costs after its
policy has run.
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from policies.gpu_guard.base import all_policies  # noqa: E402
from tests.policies.harness import run_policy  # noqa: E402

INSTANCE_TYPES = ["g6.xlarge", "g5.xlarge", "g5.12xlarge", "g6e.xlarge", "g4dn.xlarge"]


def synthetic_stack(pools: int, workloads: int) -> list[dict[str, Any]]:
    resources: list[dict[str, Any]] = [
        {"type": "aws:eks/cluster:Cluster", "name": "cluster", "props": {"version": "1.35"}},
        {"type": "aws:eks/nodeGroup:NodeGroup", "name": "system", "props": {
            "labels": {"gpu-platform.io/role": "system"}, "instanceTypes": ["m7i.large"],
            "scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 3}, "version": "1.35",
            "subnetIds": ["subnet-a", "subnet-b"]}},
        {"type": "kubernetes:helm.sh/v3:Release", "name": "gpu-operator", "props": {
            "chart": "gpu-operator", "version": "v26.7.0", "namespace": "gpu-operator",
            "values": {"driver": {"version": "580.173.02"}}}},
    ]
    for i in range(pools):
        resources.append({"type": "aws:eks/nodeGroup:NodeGroup", "name": f"gpu-{i}", "props": {
            "labels": {"gpu-platform.io/pool": f"gpu-{i}", "gpu-platform.io/os": "ubuntu-24.04",
                       "gpu-platform.io/driver": "580.173.02", "gpu-platform.io/driver-source": "operator"},
            "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}],
            "instanceTypes": [INSTANCE_TYPES[i % len(INSTANCE_TYPES)]], "amiType": "CUSTOM", "version": "1.35",
            "scalingConfig": {"minSize": 0, "desiredSize": 0, "maxSize": 2}}})
    for j in range(workloads):
        resources.append({"type": "kubernetes:apps/v1:Deployment", "name": f"svc-{j}", "props": {
            "metadata": {"name": f"svc-{j}", "namespace": "inference"},
            "spec": {"template": {"metadata": {"labels": {"app": f"svc-{j}"}}, "spec": {
                "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                "containers": [{"name": "main", "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                                "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}})
    return resources


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pools", type=int, default=50)
    parser.add_argument("--workloads", type=int, default=400)
    args = parser.parse_args()
    stack = synthetic_stack(args.pools, args.workloads)
    timings = []
    for policy in all_policies():
        start, cpu = time.perf_counter(), time.process_time()
        outcome = run_policy(policy, stack, {"today": "2026-11-29"})
        timings.append((time.process_time() - cpu, time.perf_counter() - start, policy.name, len(outcome.messages)))
    total_cpu, total_wall = sum(t[0] for t in timings), sum(t[1] for t in timings)
    print(f"{len(stack)} resources ({args.pools} GPU pools, {args.workloads} workloads): {total_cpu:.2f}s CPU, "
          f"{total_wall:.2f}s wall in all")
    for cpu_s, wall_s, name, violations in sorted(timings, reverse=True)[:10]:
        print(f"  {cpu_s:7.3f}s CPU {wall_s:7.3f}s wall  {name}  ({violations} violations)")
    print(f"peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MiB")


if __name__ == "__main__":
    main()

"""A vLLM replica's CPU against vLLM's guidance and what each reachable instance type gives a pod (config check).

vLLM's guidance: 2 + N physical cores for N GPUs, 2 x (2 + N) vCPUs (components/inference/vllm.py cites
docs/configuration/optimization.md:508-526 at v0.34.0). What a node gives pods is its allocatable CPU: its vCPUs
less the kubelet's kube-reserved CPU, which the EKS node images compute from the vCPU count: 6 % of the first core,
1 % of the second, 0.5 % of the third and fourth, 0.25 % of each further core
(awslabs/amazon-eks-ami nodeadm/internal/kubelet/config.go `getCPUMillicoresToReserve`, the ranges 0/1000/2000/4000
m at 600/100/50/25 per 10,000; the AL2 and Ubuntu bootstrap.sh `get_cpu_millicores_to_reserve` the same:
https://github.com/awslabs/amazon-eks-ami/blob/main/nodeadm/internal/kubelet/config.go). A 4-vCPU xlarge gives
3,920 m. DaemonSets on the node (the CNI, kube-proxy, the GPU stack's agents) request part of that too, which the
config cannot see.

The levels, by certainty:
- a `cpu` above the allocatable CPU of every instance type the service can reach: the scheduler never places the
  replica (a pod's requests must fit a node's allocatable): refused;
- above it on some of them only: those nodes never hold a replica (advisory, naming them);
- below the guidance (the default is capped at what the smallest type gives, components/inference/vllm_workload.py):
  the replica runs, slower; an advisory with the shortfall. Memory allocatable depends on the node's max-pods
  (kube-reserved memory = 11 MiB x maxPods + 255 MiB, config.go `getMemoryMebibytesToReserve`), which the config does
  not know: memory is not judged here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from components.config.issues import Path
from components.config.models import StackConfig
from components.config.problems import Problem
from components.config.serving import InferenceServiceConfig
from components.inference import vllm as facts
from policies.gpu_guard.matrix import load_matrix

_RESERVE_RANGES = ((0, 1000, 600), (1000, 2000, 100), (2000, 4000, 50), (4000, None, 25))


def kube_reserved_millicores(vcpus: int) -> int:
    """The CPU the EKS node images reserve for the kubelet on a node of `vcpus` vCPUs (module docstring)."""
    total = vcpus * 1000
    reserved = 0
    for start, end, per_10000 in _RESERVE_RANGES:
        if total <= start:
            break
        top = total if end is None else min(total, end)
        reserved += (top - start) * per_10000 // 10000
    return reserved


def allocatable_millicores(vcpus: int) -> int:
    return vcpus * 1000 - kube_reserved_millicores(vcpus)


def _millicores(value: str) -> int | None:
    text = value.strip()
    try:
        return int(text[:-1]) if text.endswith("m") else math.ceil(float(text) * 1000)
    except ValueError:
        return None


def cpu_request(config: InferenceServiceConfig, instance_types: Sequence[str] = ()) -> str:
    """A vLLM replica's CPU: the stack's `cpu`, else vLLM's guidance capped at what the smallest reachable instance
    type gives a pod, its vCPUs less one (components/inference/vllm_workload.py says why)."""
    if "cpu" in config.model_fields_set:
        return config.cpu
    matrix = load_matrix()
    caps = [capacity[0] - 1 for t in instance_types if (capacity := matrix.instance_capacity(t)) is not None]
    return str(max(1, min([facts.cpu_guidance(config.gpus_per_replica), *caps])))


def _service_types(stack: StackConfig, service: InferenceServiceConfig) -> list[str]:
    pools = [p for p in stack.gpu_pools() if not service.node_pools or p.name in service.node_pools]
    return list(dict.fromkeys(t for p in pools for t in p.instance_types))


def cpu_findings(matrix: Any, stack: StackConfig, service: InferenceServiceConfig,
                 at: Path) -> tuple[list[Problem], list[Problem]]:
    """(refusals, advisories) of a vLLM service's CPU request."""
    if service.runtime != "vllm":
        return [], []
    types = _service_types(stack, service)
    request = cpu_request(service, types)
    wanted = _millicores(request)
    if wanted is None:
        return [], []
    guidance = facts.cpu_guidance(service.gpus_per_replica)
    sizes = {t: allocatable_millicores(c[0]) for t in types if (c := matrix.instance_capacity(t)) is not None}
    too_small = sorted(t for t, m in sizes.items() if wanted > m)
    gives = ", ".join(f"{t} {sizes[t]} m" for t in too_small)
    if too_small and len(too_small) == len(sizes):
        return [Problem(
            (*at, "cpu"), request,
            f"the replica requests {wanted} m of CPU, more than any instance type it can reach gives a pod "
            f"(allocatable: {gives}: vCPUs less the kubelet's reserve), so the scheduler never places it",
            fix=f"set cpu to at most {max(sizes.values()) // 1000} (vLLM then runs below its guidance of {guidance} "
                "vCPUs), or reach a larger instance size")], []
    advisories: list[Problem] = []
    if too_small:
        advisories.append(Problem(
            (*at, "cpu"), request,
            f"the replica requests {wanted} m of CPU, more than {gives} (allocatable) gives a pod: it never runs on "
            "those types", fix=f"keep {', '.join(too_small)} out of the service's pools, or lower cpu"))
    if wanted < guidance * 1000:
        smallest = min(sizes, key=lambda t: sizes[t]) if sizes else None
        why = f" (the most {smallest} gives a pod, less one vCPU for its DaemonSets)" if smallest and \
            "cpu" not in service.model_fields_set else ""
        advisories.append(Problem(
            (*at, "cpu"), request,
            f"the replica gets {wanted / 1000:g} vCPUs{why}, {guidance - wanted / 1000:g} short of vLLM's guidance "
            f"for {service.gpus_per_replica} GPU(s): 2 + N physical cores, {guidance} vCPUs (API server, engine core "
            "and one worker per GPU, docs/configuration/optimization.md:508-526 at v0.34.0); CPU contention slows "
            "it down",
            fix=f"reach instance types with at least {guidance + 1} vCPUs (a 2xlarge has 8) and leave cpu unset"))
    return [], advisories

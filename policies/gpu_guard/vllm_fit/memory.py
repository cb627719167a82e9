"""The memory vLLM budgets from on one GPU of an instance type: the total `cudaMemGetInfo` reports
(`MemorySnapshot`, vllm/utils/mem_utils.py:166 at v0.34.0, multiplied by the utilization at
vllm/v1/worker/utils.py:743), from matrix.yaml `gpu_memory`: measured where a public log or the device probe gives
it, else EC2's figure less the margin measured on the GPUs that have both (an estimate, with EC2's figure as its
upper bound). Keyed by instance family where one GPU model comes in two sizes (p4d/p4de, p3/p3dn).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GpuMemory:
    low_gib: float  # the measured total, or the estimate's lower bound
    high_gib: float  # the measured total, or EC2's figure
    estimate: bool
    source: str


def gpu_memory(matrix: Any, inst: Any) -> GpuMemory | None:
    rows = [r for r in matrix.data.gpu_memory if r.model == inst.gpu_model]
    row = next((r for r in rows if inst.family in r.families), None) or next((r for r in rows if not r.families), None)
    if row is None or row.cuda_total_mib is None:
        return None
    high = row.cuda_total_max_mib or row.cuda_total_mib
    source = row.cuda_source or row.usable_source
    return GpuMemory(row.cuda_total_mib / 1024, high / 1024, source.startswith("estimate"), source)

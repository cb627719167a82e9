"""GPU memory as CUDA reports it, and the fixed costs a vLLM worker pays before its KV cache, on a real GPU.

    python3 bench/gpu_memory_probe.py > gpu_memory.json     (on a machine with an NVIDIA GPU and PyTorch)

vLLM sizes its memory budget from `torch.cuda.mem_get_info()` (free, total) taken at worker start
(vllm/utils/mem_utils.py `MemorySnapshot`, vllm/v1/worker/gpu_worker.py at v0.34.0): the budget is
`total * gpu_memory_utilization`, and everything already held when the snapshot is taken (the CUDA context, other
processes) is non-KV memory. This script reports, per GPU:
- `total_bytes`: what cudaMemGetInfo calls total (what vLLM multiplies by the utilization);
- `context_bytes`: total - free right after the CUDA context is created and before any allocation
  (the driver's context, the CUDA runtime's module images);
- `cublas_bytes`: what one bf16 matrix product adds outside PyTorch's caching allocator (cuBLAS handle and
  workspace), measured through cudaMemGetInfo;
- `nvidia_smi`: the board's name and memory as nvidia-smi lists it.
Standard library and PyTorch only: the device machine reaches no package registry.
"""

from __future__ import annotations

import json
import subprocess
import sys


def main() -> int:
    import torch  # type: ignore[import-not-found]  # noqa: PLC0415  # only on the device machine (no stub here)

    gpus: list[dict[str, object]] = []
    out: dict[str, object] = {"torch": torch.__version__, "cuda": torch.version.cuda, "gpus": gpus}
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=index,name,memory.total,driver_version,compute_cap",
                              "--format=csv,noheader,nounits"], capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        smi = f"nvidia-smi failed: {err}"
    out["nvidia_smi"] = smi.strip().splitlines()
    for index in range(torch.cuda.device_count()):
        torch.cuda.set_device(index)
        free0, total = torch.cuda.mem_get_info(index)  # creates the context
        props = torch.cuda.get_device_properties(index)
        a = torch.randn(4096, 4096, device=f"cuda:{index}", dtype=torch.bfloat16)
        b = a @ a
        torch.cuda.synchronize()
        free1, _ = torch.cuda.mem_get_info(index)
        held_by_torch = torch.cuda.memory_reserved(index)
        del a, b
        gpus.append({
            "index": index,
            "name": props.name,
            "compute_capability": f"{props.major}.{props.minor}",
            "total_bytes": total,
            "total_mib": total / 2**20,
            "total_gib": total / 2**30,
            "props_total_memory_bytes": props.total_memory,
            "context_bytes": total - free0,
            "cublas_bytes": (free0 - free1) - held_by_torch,
            "torch_reserved_bytes": held_by_torch,
        })
    json.dump(out, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What changed in vLLM's startup memory arithmetic between the admitted releases (matrix.yaml serving_images, v0.12.0
to v0.34.0), read from each release's sdist on PyPI (vllm-<tag>.tar.gz):

- The default `--gpu-memory-utilization`: 0.9 up to v0.19.1 (`vllm/config/cache.py`, e.g. v0.12.0 :49, v0.18.0 :41),
  0.92 from v0.20.0 (v0.20.0 :66, v0.33.0 :215), and from v0.34.0 1.0 with the extensible KV cache, the default on
  CUDA (`resolved_gpu_memory_utilization`, v0.34.0 vllm/config/cache.py:494-501, 395-406).
- `--max-model-len -1` (fit the context to memory): from v0.14.0 (`original_max_model_len == -1`, v0.14.0
  vllm/v1/core/kv_cache_utils.py:1508; v0.34.0 vllm/v1/core/kv_cache_planning.py:1647). v0.12.0 and v0.13.0 have no
  auto-fit.
- CUDA graph memory taken from the KV budget before it is sized (`VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS`): present
  from v0.18.0 (v0.18.0 vllm/v1/worker/gpu_worker.py), on by default from v0.21.0 (v0.34.0 gpu_worker.py:809-816:
  "default since v0.21.0"). Before, the graphs are captured after the KV cache is sized, into the headroom the
  utilization leaves.
- The extensible KV cache (v0.34.0 vllm/v1/worker/extensible_kv_cache.py:592-618): the cache is sized after CUDA graph
  capture and warmup from the memory then free, keeping max(1 GiB, 0.75 x the activation peak) free plus the peak
  itself (KV_CACHE_MARGIN_FLOOR_BYTES, KV_CACHE_MARGIN_FRACTION, :64-65); the one-request check runs on that size
  (vllm/v1/core/kv_cache_planning.py:1840-1866).

A tag outside this list is not judged (its rules were not read): the fit is unseen for it, never a PASS.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

SDIST = "https://pypi.org/project/vllm/{version}/#files"


@dataclass(frozen=True)
class Release:
    tag: str
    default_utilization: float
    extensible: bool  # the KV cache is sized after warmup from measured free memory (v0.34.0)
    auto_fit: bool  # --max-model-len -1 fits the context to memory
    graphs_counted: bool  # CUDA graph memory is taken from the KV budget before the one-request check

    @property
    def source(self) -> str:
        return SDIST.format(version=self.tag.lstrip("v"))


# Every admitted tag (matrix.yaml serving_images, vllm/vllm-openai), read.
_READ: tuple[tuple[str, float, bool, bool, bool], ...] = (
    *((t, 0.9, False, False, False) for t in ("v0.12.0", "v0.13.0")),
    *((t, 0.9, False, True, False) for t in ("v0.14.0", "v0.14.1", "v0.16.0", "v0.17.0", "v0.17.1")),
    *((t, 0.9, False, True, False) for t in ("v0.18.0", "v0.18.1", "v0.19.0", "v0.19.1")),
    *((t, 0.92, False, True, False) for t in ("v0.20.0", "v0.20.1", "v0.20.2")),
    *((t, 0.92, False, True, True) for t in (
        "v0.21.0", "v0.22.0", "v0.22.1", "v0.23.0", "v0.24.0", "v0.25.0", "v0.25.1", "v0.26.0", "v0.27.0", "v0.27.1",
        "v0.28.0", "v0.29.0", "v0.30.0", "v0.31.0", "v0.32.0", "v0.33.0")),
    ("v0.34.0", 1.0, True, True, True),
)
RELEASES: dict[str, Release] = {t: Release(t, u, e, a, g) for t, u, e, a, g in _READ}
PINNED = "v0.34.0"


def release_of_image(image: str | None) -> Release | None:
    """The rules of the vLLM release an image tag names (`vllm/vllm-openai:v0.34.0`, `...:v0.20.0-cu129`); None when
    the tag names no release read here (a digest, `latest`, a custom image)."""
    if not image:
        return None
    tag = image.rsplit("/", 1)[-1].partition(":")[2].partition("@")[0]
    match = re.fullmatch(r"v?(\d+\.\d+\.\d+)(?:-[a-z0-9]+)?", tag)
    return RELEASES.get(f"v{match.group(1)}") if match else None

"""vLLM's startup memory arithmetic, computed as vLLM computes it at each admitted release (docs/serving.md):
inputs.py (the model and the flags), memory.py (the CUDA total per GPU), kv.py (one request's KV cache),
overhead.py (non-KV memory, low and high), refusals.py (vLLM's own refusals), releases.py (per-release rules),
judge.py (the levels)."""

from .inputs import GIB, ModelInput, ServingArgs
from .judge import FitFinding, fit_findings
from .releases import PINNED, RELEASES, Release, release_of_image

__all__ = ["GIB", "PINNED", "RELEASES", "FitFinding", "ModelInput", "Release", "ServingArgs", "fit_findings",
           "release_of_image"]

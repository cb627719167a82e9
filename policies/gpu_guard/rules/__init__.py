"""One module per policy; each registers itself through `gpu_guard.base`."""

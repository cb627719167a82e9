"""gpu-platform policy pack: the driver/OS/CUDA matrix and the scheduling rules around GPU nodes."""

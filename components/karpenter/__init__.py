"""Karpenter v1: the controller of a cluster (`controller`), its IAM (`iam`), its interruption queue
(`interruption`) and the GPU pools it scales from zero (`pool`)."""

from __future__ import annotations

from components.karpenter.controller import KarpenterController
from components.karpenter.pool import KarpenterGpuPool

__all__ = ["KarpenterController", "KarpenterGpuPool"]

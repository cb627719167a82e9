"""The gpu-platform CrossGuard policy pack, as `pulumi preview --policy-pack policies` starts it."""

from gpu_guard.base import EnforcementLevel, all_policies
from gpu_guard.servicer import install
from pulumi_policy import PolicyPack

install()  # each resource deserialized once per call, not once per policy (gpu_guard/servicer.py)
PolicyPack(
    name="gpu-platform",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=all_policies(),
)

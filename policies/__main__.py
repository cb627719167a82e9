"""The gpu-platform CrossGuard policy pack, as `pulumi preview --policy-pack policies` starts it."""

from gpu_guard.base import EnforcementLevel, all_policies
from pulumi_policy import PolicyPack

PolicyPack(
    name="gpu-platform",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=all_policies(),
)

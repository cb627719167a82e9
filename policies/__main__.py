"""The gpu-platform CrossGuard policy pack, as `pulumi preview --policy-pack policies` starts it."""

import threading

from gpu_guard.base import EnforcementLevel, all_policies
from gpu_guard.matrix import load_matrix
from gpu_guard.servicer import install
from pulumi_policy import PolicyPack

install()  # each resource deserialized once per call, not once per policy (gpu_guard/servicer.py)
# The engine starts the pack, then runs the program, and only then sends the first Analyze: the compatibility
# matrix (matrix.yaml, validated: the first rule that needs it paid about 0.2 s) is read meanwhile, beside the
# server. Should a call come first, it reads the matrix itself; load_matrix answers the same either way.
threading.Thread(target=load_matrix, name="load-matrix", daemon=True).start()
PolicyPack(
    name="gpu-platform",
    enforcement_level=EnforcementLevel.ADVISORY,
    policies=all_policies(),
)

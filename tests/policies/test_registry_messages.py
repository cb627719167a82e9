"""gpu-driver-image-published with registry checking: every registry outcome's message word for word.

The registry is monkeypatched (the client itself is tested against a loopback registry in
test_registry.py). The catalogue's own finding inside each message is taken from the matrix, so the
test pins the wording the policy adds around it: what the registry said, and what to do.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
import yaml

from policies.gpu_guard import registry
from policies.gpu_guard.base import all_policies, companions_of
from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.registry import RegistryAnswer
from policies.gpu_guard.rules._matrix_common import finding_text
from tests.policies.harness import FIXTURES, apply_patch, run_with_caveats

POLICY = {p.name: p for p in all_policies()}["gpu-driver-image-published"]
TWINS = companions_of("gpu-driver-image-published")
BASELINE = yaml.safe_load((FIXTURES / "gpu-driver-image-published" / "baseline.yaml").read_text())
CONFIG = {"today": "2026-11-29", "verifyRegistry": True, "registry": "http://127.0.0.1:5000",
          "registryTimeoutSeconds": 2}
CONTEXT = "driver {v} (GPU Operator values driver.version, operator v26.7.0) on ubuntu-24.04 pool(s) a10g"


def _resources(version: str) -> list[dict[str, Any]]:
    return apply_patch(BASELINE["resources"],
                       [{"resource": "gpu-operator", "set": ["values", "driver", "version"], "value": version}])


def _verdicts(monkeypatch: pytest.MonkeyPatch, version: str, exists: bool | None, detail: str) -> list[tuple[str, str]]:
    monkeypatch.setattr(registry, "manifest_exists",
                        lambda ref, *, timeout_s, registry_override: RegistryAnswer(exists, detail))
    outcome = run_with_caveats(POLICY, TWINS, _resources(version), CONFIG)
    return [(v.level, v.message) for v in outcome.violations]


def _catalogue(version: str) -> str:
    (finding,) = [f for f in load_matrix().driver_image(version, "ubuntu-24.04", operator="v26.7.0",
                                                          today=date(2026, 11, 29)) if f.level == "mandatory"]
    return finding_text(finding)


def test_registry_missing_a_catalogued_image_blocks(monkeypatch):
    assert _verdicts(monkeypatch, "580.173.02", False, "MANIFEST_UNKNOWN") == [("mandatory", (
        f"{CONTEXT.format(v='580.173.02')}: the registry has no image nvcr.io/nvidia/driver:580.173.02-ubuntu24.04 "
        "(MANIFEST_UNKNOWN), although the catalogue lists it; the driver pod would sit in ImagePullBackOff. Pin a "
        "driver version whose image the registry serves and correct matrix.yaml."))]


def test_registry_confirming_the_catalogue_says_so(monkeypatch):
    assert _verdicts(monkeypatch, "535.15.04", False, "MANIFEST_UNKNOWN") == [("mandatory", (
        f"{CONTEXT.format(v='535.15.04')}: {_catalogue('535.15.04')} The registry confirms: MANIFEST_UNKNOWN."))]


def test_unreachable_registry_leaves_the_catalogue_to_decide_a_block(monkeypatch):
    assert _verdicts(monkeypatch, "535.15.04", None, "timed out") == [("mandatory", (
        f"{CONTEXT.format(v='535.15.04')}: {_catalogue('535.15.04')} (The registry could not be reached: timed out; "
        "the pinned catalogue decided.)"))]


def test_unreachable_registry_with_a_catalogued_image_is_a_caveat(monkeypatch):
    assert _verdicts(monkeypatch, "580.173.02", None, "timed out") == [("advisory", (
        f"{CONTEXT.format(v='580.173.02')}: the registry could not be asked for "
        "nvcr.io/nvidia/driver:580.173.02-ubuntu24.04 (timed out); the pinned catalogue lists it as published. "
        "Check registry reachability, or set verifyRegistry: false to rely on the catalogue alone."))]


def test_registry_serving_an_uncatalogued_image_is_a_caveat_to_update_the_matrix(monkeypatch):
    assert _verdicts(monkeypatch, "580.99.99", True, "published (sha256:abc)") == [("advisory", (
        f"{CONTEXT.format(v='580.99.99')}: the registry serves nvcr.io/nvidia/driver:580.99.99-ubuntu24.04 "
        f"(published (sha256:abc)) but the catalogue says: {_catalogue('580.99.99')} Update matrix.yaml."))]


def test_registry_serving_a_catalogued_image_is_silent(monkeypatch):
    assert _verdicts(monkeypatch, "580.173.02", True, "published") == []

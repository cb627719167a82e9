"""gpu-driver-image-published with the live registry check (registry answers monkeypatched; the real
registry client is tested against a loopback registry in test_registry.py)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from policies.gpu_guard import registry
from policies.gpu_guard.base import all_policies, companions_of
from policies.gpu_guard.registry import RegistryAnswer
from policies.gpu_guard.rules._matrix_common import ADVISORY_PREFIX, config_today
from tests.policies.harness import FIXTURES, Outcome, apply_patch, resource_urn, run_policy, run_with_caveats

POLICY = {p.name: p for p in all_policies()}["gpu-driver-image-published"]
TWINS = companions_of("gpu-driver-image-published")
BASELINE = yaml.safe_load((FIXTURES / "gpu-driver-image-published" / "baseline.yaml").read_text())
OPERATOR_URN = resource_urn(next(r for r in BASELINE["resources"] if r["name"] == "gpu-operator"))
CONFIG = {"today": "2026-11-29", "verifyRegistry": True, "registry": "http://127.0.0.1:5000",
          "registryTimeoutSeconds": 2}


def _with_driver(version: str) -> list[dict[str, Any]]:
    return apply_patch(BASELINE["resources"],
                       [{"resource": "gpu-operator", "set": ["values", "driver", "version"], "value": version}])


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, float, str | None]]:
    calls: list[tuple[str, float, str | None]] = []
    monkeypatch.setattr(registry, "manifest_exists", lambda *a, **k: pytest.fail("answer not configured"))
    return calls


def _single(outcome: Outcome) -> str:
    """The one violation's message, after checking it is reported against the operator release."""
    (violation,) = outcome.violations
    assert violation.urn == OPERATOR_URN
    return violation.message


def _answer(monkeypatch: pytest.MonkeyPatch, calls: list[Any], exists: bool | None, detail: str) -> None:
    def fake(ref: str, *, timeout_s: float, registry_override: str | None) -> RegistryAnswer:
        calls.append((ref, timeout_s, registry_override))
        return RegistryAnswer(exists, detail)
    monkeypatch.setattr(registry, "manifest_exists", fake)


def test_registry_is_not_asked_unless_configured(asked):
    assert run_policy(POLICY, BASELINE["resources"], {"today": "2026-11-29"}).messages == ()
    assert asked == []


def test_registry_is_asked_for_the_conventional_image_with_the_configured_override_and_timeout(monkeypatch, asked):
    _answer(monkeypatch, asked, True, "published")
    assert run_policy(POLICY, BASELINE["resources"], CONFIG).messages == ()
    assert asked == [("nvcr.io/nvidia/driver:580.173.02-ubuntu24.04", 2.0, "http://127.0.0.1:5000")]


def test_rejects_an_image_the_registry_does_not_have_even_when_the_catalogue_lists_it(monkeypatch, asked):
    _answer(monkeypatch, asked, False, "MANIFEST_UNKNOWN")
    message = _single(run_policy(POLICY, BASELINE["resources"], CONFIG))
    assert not message.startswith(ADVISORY_PREFIX)
    assert "the registry has no image nvcr.io/nvidia/driver:580.173.02-ubuntu24.04 (MANIFEST_UNKNOWN)" in message


def test_unreachable_registry_falls_back_to_the_catalogue_and_says_so(monkeypatch, asked):
    _answer(monkeypatch, asked, None, "connection refused")
    message = _single(run_policy(POLICY, _with_driver("535.15.04"), CONFIG))
    assert "driver 535.15.04 has no published image" in message
    assert "The registry could not be reached: connection refused; the pinned catalogue decided." in message


def test_unreachable_registry_with_a_catalogued_image_blocks_nothing_and_says_so_as_a_caveat(monkeypatch, asked):
    _answer(monkeypatch, asked, None, "timed out")
    assert run_policy(POLICY, BASELINE["resources"], CONFIG).messages == ()
    outcome = run_with_caveats(POLICY, TWINS, BASELINE["resources"], CONFIG)
    _single(outcome)
    (message,) = outcome.messages  # a caveat: marked as advisory
    assert message.startswith(ADVISORY_PREFIX)
    assert "the registry could not be asked for nvcr.io/nvidia/driver:580.173.02-ubuntu24.04 (timed out)" in message


def test_registry_serving_an_uncatalogued_image_turns_the_verdict_into_an_advisory(monkeypatch, asked):
    _answer(monkeypatch, asked, True, "published (sha256:abc)")
    assert run_policy(POLICY, _with_driver("580.99.99"), CONFIG).messages == ()
    outcome = run_with_caveats(POLICY, TWINS, _with_driver("580.99.99"), CONFIG)
    _single(outcome)
    (message,) = outcome.messages  # a caveat: marked as advisory
    assert message.startswith(ADVISORY_PREFIX)
    assert "Update matrix.yaml" in message


def test_precompiled_images_are_judged_by_the_catalogue_only(monkeypatch, asked):
    resources = apply_patch(BASELINE["resources"], [{"resource": "gpu-operator", "set": ["values", "driver"],
                                                     "value": {"version": "535", "usePrecompiled": True}}])
    message = _single(run_policy(POLICY, resources, CONFIG))
    assert "precompiled driver R535 is not built for ubuntu-24.04" in message


def test_rejects_a_timeout_that_is_not_a_positive_number():
    with pytest.raises(ValueError, match="registryTimeoutSeconds=0 must be a positive number"):
        run_policy(POLICY, BASELINE["resources"], {**CONFIG, "registryTimeoutSeconds": 0})


def test_today_config_must_be_an_iso_date():
    with pytest.raises(ValueError, match="today='29/11/2026' is not an ISO date"):
        config_today({"today": "29/11/2026"})
    assert str(config_today({"today": "2026-11-29"})) == "2026-11-29"


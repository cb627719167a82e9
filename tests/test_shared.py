"""A test that needs ../shared skips locally when it is absent, and fails under CI=true."""

from __future__ import annotations

import pytest

from tests.policies.catalogue import catalogue
from tests.shared import shared_dir, upstream


def test_shared_dir_follows_the_override(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path))
    assert shared_dir() == tmp_path


def test_missing_upstream_skips_with_the_reason_outside_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path / "absent"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"upstream reference data .*absent/upstream/crds is absent"):
        upstream("crds")


def test_missing_upstream_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path / "absent"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI=true but upstream reference data"):
        upstream("crds")


def test_missing_policy_catalogue_fails_under_ci_and_skips_outside(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI=true but .*POLICIES.md is absent"):
        catalogue()
    monkeypatch.setenv("CI", "false")
    with pytest.raises(pytest.skip.Exception, match=r"POLICIES.md is absent"):
        catalogue()


def test_present_upstream_is_returned(monkeypatch, tmp_path):
    (tmp_path / "upstream" / "crds").mkdir(parents=True)
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert upstream("crds") == tmp_path / "upstream" / "crds"

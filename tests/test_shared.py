"""A test reads upstream data from the cache only: it skips locally when a file is absent, and fails under CI=true."""

from __future__ import annotations

import pytest

from tests.shared import upstream, upstream_cache
from tools.upstream.lock import Pin


def test_the_cache_follows_the_override(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path))
    assert upstream_cache() == tmp_path


def test_missing_upstream_skips_with_the_reason_outside_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path / "absent"))
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=r"data .*absent/crds is absent \(run `make upstream`"):
        upstream("crds")


def test_missing_upstream_fails_under_ci(monkeypatch, tmp_path):
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path / "absent"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"CI=true but upstream reference data"):
        upstream("crds")


def test_the_shared_checkout_is_not_where_tests_look(monkeypatch, tmp_path):
    (tmp_path / "shared/upstream/crds").mkdir(parents=True)
    monkeypatch.setenv("GPU_PLATFORM_SHARED", str(tmp_path / "shared"))
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"cache/crds is absent"):
        upstream("crds")


def test_present_upstream_is_returned(monkeypatch, tmp_path):
    (tmp_path / "crds").mkdir(parents=True)
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    assert upstream("crds") == tmp_path / "crds"


def test_an_absent_optional_pin_skips_with_its_reason_even_under_ci(monkeypatch, tmp_path):
    pin = Pin(file="pulumi/x.json", repository="o/r", commit="0" * 40, path="x.json", sha256="0" * 64, size=1,
              optional="not in the shared copy")
    monkeypatch.setattr("tests.shared.load", lambda: [pin])
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", str(tmp_path))
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.skip.Exception, match=r"optional upstream file pulumi/x.json not fetched \(not in the"):
        upstream("pulumi", "x.json")
    with pytest.raises(pytest.fail.Exception, match="CI=true but"):
        upstream("pulumi", "other.json")

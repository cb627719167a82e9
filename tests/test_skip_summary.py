"""A test run ends with the skip summary: each cause, how many tests it skipped, and the command that runs them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.policies import conftest_registry
from tests.provider.languages import test_typescript
from tests.security import test_checkov
from tests.shared import REPO, upstream
from tests.skip_summary import CAUSES, reason_of, summary_lines
from tools.upstream.lock import Pin

OPTIONAL_PIN = Pin(file="pulumi/x.json", repository="o/r", commit="0" * 40, path="x.json", sha256="0" * 64, size=1,
                   optional="not in the shared copy")


def _skip_reason(call: object) -> str:
    with pytest.raises(pytest.skip.Exception) as skipped:
        call()  # type: ignore[operator]
    return str(skipped.value.msg)


def test_every_skip_the_suite_can_take_is_recognised_with_its_command(monkeypatch: pytest.MonkeyPatch) -> None:
    # The real skip helpers, outside CI (under CI=true they fail instead).
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("CHECKOV", raising=False)
    monkeypatch.setenv("PATH", "")
    monkeypatch.setattr(conftest_registry, "REGISTRY_BINARY", Path("/nonexistent/docker-registry"))
    monkeypatch.setattr("tests.shared.load", lambda: [OPTIONAL_PIN])
    monkeypatch.setenv("GPU_PLATFORM_UPSTREAM_CACHE", "/nonexistent/cache")
    monkeypatch.setattr(test_typescript, "TSC", REPO / "nonexistent" / "tsc")
    reasons = [
        _skip_reason(lambda: upstream("no-such-folder", "crd.yaml")),
        _skip_reason(lambda: upstream("pulumi", "x.json")),
        _skip_reason(test_checkov.checkov),
        _skip_reason(conftest_registry.require_registry_binary),
        _skip_reason(test_typescript._tools),
        "hypothesis is pinned in requirements-dev.txt",
    ]
    lines = summary_lines(reasons)
    assert lines[0] == ("skip summary: 6 test(s) did not run, so they prove nothing here (under CI=true these "
                        "fail instead, but an optional upstream file skips there too):")
    for cause in CAUSES:
        assert sum(cause.what in line and f"to run them: {cause.how}" in line for line in lines) == 1, cause.what


def test_skips_are_grouped_by_cause_most_first_and_an_unknown_reason_is_kept_as_written() -> None:
    reasons = [f"upstream reference data /c/{n} is absent (run `make upstream`)" for n in range(3)]
    reasons += ["the moon is full"]
    assert summary_lines(reasons) == [
        "skip summary: 4 test(s) did not run, so they prove nothing here (under CI=true these fail instead):",
        "     3 skipped: the pinned upstream files (CRDs, chart values, IAM policies, NVIDIA docs) are not in "
        ".upstream-cache/; to run them: make upstream",
        "     1 skipped: the moon is full",
        "  each skipped test and its reason: add -rs to PYTEST_ARGS (make test PYTEST_ARGS=-rs)",
    ]
    assert summary_lines([]) == []
    assert reason_of(("t.py", 3, "Skipped: why")) == "why"


def test_a_run_with_skips_ends_with_the_summary(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_some.py").write_text(
        "import pytest\n"
        "def test_ok():\n    pass\n"
        "@pytest.mark.parametrize('n', [1, 2])\n"
        "def test_needs_cache(n):\n"
        "    pytest.skip(f'upstream reference data /x/{n} is absent (run `make upstream`)')\n",
        encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "tests.conftest", "-p", "no:randomly", "-p", "no:xdist",
         "-p", "no:cacheprovider", "--rootdir", str(tmp_path), "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    last = proc.stdout.rstrip("\n").splitlines()[-3:]
    assert last[0] == ("skip summary: 2 test(s) did not run, so they prove nothing here "
                       "(under CI=true these fail instead):")
    assert last[1].endswith("are not in .upstream-cache/; to run them: make upstream")

"""The front door: the README's two commands on a fresh clone with no upstream cache, no ../shared and no answer
from the file host (issue 36).

A copy of the checkout (what `git ls-files` lists, with the working tree's bytes: what a clone of this commit
holds) gets the repository's `.venv` and nothing else: no `.upstream-cache/`, GPU_PLATFORM_SHARED at a folder
that does not exist, GPU_PLATFORM_UPSTREAM_URL at a loopback port where nothing listens. There:

- `make preview` exits 0: the fill says in one line what it tried, the preview runs on and says what it did not
  check (the advisory that names `make upstream`);
- the tests that read the upstream cache pass or skip with the cache's reason, never fail. They are the test
  modules that name a reader of the cache (`upstream(`, `cache_dir(`, the API-server check, the conformance
  harness), found here by reading the test sources, so a new such module is covered without a list to keep.
  The whole suite, this way, is `make test-fresh-clone` (the weekly calendar workflow runs it): too long for
  every pull request beside the suite itself.

And with a local copy of the upstream files reachable, `make preview` fills the cache itself and runs the
API-server check, with no `make upstream` first.
"""

from __future__ import annotations

import re
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.shared import REPO, upstream
from tests.skip_summary import CAUSES
from tools.fresh_clone import fresh_clone, make_command, offline_env

VENV = REPO / ".venv"
# What reads the upstream cache, as a test module names it.
CACHE_READERS = re.compile(r"\bupstream\(|\bupstream_cache\(|\bcache_dir\(|tools\.apiserver|tests\.conformance|"
                           r"import conformance")
CACHE_CAUSE = next(c for c in CAUSES if "upstream reference data" in c.pattern.pattern)
OPTIONAL_CAUSE = next(c for c in CAUSES if c.skips_in_ci)


def make(clone: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(make_command(*args), cwd=clone, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (VENV / "bin" / "python").exists():
        pytest.skip(f"{VENV} is not there: make venv")
    return fresh_clone(tmp_path_factory.mktemp("fresh-clone"))


def test_make_preview_on_a_fresh_clone_offline_exits_0_and_says_what_it_did_not_check(clone, tmp_path):
    proc = make(clone, offline_env(tmp_path), "preview", "TODAY=2026-11-30")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    fill = [line for line in proc.stderr.splitlines() if line.startswith("upstream cache:")]
    assert len(fill) == 1, proc.stderr
    assert "pinned files not fetched (no local copy at " in fill[0] and "no server answered" in fill[0]
    assert "`make upstream` to retry" in fill[0]
    text = " ".join(proc.stdout.split())
    assert "the upstream cache (CRDs, chart values.yaml) is missing" in text and "run `make upstream`" in text
    assert "verdict: PASS, exit 0" in text


def test_make_preview_fills_the_cache_itself_where_a_copy_is_reachable(clone, tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "upstream").symlink_to(upstream())  # a local copy holding the pinned files
    cache = tmp_path / "cache"
    env = {**offline_env(tmp_path, shared=shared), "GPU_PLATFORM_UPSTREAM_CACHE": str(cache)}
    proc = make(clone, env, "preview", "TODAY=2026-11-30")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{cache}: " in proc.stderr and " copied from " in proc.stderr  # the fill's summary: stderr
    text = " ".join(proc.stdout.split())
    assert "API server and Helm: " in text and "objects checked against Kubernetes" in text
    assert "upstream cache (CRDs, chart values.yaml) is missing" not in text


def cache_reading_modules(root: Path) -> list[str]:
    """The test modules (relative to `root`) that name a reader of the upstream cache, this one left out."""
    here = Path(__file__).name
    return sorted(str(p.relative_to(root)) for p in (root / "tests").rglob("test_*.py")
                  if p.name != here and CACHE_READERS.search(p.read_text(encoding="utf-8")))


def test_the_module_selection_finds_the_known_readers():
    found = cache_reading_modules(REPO)
    assert {"tests/test_conformance.py", "tests/tools/test_apiserver.py", "tests/tools/test_apiserver_gate.py",
            "tests/components/test_inference.py", "tests/tools/test_upstream.py"} <= set(found)
    assert "tests/test_docs.py" not in found


def test_the_tests_that_read_the_cache_pass_or_skip_with_its_reason_on_a_fresh_clone(clone, tmp_path):
    modules = cache_reading_modules(clone)
    report = tmp_path / "junit.xml"
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:xdist", "-p", "no:cacheprovider", "-q",
                           "-o", "junit_family=xunit2", f"--junitxml={report}", *modules],
                          cwd=clone, env=offline_env(tmp_path), capture_output=True, text=True, timeout=900,
                          check=False)
    cases = ET.parse(report).getroot().iter("testcase")
    outcomes: dict[str, list[str]] = {"passed": [], "skipped": [], "other": []}
    for case in cases:
        name = f"{case.get('classname')}::{case.get('name')}"
        skipped = case.find("skipped")
        if case.find("failure") is not None or case.find("error") is not None:
            outcomes["other"].append(name)
        elif skipped is not None:
            reason = skipped.get("message", "")
            ok = CACHE_CAUSE.pattern.search(reason) or OPTIONAL_CAUSE.pattern.search(reason)
            outcomes["skipped" if ok else "other"].append(f"{name}: {reason}")
        else:
            outcomes["passed"].append(name)
    assert outcomes["other"] == [], f"{outcomes['other']}\n{proc.stdout[-3000:]}"
    assert outcomes["skipped"], "no test skipped for the cache: the clone had one, or the selection found none"
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert "skip summary: " in proc.stdout and CACHE_CAUSE.how in proc.stdout

"""The skip summary that ends a test run: each reason tests skipped for, how many, and how to run them.

A skipped test proves nothing, and a run with skips still exits 0, so the last lines say what did not run
and the one command that makes it run. tests/conftest.py calls these from pytest's hooks; under `CI=true` the
same conditions fail instead of skipping (tests/shared.py `missing_upstream`, tests/policies/conftest_registry.py).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Cause:
    """A family of skip reasons: the pattern that recognises it, what it means, and the command that fixes it."""

    pattern: re.Pattern[str]
    what: str
    how: str
    skips_in_ci: bool = False  # an optional upstream pin: absent where the download base does not answer, CI too


CAUSES = (
    Cause(re.compile(r"optional upstream file .* not fetched"),
          "an optional upstream file (upstream.lock.json `optional`: not in the shared copy) could not be downloaded",
          "make upstream where raw.githubusercontent.com (or GPU_PLATFORM_UPSTREAM_URL) answers", skips_in_ci=True),
    Cause(re.compile(r"upstream reference data .* is absent"),
          "the pinned upstream files (CRDs, chart values, IAM policies, NVIDIA docs) are not in .upstream-cache/",
          "make upstream"),
    Cause(re.compile(r"checkov is not installed"),
          "checkov, which needs a virtualenv of its own, is not installed",
          "make scan-venv, then make test (or set CHECKOV)"),
    Cause(re.compile(r"docker-registry"),
          "the local OCI registry the registry-check tests start is not installed",
          "bash .ci/install-registry.sh (Debian: apt-get install -y docker-registry)"),
    Cause(re.compile(r"TypeScript tools .* are not installed"),
          "the pinned TypeScript tools (tsc, @pulumi/pulumi, @pulumi/kubernetes, @pulumi/aws) are not installed",
          "npm ci --prefix tests/provider/languages/typescript"),
    Cause(re.compile(r"is pinned in requirements-dev\.txt"),
          "a development package is missing from .venv",
          "make venv"),
)


def reason_of(longrepr: object) -> str:
    """The reason pytest recorded for a skip (`(path, line, "Skipped: reason")`), without its prefix."""
    text = longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return str(text).removeprefix("Skipped: ")


def summary_lines(reasons: Iterable[str]) -> list[str]:
    """One line per cause (or per unrecognised reason, as written), most skipped first, and how to run them."""
    counts: Counter[tuple[str, str]] = Counter()
    optional = False
    for reason in reasons:
        cause = next((c for c in CAUSES if c.pattern.search(reason)), None)
        counts[(cause.what, cause.how) if cause else (reason, "")] += 1
        optional = optional or bool(cause and cause.skips_in_ci)
    if not counts:
        return []
    total = sum(counts.values())
    ci = ("under CI=true these fail instead, but an optional upstream file skips there too" if optional
          else "under CI=true these fail instead")
    lines = [f"skip summary: {total} test(s) did not run, so they prove nothing here ({ci}):"]
    for (what, how), n in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        lines.append(f"  {n:>4} skipped: {what}" + (f"; to run them: {how}" if how else ""))
    lines.append("  each skipped test and its reason: add -rs to PYTEST_ARGS (make test PYTEST_ARGS=-rs)")
    return lines

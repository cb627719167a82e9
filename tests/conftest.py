"""Shared fixtures: run `python -m tools.preview` in a fresh interpreter, once per distinct command line.

Each preview runs in a subprocess (the Pulumi runtime keeps global state, so one program per
interpreter, as in production). Results are cached for the test session so the suite runs each
command line once per pytest worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.result_view import entries, validate
from tests.shared import REPO
from tests.skip_summary import reason_of, summary_lines

TINY_PROGRAM = REPO / "tests" / "tools" / "fixtures" / "tiny_program"
STACKS = ("dev", "prod")
# The day the shipped stacks are judged at in tests: the Makefile's GATE_TODAY (tests/tools/test_today.py checks
# they agree). Left to the real date, a preview of them fails once their versions age out (Kubernetes 1.35 leaves
# standard support on 2027-03-27), which is the gate doing its job, not the code breaking.
SHIPPED_DAY = "2026-11-30"


def shipped_args(stack: str) -> tuple[str, ...]:
    """The command line of the shipped stack's preview that the tests share (and so run once per worker)."""
    return ("--stack", stack, "--today", SHIPPED_DAY, "--json")


@dataclass(frozen=True)
class PreviewRun:
    args: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    out_dir: Path | None

    def json(self) -> dict[str, Any]:
        """The result document, validated against tools/preview/result.schema.json (tests/result_view.py)."""
        doc: dict[str, Any] = json.loads(self.stdout)
        validate(doc)
        if self.out_dir is not None and (self.out_dir / "resources.json").is_file():
            validate(json.loads((self.out_dir / "resources.json").read_text(encoding="utf-8")))
        return doc

    def violations(self) -> list[dict[str, Any]]:
        """The document's verdicts as engine-shaped rows (`tests.result_view.entries`)."""
        return entries(self.json())

    def explain(self) -> str:
        return f"python -m tools.preview {' '.join(self.args)} exited {self.returncode}\nstderr:\n{self.stderr}"


RunPreview = Callable[..., PreviewRun]


def run_preview_process(*args: str, out_dir: Path | None = None, timeout: float = 300,
                        env: Mapping[str, str] | None = None) -> PreviewRun:
    """`env`: variables set for the program besides this process's environment (a program reading AWS_REGION)."""
    cmd = [sys.executable, "-m", "tools.preview", *args]
    if out_dir is not None:
        cmd += ["--out", str(out_dir)]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
                          env={**os.environ, **env} if env else None)
    return PreviewRun(tuple(args), proc.returncode, proc.stdout, proc.stderr, out_dir)


@pytest.fixture(scope="session")
def run_preview(tmp_path_factory: pytest.TempPathFactory) -> RunPreview:
    """`run_preview(*args, out=True)`: the cached result of one preview command line."""
    cache: dict[tuple[tuple[str, ...], bool], PreviewRun] = {}

    def run(*args: str, out: bool = False, fresh: bool = False) -> PreviewRun:
        key = (tuple(args), out)
        if fresh or key not in cache:
            out_dir = tmp_path_factory.mktemp("preview") if out else None
            cache[key] = run_preview_process(*args, out_dir=out_dir)
        return cache[key]

    return run


def real_stack_file(stack: str) -> Path:
    """The repository's Pulumi.<stack>.yaml; skips when the real program has not landed yet."""
    missing = [p.name for p in (REPO / "__main__.py", REPO / "Pulumi.yaml", REPO / f"Pulumi.{stack}.yaml")
               if not p.is_file()]
    if missing:
        pytest.skip(f"the real Pulumi program is not in the repository yet (missing {', '.join(missing)})")
    return REPO / f"Pulumi.{stack}.yaml"


@pytest.fixture(scope="session", params=STACKS)
def stack_preview(request: pytest.FixtureRequest, run_preview: RunPreview) -> PreviewRun:
    """The real program's preview of each stack, with --json and --out (one run per stack)."""
    stack: str = request.param
    real_stack_file(stack)
    return run_preview(*shipped_args(stack), out=True)


def pytest_unconfigure(config: pytest.Config) -> None:
    """The run ends with the skip summary (tests/skip_summary.py), after pytest's own counts: what did not run,
    why, and how to run it. xdist workers report their skips to the controller, which prints it once."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None or hasattr(config, "workerinput"):
        return
    reasons = [reason_of(report.longrepr) for report in reporter.stats.get("skipped", [])]
    for line in summary_lines(reasons):
        reporter.write_line(line, yellow=True, bold=line.startswith("skip summary"))

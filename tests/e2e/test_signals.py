"""A run stopped by a signal: locally, the update in flight is cancelled, then the run cleans up to the end even
through more Ctrl-Cs; on GitHub (SIGINT, SIGTERM 7.5 s later, SIGKILL 2.5 s after), it only cancels the update and
leaves the rest to the workflow's cleanup job (issue 54: a Ctrl-C raced destroy against the running up, a second one
skipped the sweep, and nothing handled SIGTERM)."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.test_driver import Harness
from tools.e2e.signals import SignalGuard


def _stopped(aws: Any, tmp: Path, signals: dict[str, int], *, github: bool = False) -> Harness:
    h = Harness(aws, tmp, fail=set(), GITHUB_ACTIONS="true" if github else "")
    h.calls.hang.add("up")
    h.calls.signal_on.update(signals)
    h.driver.run()
    return h


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_local_signal_cancels_the_update_then_cleans_up(aws: Any, tmp_path: Path, signum: int) -> None:
    h = _stopped(aws, tmp_path, {"up": signum})
    names = h.calls.names()
    assert "cancel" in names, (names, h.driver.report.markdown())
    assert names.index("cancel") < names.index("destroy"), names  # no destroy races the running up
    rows = h.rows()
    assert rows["up"] == "failed" and rows["destroy"] == "passed" and rows["sweep"] == "passed"
    up = next(r for r in h.driver.report.rows if r.step == "up")
    assert f"interrupted by {signal.Signals(signum).name}" in up.detail
    assert not any(r.step == "probe" for r in h.driver.report.rows)


def test_a_second_ctrl_c_during_cleanup_does_not_skip_the_sweep(aws: Any, tmp_path: Path) -> None:
    logged: list[str] = []
    h = Harness(aws, tmp_path, fail=set())
    h.driver.deps.log = logged.append
    h.calls.hang.add("up")
    h.calls.signal_on.update({"up": signal.SIGINT, "destroy": signal.SIGINT})
    h.driver.run()
    rows = h.rows()
    assert rows["destroy"] == "passed" and rows["sweep"] == "passed", h.driver.report.markdown()
    assert any(line.startswith("!! SIGINT ignored: the cleanup runs to its end") for line in logged), logged


def test_on_github_a_cancel_only_stops_the_update(aws: Any, tmp_path: Path) -> None:
    h = _stopped(aws, tmp_path, {"up": signal.SIGINT}, github=True)
    names = h.calls.names()
    assert "cancel" in names and "destroy" not in names and "remove_stack" not in names
    skipped = {r.step: r.detail for r in h.driver.report.rows if r.result == "skipped"}
    assert set(skipped) == {"pre-destroy", "destroy", "stack-rm", "sweep"}
    assert all("the workflow's cleanup job destroys and sweeps it" in d for d in skipped.values())
    assert h.driver.guard.grace == 5.0  # gone before GitHub's SIGKILL


def test_the_handlers_are_restored_after_the_run() -> None:
    before = signal.getsignal(signal.SIGINT)
    with SignalGuard(lambda _: None, github=False):
        assert signal.getsignal(signal.SIGINT) != before
    assert signal.getsignal(signal.SIGINT) == before

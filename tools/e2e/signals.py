"""What the e2e run does when it is stopped: a local Ctrl-C, or GitHub cancelling the workflow.

- A local Ctrl-C (SIGINT) or a SIGTERM: the `pulumi` command in flight is stopped with `pulumi cancel` (a killed CLI
  leaves its update in progress and the stack locked), then the run's own cleanup runs: pre-destroy, destroy, stack
  rm, the sweep. Every further signal during that cleanup is logged and ignored, so a second Ctrl-C no longer skips
  the sweep; `kill -9` still abandons it (then `make e2e-cleanup E2E_RUN_ID=...`).
- GitHub's cancel sends SIGINT, then SIGTERM 7.5 s later, then SIGKILL 2.5 s after that
  (https://docs.github.com/en/actions/managing-workflow-runs-and-deployments/managing-workflow-runs/canceling-a-workflow,
  "Steps GitHub takes to cancel a workflow run"): ten seconds cannot hold a destroy. So there the handler only stops
  the update in flight, and the workflow's `cleanup` job (under `always()`, .github/workflows/e2e.yml) does the rest.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import FrameType, TracebackType

# How long a stopped `pulumi` gets to end after `pulumi cancel`: locally the run then cleans up itself; on GitHub the
# SIGTERM comes 7.5 s after the SIGINT, and the process must be gone before the SIGKILL 2.5 s later.
LOCAL_GRACE = 5 * 60.0
GITHUB_GRACE = 5.0
HANDLED = (signal.SIGINT, signal.SIGTERM)


class Interrupted(BaseException):  # a signal, not an error: raised where the run was waiting
    """The run was stopped by a signal; `str()` is its name."""


def on_github(env: Mapping[str, str]) -> bool:
    """GitHub sets GITHUB_ACTIONS=true in every step (https://docs.github.com/en/actions/reference/workflows-and-
    actions/variables#default-environment-variables)."""
    return env.get("GITHUB_ACTIONS") == "true"


@dataclass
class SignalGuard:
    """Handlers for SIGINT and SIGTERM while the run lives (the main thread only, where Python delivers signals):
    the first signal raises `Interrupted` where the run waits; once `cleaning` is set, or after the first, signals
    are logged and ignored."""

    log: Callable[[str], None]
    github: bool
    cleaning: bool = False
    received: list[str] = field(default_factory=list)
    _previous: dict[int, object] = field(default_factory=dict)

    @property
    def grace(self) -> float:
        return GITHUB_GRACE if self.github else LOCAL_GRACE

    def __enter__(self) -> SignalGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in HANDLED:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        name = signal.Signals(signum).name
        self.received.append(name)
        if self.cleaning or len(self.received) > 1:
            then = ("the workflow's cleanup job destroys and sweeps" if self.github
                    else "the cleanup runs to its end (destroy, then the sweep); `kill -9` abandons it, then "
                         "`make e2e-cleanup E2E_RUN_ID=<run id>`")
            self.log(f"!! {name} ignored: {then}")
            return
        raise Interrupted(name)

"""`python -m tools.preview --watch`: re-judge a stack after each save, printing only what changed.

    python -m tools.preview --watch [--stack dev] [--config-file FILE] [--program DIR] [--phase ...]
                                    [--today YYYY-MM-DD] [--policy-config FILE]

The loop users live in: edit `Pulumi.<stack>.yaml` (or the program, or the policy config), save, read
the verdict. What a one-shot preview pays on every run is paid here once, in the background:

- the program runs in a fresh runner process each time (the Pulumi runtime keeps global state, so one
  program per interpreter), but the next runner is started as soon as a verdict is out, and imports
  the SDK modules and the program modules the last run used while the user edits (`worker.py`);
- the policy pack process stays up between verdicts (`tools.engine.warm_pack.WarmPack`), each verdict a
  whole analyzer conversation of its own.

What is watched: the stack file, the policy config file, every `*.py` under the program folder (not
under virtualenvs, tests, build output or hidden folders) and the pack's files (its `*.py`,
`PulumiPolicy.yaml`, `matrix.yaml`). A change to the program's modules makes the waiting runner
stale (it preloaded the old ones), a change to the pack's files restarts the pack; a change to the
stack file or the policy config needs neither. Files are polled (`--interval`, 0.05 s by default):
the standard library has no portable file-change notification, and polling a few hundred files costs
well under a millisecond each time.

After each verdict it prints what changed since the previous one: violations that appeared (`+`) and
went away (`-`), resources added, removed or whose inputs changed, or the rejection message when the
configuration is rejected; then one status line (violation counts, seconds from the save).
Ctrl-C stops it.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tools.engine.policy_config import GateError
from tools.engine.records import RecordedResource, Violation
from tools.preview import arguments, command, stack_files
from tools.preview.model import GateReport
from tools.preview.verdicts import api_server_verdict
from tools.preview.worker import Outcome

SKIPPED_DIRS = frozenset({".git", ".venv", "venv", "node_modules", "__pycache__", "tests", "out", "mutants",
                          ".mypy_cache", ".ruff_cache", ".pytest_cache", "bench"})
PACK_FILES = ("PulumiPolicy.yaml", "matrix.yaml")

# --------------------------------------------------------------------------------------------------
# Change detection
# --------------------------------------------------------------------------------------------------

Snapshot = dict[Path, int]  # file -> mtime in nanoseconds (a missing file is absent)


def python_files(root: Path) -> list[Path]:
    """Every `*.py` under `root`, skipping virtualenvs, tests, build output and hidden folders."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS and not d.startswith("."))
        found.extend(Path(folder) / f for f in sorted(files) if f.endswith(".py"))
    return found


def snapshot(paths: Iterable[Path]) -> Snapshot:
    """The modification time of each file that exists."""
    out: Snapshot = {}
    for path in paths:
        try:
            out[path] = path.stat().st_mtime_ns
        except OSError:
            continue
    return out


def changed(before: Snapshot, after: Snapshot) -> list[Path]:
    """Files added, removed or modified between two snapshots, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


@dataclass(frozen=True)
class Watched:
    """The files of one watch session, by what a change to them invalidates."""

    stack_file: Path
    policy_config: Path | None
    program: tuple[Path, ...]  # program modules: a waiting runner preloaded them
    pack: tuple[Path, ...]  # the pack's files: the warm pack loaded them

    def all(self) -> list[Path]:
        extra = [self.policy_config] if self.policy_config is not None else []
        return [self.stack_file, *extra, *self.program, *self.pack]


def watched_files(program_dir: Path, stack_file: Path, policy_config: Path | None, pack_dir: Path) -> Watched:
    pack = set(python_files(pack_dir)) | {pack_dir / n for n in PACK_FILES}
    pack |= set((pack_dir / "gpu_guard").glob("*.yaml"))
    program = [p for p in python_files(program_dir) if p not in pack]
    return Watched(stack_file, policy_config, tuple(program), tuple(sorted(pack)))


@dataclass(frozen=True)
class Invalidated:
    """What one batch of changed files makes stale."""

    runner: bool  # the waiting runner preloaded an old program module
    pack: bool  # the warm pack loaded an old pack file
    policy_config: bool


def invalidated(watched: Watched, files: Sequence[Path]) -> Invalidated:
    program, pack = set(watched.program), set(watched.pack)
    return Invalidated(
        runner=any(f in program or f in pack for f in files),  # the program imports the matrix too
        pack=any(f in pack for f in files),
        policy_config=watched.policy_config is not None and watched.policy_config in files,
    )


# --------------------------------------------------------------------------------------------------
# What changed between two verdicts
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Verdict:
    """One judgement of the stack, reduced to what the watcher compares."""

    rejected: str | None = None
    violations: frozenset[Violation] = frozenset()
    resources: Mapping[str, Any] = field(default_factory=dict)  # urn -> inputs

    @property
    def mandatory(self) -> int:
        return sum(1 for v in self.violations if v.enforcement == "mandatory")


def verdict_of(resources: Sequence[RecordedResource], violations: Iterable[Violation]) -> Verdict:
    return Verdict(None, frozenset(violations), {r.urn: r.inputs for r in resources})


def _short(urn: str) -> str:
    """`type::name` of a URN (its last two parts), enough to find the resource."""
    parts = urn.split("::")
    return "::".join(parts[-2:]) if len(parts) >= 2 else urn


def _violation_line(sign: str, v: Violation) -> str:
    target = f" [{_short(v.urn)}]" if v.urn else ""
    return f"{sign} {v.enforcement} {v.policy}{target}: {v.message}"


def diff_lines(before: Verdict | None, after: Verdict) -> list[str]:
    """What changed from `before` to `after`, one line each; the whole verdict when there is no `before`."""
    if after.rejected is not None:
        if before is not None and before.rejected == after.rejected:
            return []
        return [f"rejected: {after.rejected}"]
    lines: list[str] = []
    if before is None or before.rejected is not None:
        if before is not None:
            lines.append("accepted: the configuration is valid again")
        old_resources: Mapping[str, Any] = {}
        old_violations: frozenset[Violation] = frozenset()
        if before is None:
            lines.append(f"{len(after.resources)} resources")
            old_resources = after.resources  # the first verdict lists violations, not every resource
    else:
        old_resources, old_violations = before.resources, before.violations
    for urn in sorted(after.resources.keys() - old_resources.keys()):
        lines.append(f"+ resource {_short(urn)}")
    for urn in sorted(old_resources.keys() - after.resources.keys()):
        lines.append(f"- resource {_short(urn)}")
    for urn in sorted(after.resources.keys() & old_resources.keys()):
        if after.resources[urn] != old_resources[urn]:
            lines.append(f"~ resource {_short(urn)} (inputs changed)")
    order = lambda v: (v.enforcement != "mandatory", v.policy, v.urn, v.message)  # noqa: E731
    lines += [_violation_line("-", v) for v in sorted(old_violations - after.violations, key=order)]
    lines += [_violation_line("+", v) for v in sorted(after.violations - old_violations, key=order)]
    return lines


def _display(path: Path, root: Path) -> str:
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def status_line(verdict: Verdict, seconds: float, changed_files: Sequence[Path], root: Path, detail: str = "") -> str:
    names = ", ".join(_display(p, root) for p in changed_files[:3]) + (" ..." if len(changed_files) > 3 else "")
    cause = f" after saving {names}" if changed_files else ""
    if verdict.rejected is not None:
        state = "configuration rejected (exit 2)"
    else:
        advisory = len(verdict.violations) - verdict.mandatory
        state = f"{verdict.mandatory} mandatory, {advisory} advisory violation(s), {len(verdict.resources)} resources"
    return f"[{time.strftime('%H:%M:%S')}] {state}; judged in {seconds:.2f} s{detail}{cause}"


# --------------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------------


class Runner:
    """A worker process (`tools.preview.worker`) that has imported what the last run needed."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.started_ns = time.time_ns()
        self.proc = subprocess.Popen([sys.executable, "-m", "tools.preview.worker"], cwd=command.REPO,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(spec) + "\n")
        self.proc.stdin.flush()

    def _await(self, word: str) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.strip() == word:
                return
        raise stack_files.PreviewError(f"the program runner exited with status {self.proc.wait()} before '{word}'")

    def run(self, result: Path) -> Outcome:
        assert self.proc.stdin is not None
        self._await("ready")
        self.proc.stdin.write(f"go {result}\n")
        self.proc.stdin.flush()
        self._await("done")
        # Read the answer now; the runner exits on its own (`discard` or the next `Runner` reaps it), so its
        # interpreter's teardown is not part of the time from the save to the verdict.
        outcome: Outcome = pickle.loads(result.read_bytes())  # our own child wrote it
        return outcome

    def discard(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()


class Watcher:
    """The state of one watch session: the runner waiting, the warm pack, the last verdict."""

    def __init__(self, args: argparse.Namespace, out: TextIO) -> None:
        from tools.engine.warm_pack import WarmPack  # noqa: PLC0415 - imports grpc; only watch mode needs it

        self.out = out
        self.program_dir = args.program.resolve()
        self.project = stack_files.load_project(self.program_dir)
        self.stack = args.stack
        self.stack_file = (args.config_file or self.program_dir / f"Pulumi.{args.stack}.yaml").resolve()
        self.phase = args.phase
        self.cli_today = args.today
        self.policy_config, _ = arguments.policy_config_for(args.policy_config, self.program_dir, args.stack)
        self.loaded = command.read_policy_config(self.policy_config)
        self.watched = watched_files(self.program_dir, self.stack_file, self.policy_config, command.PACK_DIR)
        self.preload: tuple[str, ...] = ()
        self.runner: Runner | None = None
        self.finished: list[Runner] = []
        self.pack = WarmPack(pack_dir=command.PACK_DIR, stack=self.stack, project=self.project.name, phase=self.phase)
        self.previous: Verdict | None = None
        self.workdir = Path(tempfile.mkdtemp(prefix="preview-watch-"))

    def _spec(self, today: datetime.date) -> dict[str, Any]:
        return {"program": str(self.program_dir), "config_file": str(self.stack_file), "stack": self.stack,
                "phase": self.phase, "today": today.isoformat(), "preload": list(self.preload)}

    def _today(self) -> datetime.date:
        return command.judging_day(self.cli_today, self.loaded, self.policy_config)

    def spawn_runner(self) -> None:
        if self.runner is None:
            self.runner = Runner(self._spec(self._today()))

    def apply(self, files: Sequence[Path]) -> None:
        """Throw away what the changed files made stale."""
        stale = invalidated(self.watched, files)
        if stale.policy_config:
            self.loaded = command.read_policy_config(self.policy_config)
        # A runner also carries the day, which the policy config may set.
        if (stale.runner or stale.policy_config) and self.runner is not None:
            self.runner.discard()
            self.runner = None
        if stale.pack:
            self.pack.close()

    def judge(self, saved_at: float, files: Sequence[Path]) -> Verdict:
        """Run the program and the gate; print what changed. `saved_at`: the save's wall-clock time (s)."""
        self.pack.start()
        self.spawn_runner()
        assert self.runner is not None
        runner, self.runner = self.runner, None
        try:
            outcome = runner.run(self.workdir / "outcome.pickle")
        except stack_files.PreviewError as exc:
            outcome = Outcome(None, None, str(exc), self.preload, 0.0)
        finally:
            self.finished.append(runner)
        self.preload = outcome.modules or self.preload
        gate_started = time.perf_counter()
        if outcome.rejected is not None or outcome.recording is None or outcome.config is None:
            verdict = Verdict(rejected=outcome.rejected or "the program did not run")
        else:
            recording, config = outcome.recording, outcome.config
            try:
                result = self.pack.judge(list(recording.resources), stack=recording.stack,
                                         project=recording.project, phase=recording.phase,
                                         policy_config=self.loaded, stack_config=config.values,
                                         today=self._today(), tags=recording.tags)
                # The API server's and Helm's verdict too, as a one-shot preview gives it (`api_server_verdict`).
                with_api = api_server_verdict(
                    recording, GateReport(ran=True, detail="", violations=tuple(result.violations)),
                    has_old=recording.phase == "update")
                verdict = verdict_of(recording.resources, with_api.violations)
            except GateError as exc:
                verdict = Verdict(rejected=f"policy gate: {exc}")
        for line in diff_lines(self.previous, verdict):
            print(line, file=self.out)
        detail = f" (program {outcome.seconds:.2f} s, policy gate {time.perf_counter() - gate_started:.2f} s)"
        print(status_line(verdict, time.time() - saved_at, files, self.program_dir, detail), file=self.out,
              flush=True)
        self.previous = verdict
        for done in self.finished:  # the runners that answered have exited by now, or exit as they are reaped
            done.discard()
        self.finished.clear()
        self.spawn_runner()  # the next runner imports while the user edits
        return verdict

    def close(self) -> None:
        if self.runner is not None:
            self.runner.discard()
        self.pack.close()


def settle(watched: Watched, first: Snapshot, interval: float) -> tuple[Snapshot, list[Path]]:
    """Wait until a save is complete (two polls alike), return the new snapshot and every file changed since `first`."""
    current = snapshot(watched.all())
    while True:
        time.sleep(min(interval, 0.02))
        again = snapshot(watched.all())
        if again == current:
            return again, changed(first, again)
        current = again


def watch(args: argparse.Namespace, out: TextIO = sys.stdout, *, max_verdicts: int | None = None) -> int:
    """Judge once, then after every save until Ctrl-C (or `max_verdicts`, for tests and the benchmark)."""
    watcher = Watcher(args, out)
    # `kill` (SIGTERM, as a terminal closing or a supervisor stops it) stops the pack and the runner too, like
    # Ctrl-C: the pack runs in its own process group and would otherwise outlive the watcher.
    main_thread = threading.current_thread() is threading.main_thread()
    previous_handler = signal.signal(signal.SIGTERM, _interrupt) if main_thread else None
    print(f"watching {watcher.stack_file} and the program in {watcher.program_dir} "
          f"({len(watcher.watched.all())} files); Ctrl-C stops", file=out, flush=True)
    verdicts = 0
    try:
        before = snapshot(watcher.watched.all())
        watcher.judge(time.time(), [])
        verdicts += 1
        while max_verdicts is None or verdicts < max_verdicts:
            time.sleep(args.interval)
            now = snapshot(watcher.watched.all())
            if now == before:
                continue
            now, files = settle(watcher.watched, before, args.interval)
            # From the save (the newest modification time among the changed files) to the verdict on screen.
            saved_at = max((now[f] for f in files if f in now), default=time.time_ns()) / 1e9
            before = now
            watcher.apply(files)
            watcher.judge(saved_at, files)
            verdicts += 1
    except KeyboardInterrupt:
        pass
    finally:
        watcher.close()
        if main_thread:
            signal.signal(signal.SIGTERM, previous_handler)
    return 0


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _parser() -> argparse.ArgumentParser:
    parser = arguments._parser()
    parser.prog = "python -m tools.preview --watch"
    parser.add_argument("--watch", action="store_true", required=True,
                        help="re-judge the stack after each save of its stack file, the program or the policy pack")
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between two looks at the files")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.json or args.out is not None:
        print("error: --watch prints what changed after each save; --json and --out are for one-shot previews "
              "(drop them, or drop --watch)", file=sys.stderr)
        return command.EXIT_REJECTED
    try:
        return watch(args)
    except stack_files.PreviewError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return command.EXIT_REJECTED

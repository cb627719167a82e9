"""A warm program runner for watch mode: a process that has imported the SDKs and waits to run the program once.

The Pulumi runtime keeps global state (settings, the stack resource, the registered resources), so the
offline preview runs one program per interpreter. Watch mode keeps that rule and still skips the
imports: it starts the next runner in the background while the user edits. The runner imports what the
previous run imported (the SDK modules and the program's own modules, from `preload`), loads what
the program reads from watched files on every run (`WARM_CALLS`: the compatibility matrix), says `ready`,
and waits; on `go RESULT_FILE` it reads the stack file as it is now, runs the program under the
recording mocks (`command.run_program`), pickles the outcome into RESULT_FILE and exits.

A runner whose preloaded program modules changed on disk after it started is stale; the watcher
throws it away (`tools.preview.watch`). The stack file and the policy config are read at `go`, so
editing them never makes a runner stale.

Protocol on stdin/stdout, one line each: the spec (JSON) in, `ready` out, `go PATH` in, `done` out.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import json
import pickle
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.preview import command, stack_files
from tools.preview.model import Recording, StackConfig
from tools.preview.program_modules import ProgramModules


@dataclass(frozen=True)
class Outcome:
    """What one program run gives the watcher: the recording and config, or the rejection message."""

    recording: Recording | None
    config: StackConfig | None
    rejected: str | None
    modules: tuple[str, ...]  # modules to preload next time (SDK and program modules, not __main__)
    seconds: float


def preload_candidates(modules: dict[str, Any], program_dir: Path) -> tuple[str, ...]:
    """The imported modules worth preloading: installed packages and the program's own, never `__main__`, nor a
    program module whose import registers resources (`program_modules`: it must run under the run's mocks)."""
    roots = tuple(str(Path(p).resolve()) for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    program = str(program_dir.resolve())
    names = []
    program_modules = ProgramModules(program_dir)
    for name, module in list(modules.items()):
        origin = getattr(module, "__file__", None)
        if not origin or name == "__main__" or name.startswith("__mp_"):
            continue
        where = str(Path(origin).resolve())
        if where.startswith(roots) or (where.startswith(program + "/") and not program_modules.registers(name)):
            names.append(name)
    return tuple(sorted(names))


def run_once(spec: dict[str, Any]) -> Outcome:
    import time  # noqa: PLC0415

    start = time.perf_counter()
    program_dir = Path(spec["program"])
    try:
        project = stack_files.load_project(program_dir)
        config = stack_files.load_stack_config(Path(spec["config_file"]), project.name, program_dir)
        today = datetime.date.fromisoformat(spec["today"]) if spec.get("today") else None
        recording = command.run_program(project, spec["stack"], config, spec["phase"], today)
    except stack_files.PreviewError as exc:
        return Outcome(None, None, str(exc), preload_candidates(dict(sys.modules), program_dir),
                       time.perf_counter() - start)
    return Outcome(recording, config, None, preload_candidates(dict(sys.modules), program_dir),
                   time.perf_counter() - start)


# Work a program does on every run that depends only on files the watcher watches, done before `ready`
# when the run before used the module: this repository's programs read the compatibility matrix
# (`load_matrix` caches it per process; `matrix.yaml` is a pack file, so a change to it makes the runner stale).
WARM_CALLS: tuple[tuple[str, str], ...] = (("policies.gpu_guard.matrix", "load_matrix"),)


def preload(names: list[str], program_dir: Path) -> None:
    """Import `names` as the program would find them (its folder first on sys.path), then the warm calls."""
    sys.path.insert(0, str(program_dir))
    try:
        for name in names:
            with contextlib.suppress(Exception):  # a module that fails to import fails again, properly, in the run
                importlib.import_module(name)
        for module, function in WARM_CALLS:
            if module in sys.modules:
                with contextlib.suppress(Exception):  # the run reports the same failure where the program has it
                    getattr(sys.modules[module], function)()
    finally:
        sys.path.remove(str(program_dir))


def main() -> int:
    spec = json.loads(sys.stdin.readline())
    preload(list(spec.get("preload", [])), Path(spec["program"]))
    print("ready", flush=True)
    line = sys.stdin.readline().strip()
    if not line.startswith("go "):
        return 0  # the watcher let this runner go unused
    outcome = run_once(spec)
    Path(line[3:]).write_bytes(pickle.dumps(outcome))
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    # Run the module's own copy, not `__main__`'s, so the pickled Outcome names `tools.preview.worker.Outcome`.
    from tools.preview.worker import main as worker_main

    sys.exit(worker_main())

"""One function run in a forked child while this process does something else; its result comes back pickled.

A first preview runs the program twice (`command.run_program` for the preview, `command.known_recording` for
the stack the first `pulumi up` leaves). The two runs share nothing, and the Pulumi runtime keeps global
state, so they cannot run side by side in one interpreter; a child forked before either run, once the
program's own imports are done (`preload_program`, as watch mode's runner preloads them), has every SDK module
imported already (copy-on-write) and runs the second on another core while this process runs the first.
Where `os.fork` does not exist, or the child dies without an answer, the work runs here instead.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

from tools.preview.program_modules import OWN_PROGRAM_SDK_MODULES, PARSED, ProgramModules, is_own_program

T = TypeVar("T")


def preload_program(main: Path) -> None:
    """Import what the program's main file imports at its top level, as the run would find it (its folder
    first on sys.path). A module that fails to import here fails again, properly, in the run.

    A module of the program's own folder is imported only when importing it registers nothing
    (`program_modules.ProgramModules`): the run must execute a module like pulumi/examples aws-py-eks's
    `vpc.py`, which creates the network at its top level, under the run's mocks; imported here it would register
    before the runtime is set up and hand the run futures of another event loop ("attached to a different loop").
    """
    PARSED[0] += 1
    try:
        tree = ast.parse(main.read_text(encoding="utf-8"), filename=str(main))
    except (OSError, SyntaxError, ValueError):
        return  # the run reports it
    names = [alias.name for node in tree.body if isinstance(node, ast.Import) for alias in node.names]
    names += [node.module for node in tree.body if isinstance(node, ast.ImportFrom) and node.module and not node.level]
    if is_own_program(main.parent):
        names += OWN_PROGRAM_SDK_MODULES  # loaded lazily, on first use: here, once for both runs
    modules = ProgramModules(main.parent)
    sys.path.insert(0, str(main.parent))
    try:
        for name in names:
            if modules.registers(name):
                continue
            with contextlib.suppress(Exception):
                # An SDK's submodule may come back lazy (pulumi._utils._LazyModule): any attribute other than
                # the introspection ones (`__file__`, `__spec__`, ...) executes it now.
                hasattr(importlib.import_module(name), "__all__")
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(str(main.parent))


class Forked(Generic[T]):
    """`work()` started in a forked child now; `result()` waits for its value or re-raises its exception."""

    def __init__(self, work: Callable[[], T]) -> None:
        self._work = work
        self._pid = 0
        self._read = -1
        if not hasattr(os, "fork"):
            return
        sys.stdout.flush()
        sys.stderr.flush()
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: run, answer, and leave without running the parent's exit handlers
            os.close(read)
            try:
                try:
                    payload = pickle.dumps((True, work()))
                except BaseException as exc:  # noqa: BLE001 - handed to the parent, which raises it
                    payload = pickle.dumps((False, exc))
                with os.fdopen(write, "wb") as out:
                    out.write(payload)
            finally:
                os._exit(0)
        os.close(write)
        self._pid, self._read = pid, read

    def result(self) -> T:
        if not self._pid:
            return self._work()
        with os.fdopen(self._read, "rb") as answer:
            data = answer.read()
        os.waitpid(self._pid, 0)
        self._pid = 0
        if not data:  # the child died without an answer (killed, out of memory): run the work here
            return self._work()
        ok, value = pickle.loads(data)
        if ok:
            return value  # type: ignore[no-any-return]
        raise value

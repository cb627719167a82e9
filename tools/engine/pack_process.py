"""The policy pack as a child process, started the way the engine starts a Python pack.

`python -u -m pulumi.policy <engine-address> <pack>` with the pack folder as working directory; the
first line of its stdout is the port of its analyzer gRPC server.
Source: https://github.com/pulumi/pulumi/blob/master/sdk/python/cmd/pulumi-analyzer-policy-python
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

from tools.engine.policy_config import GateError

# The pack never dials the engine: pulumi/policy/__main__.py parses the address and ignores it, and
# `pulumi.log` falls back to stderr when no engine is configured. Any syntactically valid address does.
DUMMY_ENGINE_ADDRESS = "127.0.0.1:0"

# The SDK raises the gRPC receive limit to 400 MiB on its side; a large stack needs the same here.
_MAX_MESSAGE_BYTES = 1024 * 1024 * 400
GRPC_OPTIONS = [
    ("grpc.max_receive_message_length", _MAX_MESSAGE_BYTES),
    ("grpc.max_send_message_length", _MAX_MESSAGE_BYTES),
]

_STDERR_TAIL_LINES = 60
_STOP_GRACE_S = 5.0




class PackProcess:
    """The policy pack as a child process; stopped (and reaped) on every way out of the `with`."""

    def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
        self._cmd = cmd
        self._cwd = cwd
        self._env = env
        self._proc: subprocess.Popen[bytes] | None = None
        self._first_line: queue.Queue[bytes | None] = queue.Queue(maxsize=1)
        self._stderr: collections.deque[str] = collections.deque(maxlen=_STDERR_TAIL_LINES)
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> PackProcess:
        try:
            self._proc = subprocess.Popen(
                self._cmd,
                cwd=self._cwd,
                env=self._env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,  # its own process group, so stop() reaches anything it spawned
            )
        except OSError as exc:
            raise GateError(f"cannot start the policy pack with {' '.join(self._cmd)!r}: {exc}") from exc
        assert self._proc.stdout is not None and self._proc.stderr is not None
        self._threads = [
            threading.Thread(target=self._read_stdout, args=(self._proc.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(self._proc.stderr,), daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _read_stdout(self, stream: Any) -> None:
        first = stream.readline()
        self._first_line.put(first if first else None)
        for line in stream:  # whatever the pack prints later goes with its stderr, as the engine logs it
            self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
        stream.close()

    def _read_stderr(self, stream: Any) -> None:
        for line in stream:
            self._stderr.append(line.decode("utf-8", "replace").rstrip("\n"))
        stream.close()

    def wait_for_port(self, deadline: float) -> int:
        remaining = max(0.0, deadline - time.monotonic())
        try:
            line = self._first_line.get(timeout=remaining)
        except queue.Empty:
            raise GateError(
                f"the policy pack did not print its analyzer port within {remaining:.0f}s "
                f"(command: {' '.join(self._cmd)}); fix the pack or raise timeout_s.{self.stderr_tail()}"
            ) from None
        if line is None:
            self.stop()
            raise GateError(
                f"the policy pack in {self._cwd} exited with status {self.returncode} before printing its "
                f"analyzer port (command: {' '.join(self._cmd)}).{self.stderr_tail()}"
            )
        text = line.decode("utf-8", "replace").strip()
        if not text.isdigit():
            self.stop()
            raise GateError(
                f"the policy pack printed {text!r} where the engine expects its analyzer port as the first "
                f"line of stdout; fix: the pack must not print to stdout before PolicyPack() starts."
                f"{self.stderr_tail()}"
            )
        return int(text)

    @property
    def returncode(self) -> int | None:
        return None if self._proc is None else self._proc.returncode

    def stop(self) -> None:
        proc = self._proc
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        else:
            proc.wait()
        for t in self._threads:
            t.join(timeout=_STOP_GRACE_S)

    def stderr_tail(self) -> str:
        if self._proc is not None and self._proc.poll() is not None:
            for t in self._threads:
                t.join(timeout=_STOP_GRACE_S)
        lines = list(self._stderr)
        if not lines:
            return " The pack wrote nothing to stderr."
        return "\n--- policy pack stderr (last lines) ---\n" + "\n".join(lines)


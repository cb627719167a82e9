"""The policy pack alone, as the engine drives it: its CPU and wall time over the analyzer calls of one stack.

    .venv/bin/python bench/pack_replay.py [--services 100] [--pools 10] [--runs 5] [--phase preview]
    .venv/bin/python bench/pack_replay.py --recording FILE        # replay a recording made before

1. Record. `python -m tools.preview` runs the generated stack (`bench/stacks.py`: prod's configuration with N
   inference services and P GPU pools, prod's policy config) once, in a child process whose analyzer stub
   (`tools.engine.warm_pack`) writes every request it sends, serialized, in the order sent, with the
   command, folder and environment the pack process was started with. Nothing else changes.
2. Replay, `--runs` times: a fresh pack process started with that command and environment
   (`tools.engine.pack_process.PackProcess`, as the engine starts a Python pack). Once its analyzer
   answers (its imports done: the engine starts the pack before the program runs, pulumi/pulumi
   pkg/engine/update.go `installAndLoadPolicyPlugins`), the clock starts: that is the moment of the last
   registration, when only the pack's work is left. The recorded requests then go out one at a time, each
   waiting for its answer, as the engine sends them (Handshake, ConfigureStack, GetAnalyzerInfo, Configure,
   Remediate and Analyze per resource, AnalyzeStack), and the clock stops at the answer of the last
   AnalyzeStack: the stack verdict. The pack's CPU is its process's user + system time
   (/proc/PID/stat) over the same span.
3. The gRPC floor: as many calls again to the same process, each an empty `Remediate` the servicer answers
   without policy work: what the Python gRPC server costs per call, which no pack can go below.

Reports the median and worst of wall and CPU, and the calls replayed. `bench/preview.py` runs it too
(`--pack-services`). Speed is measured here, never asserted by a test.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import runpy
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.stacks import write_stack  # noqa: E402

# The request type of every analyzer method the gate calls (pulumi/pulumi proto/pulumi/analyzer.proto).
REQUEST_TYPES = {
    "Handshake": "AnalyzerHandshakeRequest",
    "ConfigureStack": "AnalyzerStackConfigureRequest",
    "GetAnalyzerInfo": "Empty",
    "Configure": "ConfigureAnalyzerRequest",
    "Remediate": "AnalyzeRequest",
    "Analyze": "AnalyzeRequest",
    "AnalyzeStack": "AnalyzeStackRequest",
}


# ------------------------------------------------------------------------------------------ record
def observe_analyzer_calls(note: Callable[[str, Any], None]) -> None:
    """Make the analyzer stub `tools.engine.warm_pack` talks through call `note(method, request)` before each call
    it sends the pack (this recording; tests/tools/preview_work.py counts them the same way). In this process,
    before the preview imports it."""
    from pulumi.runtime.proto import analyzer_pb2_grpc  # noqa: PLC0415

    from tools.engine import warm_pack  # noqa: PLC0415

    class Method:
        def __init__(self, name: str, method: Any) -> None:
            self.name, self.method = name, method

        def __call__(self, request: Any, **kwargs: Any) -> Any:
            note(self.name, request)
            return self.method(request, **kwargs)

        def future(self, request: Any, **kwargs: Any) -> Any:
            note(self.name, request)
            return self.method.future(request, **kwargs)

    class ObservedStub:
        def __init__(self, channel: Any) -> None:
            self._stub = analyzer_pb2_grpc.AnalyzerStub(channel)

        def __getattr__(self, name: str) -> Method:
            return Method(name, getattr(self._stub, name))

    class Grpc:
        AnalyzerStub = ObservedStub

    vars(warm_pack).update(analyzer_pb2_grpc=Grpc)


def _record(out: Path, preview_args: list[str]) -> None:
    """Run `tools.preview` in this process with a recording analyzer stub; write what it sent to `out`."""
    from tools.engine import warm_pack  # noqa: PLC0415 - patched before the preview imports it
    from tools.engine.pack_process import PackProcess  # noqa: PLC0415

    calls: list[dict[str, str]] = []
    started: dict[str, Any] = {}
    observe_analyzer_calls(lambda method, request: calls.append(
        {"method": method, "request": base64.b64encode(request.SerializeToString()).decode()}))

    class RecordingProcess(PackProcess):
        def __init__(self, cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
            started.update(cmd=cmd, cwd=str(cwd), env=env)
            super().__init__(cmd, cwd, env)

    vars(warm_pack).update(PackProcess=RecordingProcess)
    sys.argv = ["tools.preview", *preview_args]
    code: Any = 0
    try:
        runpy.run_module("tools.preview", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    if code not in (0, 1, None):
        raise SystemExit(f"bench: the recorded preview failed with exit {code}")
    out.write_text(json.dumps({"process": started, "calls": calls}), encoding="utf-8")


def record(work: Path, services: int, pools: int, phase: str) -> Path:
    """The recording of the analyzer calls of the generated stack, in a child process (a fresh import)."""
    stack = write_stack(work, REPO / "Pulumi.prod.yaml", services=services, pools=pools)
    args = ["--stack", stack.stem.removeprefix("Pulumi."), "--config-file", str(stack), "--phase", phase, "--json"]
    prod_config = REPO / "policies" / "config" / "prod.json"
    if prod_config.is_file():
        args += ["--policy-config", str(prod_config)]
    out = work / f"analyzer-calls-{services}-{pools}-{phase}.json"
    proc = subprocess.run([sys.executable, __file__, "--record-to", str(out), "--", *args], cwd=REPO,
                          capture_output=True, text=True, check=False)
    if not out.is_file():
        raise SystemExit(f"bench: recording failed (exit {proc.returncode}):\n{proc.stderr[-3000:]}")
    return out


# ------------------------------------------------------------------------------------------ replay
@dataclass
class Replay:
    wall_s: float
    cpu_s: float
    startup_cpu_s: float
    calls: dict[str, int]
    floor_cpu_s: float = 0.0  # the same number of calls answered with no policy work (an empty Remediate)


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14, 15)


def replay(recording: Path) -> Replay:
    """One fresh pack process, the recorded calls one at a time; see the module docstring."""
    import grpc  # noqa: PLC0415
    from google.protobuf import empty_pb2  # noqa: PLC0415
    from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc  # noqa: PLC0415

    from tools.engine.pack_process import GRPC_OPTIONS, PackProcess  # noqa: PLC0415

    data = json.loads(recording.read_text(encoding="utf-8"))
    process = data["process"]
    requests = []
    for call in data["calls"]:
        kind = REQUEST_TYPES[call["method"]]
        message = empty_pb2.Empty() if kind == "Empty" else getattr(analyzer_pb2, kind)()
        message.ParseFromString(base64.b64decode(call["request"]))
        requests.append((call["method"], message))
    counts: dict[str, int] = {}
    for method, _ in requests:
        counts[method] = counts.get(method, 0) + 1
    with PackProcess(process["cmd"], Path(process["cwd"]), process["env"]) as pack:
        deadline = time.monotonic() + 300
        port = pack.wait_for_port(deadline)
        channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=GRPC_OPTIONS)
        grpc.channel_ready_future(channel).result(timeout=300)
        stub = analyzer_pb2_grpc.AnalyzerStub(channel)
        pid = pack._proc.pid  # type: ignore[union-attr]
        cpu_before = _cpu_seconds(pid)
        start = time.perf_counter()
        for method, message in requests:
            try:
                getattr(stub, method)(message, timeout=300)
            except grpc.RpcError as exc:
                if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                    raise SystemExit(f"bench: the pack failed {method}: {exc.details()}{pack.stderr_tail()}") from None
        wall = time.perf_counter() - start
        cpu = _cpu_seconds(pid) - cpu_before
        # The gRPC floor: as many calls, each a Remediate of a resource no policy looks at (no remediating
        # policy: the servicer answers at once), so what is left is the server's own cost per call.
        empty = analyzer_pb2.AnalyzeRequest(type="bench:index:Nothing", urn="urn:pulumi:b::b::bench:index:Nothing::n",
                                            name="n")
        before_floor = _cpu_seconds(pid)
        for _ in requests:
            stub.Remediate(empty, timeout=300)
        floor = _cpu_seconds(pid) - before_floor
        channel.close()
    return Replay(wall, cpu, cpu_before, counts, floor)


def summary(replays: Sequence[Replay]) -> dict[str, Any]:
    walls, cpus = [r.wall_s for r in replays], [r.cpu_s for r in replays]
    return {
        "runs": len(replays),
        "wall_median_s": statistics.median(walls), "wall_worst_s": max(walls),
        "cpu_median_s": statistics.median(cpus), "cpu_worst_s": max(cpus),
        "startup_cpu_median_s": statistics.median(r.startup_cpu_s for r in replays),
        "floor_cpu_median_s": statistics.median(r.floor_cpu_s for r in replays),
        "calls": replays[0].calls if replays else {},
    }


def measure(services: int, pools: int, runs: int, phase: str = "preview") -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-pack-") as tmp:
        recording = record(Path(tmp), services, pools, phase)
        return summary([replay(recording) for _ in range(runs)])


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["--record-to"]:
        sep = argv.index("--")
        _record(Path(argv[1]), argv[sep + 1:])
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--services", type=int, default=100)
    parser.add_argument("--pools", type=int, default=10)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--phase", default="preview", choices=("preview", "update", "up"))
    parser.add_argument("--recording", type=Path, help="replay this recording instead of making one")
    args = parser.parse_args(argv)
    if args.recording is not None:
        result = summary([replay(args.recording) for _ in range(args.runs)])
    else:
        result = measure(args.services, args.pools, args.runs, args.phase)
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Wall time and peak memory of the offline preview + policy gate, side by side with its floor and checkov.

    .venv/bin/python bench/preview.py [--runs 5] [--services 1 10 50 100] [--pools 1 10 50] [--grid]
                                      [--checkov PATH] [--no-checkov] [--output bench/results.md]
    make bench                       # the same, with the defaults

Every measured run is a fresh process, as CI and `make preview` run it:

- `dev`, `prod`: `python -m tools.preview --stack S --json` (with `--policy-config policies/config/S.json`
  when it exists), in the default phase (`preview`, a first `pulumi preview`).
- generated stacks (`bench/stacks.py`): prod's configuration with N inference services and P GPU pools,
  written to a temporary folder and previewed with `--config-file` and prod's policy config. The services
  sweep runs at `--sweep-pools` pools (default 10), the pools sweep with no service; `--grid` runs every
  (N, P) pair. A stack the program rejects (exit 2, e.g. a section whose component has not landed) is
  reported as such, with the program's message, and not timed.
- the fixed floor: a fresh Python importing a fixed list of SDK modules (`FIXED_FLOOR_MODULES`, issue 30),
  which does not grow with the preview, so it anchors the ratio `x fixed floor` and the targets.
- the probed floor: a fresh Python that imports exactly the Pulumi SDK modules (`pulumi`, `pulumi_aws`,
  `pulumi_kubernetes`, `pulumi_eks`... from site-packages) the prod preview process imports, with what
  they import in turn (grpc, protobuf...), and nothing else: what any tool that runs this program on
  these SDKs pays before doing any work. Our own dependencies (pydantic, PyYAML, rich, jsonschema) and
  the policy pack's process are not in it: they are overhead the ratio shows.
- checkov (`--checkov`, default `.scan-venv/bin/checkov` from `make scan-venv`, else `checkov` on PATH) over
  the Kubernetes manifests the same preview renders (`--out DIR`, `DIR/manifests`), `--framework kubernetes`: what a
  user would otherwise gate with. Absent checkov is reported, not faked.

Runs are interleaved (run 1 of every case, then run 2...) so that a change in machine load spreads over
all cases instead of landing on one. Each case reports the median and the worst wall time, and the peak
RSS: each run goes through a small wrapper process whose `RUSAGE_CHILDREN.ru_maxrss` is the largest
resident set of the process tree under it (the preview or the policy pack it starts; Linux, KiB).
Watch mode (`--watch-saves`, default 5): `python -m tools.preview --watch` on a copy of prod's stack file;
after its first verdict, each save (one `maxSize` value toggled, `--watch-settle` seconds apart, as a
user edits) is timed from the file's modification time to the moment the new verdict's status line
is read from the watcher's output.
The slope (seconds per service, per pool) is a least-squares line through the medians, with R^2 to show
how linear it is. `bench/results.md` says on what machine, at what load and when the numbers were taken.
Speed is never asserted by tests; this file is where it is measured.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import queue
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench import pack_replay  # noqa: E402
from bench.stacks import write_stack  # noqa: E402

# The value a watch-mode save toggles in prod's stack file: the on-demand baseline's maxSize (a10g-baseline).
WATCH_TOGGLE = ("maxSize: 4", "maxSize: 5")
DEFAULT_CHECKOV = REPO / ".scan-venv" / "bin" / "checkov"  # `make scan-venv` (requirements-scan.txt)
CHECKOV_PIN = "checkov==3.3.30"

# Runs the command, then prints the peak RSS (KiB) and the CPU seconds of its process tree as stderr's last line.
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "use = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
    "print(use.ru_maxrss, use.ru_utime + use.ru_stime, file=sys.stderr)\n"
    "sys.exit(code)\n"
)

# Runs `python -m tools.preview ARGS` in this process, then writes the Pulumi SDK modules it imported.
_PROBE = (
    "import json, runpy, sys, sysconfig\n"
    "out, sys.argv = sys.argv[1], ['tools.preview', *sys.argv[2:]]\n"
    "try:\n"
    "    runpy.run_module('tools.preview', run_name='__main__', alter_sys=True)\n"
    "except SystemExit:\n"
    "    pass\n"
    "site = sysconfig.get_paths()['purelib'], sysconfig.get_paths()['platlib']\n"
    "mods = sorted(n for n, m in list(sys.modules.items()) if n.partition('.')[0].startswith('pulumi')\n"
    "              and (getattr(m, '__file__', None) or '').startswith(site))\n"
    "open(out, 'w').write(json.dumps(mods))\n"
)

_FLOOR = "import importlib, json, sys\nfor name in json.load(open(sys.argv[1])):\n    importlib.import_module(name)\n"

# The fixed floor (issue 30): a fixed list of SDK modules, which does not grow with what the preview imports, so
# it can anchor a target. The probed floor above moves with the preview; the two are reported side by side.
FIXED_FLOOR_MODULES = (
    "pulumi", "pulumi_eks", "pulumi_policy", "pydantic",
    *(f"pulumi_aws.{m}" for m in ("ec2", "eks", "iam", "sqs", "cloudwatch", "kms", "ssm")),
    *(f"pulumi_kubernetes.{m}" for m in ("apps.v1", "core.v1", "networking.v1", "helm.v3", "apiextensions",
                                         "storage.v1", "policy.v1")),
)
_FIXED_FLOOR = f"import importlib\nfor name in {list(FIXED_FLOOR_MODULES)!r}:\n    importlib.import_module(name)\n"


@dataclass
class Case:
    """One row of the table: a command run `runs` times in fresh processes."""

    label: str
    cmd: list[str]
    kind: str  # "preview" | "floor" | "checkov" | "pack"
    services: int | None = None
    pools: int | None = None
    walls: list[float] = field(default_factory=list)
    peaks_kib: list[int] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)  # user + system seconds of the whole process tree
    resources: int | None = None
    violations: int | None = None
    rejected: str | None = None  # the program's message when it rejected the stack (exit 2)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)


def _run(case: Case) -> None:
    wrapped = [sys.executable, "-c", _WRAPPER, *case.cmd]
    start = time.perf_counter()
    proc = subprocess.run(wrapped, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    lines = proc.stderr.strip().splitlines()
    if case.kind == "preview" and proc.returncode == 2:
        case.rejected = next((line for line in lines if line.startswith("error:")), lines[0] if lines else "exit 2")
        return
    if (case.kind == "preview" and proc.returncode not in (0, 1)) or (case.kind == "floor" and proc.returncode):
        raise SystemExit(f"{case.label}: {' '.join(case.cmd)} failed with exit {proc.returncode}:\n{proc.stderr}")
    if case.kind == "checkov" and proc.returncode not in (0, 1):
        raise SystemExit(f"{case.label}: checkov failed with exit {proc.returncode}:\n{proc.stderr[-2000:]}")
    case.walls.append(elapsed)
    peak, cpu = lines[-1].split()
    case.peaks_kib.append(int(peak))
    case.cpus.append(float(cpu))
    if case.kind == "preview" and case.resources is None:
        doc = json.loads(proc.stdout)
        case.resources, case.violations = len(doc["resources"]), len(doc["violations"])


def preview_cmd(args: Sequence[str], policy_config: Path | None) -> list[str]:
    cmd = [sys.executable, "-m", "tools.preview", *args, "--json"]
    if policy_config is not None and policy_config.is_file():
        cmd += ["--policy-config", str(policy_config)]
    return cmd


def policy_config_of(stack: str) -> Path | None:
    path = REPO / "policies" / "config" / f"{stack}.json"
    return path if path.is_file() else None


def find_checkov(explicit: str | None) -> str | None:
    if explicit:
        return explicit
    if DEFAULT_CHECKOV.is_file():
        return str(DEFAULT_CHECKOV)
    return shutil.which("checkov")


def floor_modules(work: Path) -> Path:
    """Run the prod preview once in a probe process; the file listing the third-party modules it imported."""
    out = work / "floor-modules.json"
    cmd = [sys.executable, "-c", _PROBE, str(out), "--stack", "prod"]
    prod_config = policy_config_of("prod")
    if prod_config is not None:
        cmd += ["--policy-config", str(prod_config)]
    proc = subprocess.run([*cmd, "--json"], cwd=REPO, capture_output=True, text=True, check=False)
    if not out.is_file():
        raise SystemExit(f"the floor probe did not write its module list:\n{proc.stderr[-2000:]}")
    return out


def render_manifests(case: Case, work: Path) -> Path | None:
    """The manifests the preview of `case` renders (`--out`), for checkov; None when it renders none."""
    out = work / f"out-{case.label.replace(' ', '_')}"
    cmd = [arg for arg in case.cmd if arg != "--json"] + ["--out", str(out)]
    subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    manifests = out / "manifests"
    return manifests if manifests.is_dir() and any(manifests.glob("*.yaml")) else None


def watch_latency(saves: int, settle: float, work: Path) -> list[float]:
    """Seconds from each save of prod's stack file to the watcher's next status line (see the docstring)."""

    stack = work / "Pulumi.watch.yaml"
    original = (REPO / "Pulumi.prod.yaml").read_text(encoding="utf-8")
    if WATCH_TOGGLE[0] not in original:
        raise SystemExit(f"bench: Pulumi.prod.yaml has no `{WATCH_TOGGLE[0]}` for the watch benchmark to toggle")
    stack.write_text(original, encoding="utf-8")
    cmd = [sys.executable, "-m", "tools.preview", "--watch", "--stack", "prod", "--config-file", str(stack)]
    prod_config = policy_config_of("prod")
    if prod_config is not None:
        cmd += ["--policy-config", str(prod_config)]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    stdout = proc.stdout
    # A thread reads the watcher's lines as they come and stamps each status line with the time it was read:
    # select() on the pipe would miss lines already sitting in the reader's buffer.
    verdicts: queue.Queue[float | None] = queue.Queue()

    def read() -> None:
        for line in stdout:
            if "judged in" in line:
                verdicts.put(time.time())
        verdicts.put(None)

    threading.Thread(target=read, daemon=True).start()

    def next_verdict(timeout: float) -> float:
        try:
            stamp = verdicts.get(timeout=timeout)
        except queue.Empty:
            raise SystemExit("bench: no verdict from the watcher within the timeout") from None
        if stamp is None:
            raise SystemExit(f"bench: the watcher exited with status {proc.wait()}")
        return stamp

    latencies: list[float] = []
    try:
        next_verdict(600)
        for i in range(saves):
            time.sleep(settle)  # the next runner imports while the user edits
            while not verdicts.empty():  # a verdict left from before this save is not this save's
                if verdicts.get_nowait() is None:
                    raise SystemExit(f"bench: the watcher exited with status {proc.wait()}")
            text = original.replace(WATCH_TOGGLE[0], WATCH_TOGGLE[1] if i % 2 == 0 else WATCH_TOGGLE[0], 1)
            stack.write_text(text, encoding="utf-8")
            saved = stack.stat().st_mtime_ns / 1e9
            latencies.append(next_verdict(600) - saved)
    finally:
        proc.terminate()
        proc.wait()
    return latencies


def slope(points: Sequence[tuple[int, float]]) -> tuple[float, float, float] | None:
    """(seconds per unit, intercept, R^2) of the least-squares line through `points`; None under 2 points."""
    if len(points) < 2:
        return None
    xs = [float(x) for x, _ in points]
    ys = [y for _, y in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return None
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    a = my - b * mx
    ss_tot = sum((y - my) ** 2 for y in ys)
    ss_res = sum((y - (a + b * x)) ** 2 for x, y in zip(xs, ys, strict=True))
    r2 = 1.0 - ss_res / ss_tot if ss_tot else 1.0
    return b, a, r2


def machine() -> list[str]:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = ""
    try:
        kib = int(Path("/proc/meminfo").read_text(encoding="utf-8").split()[1])
        mem = f", {kib / 1024 / 1024:.1f} GiB memory"
    except (OSError, ValueError, IndexError):
        pass
    return [
        f"- CPU: {cpu}, {os.cpu_count()} logical cores{mem}",
        f"- OS: {platform.platform()}; Python {platform.python_version()} ({sys.executable})",
    ]


def table(cases: Sequence[Case], floor: float, fixed: float) -> list[str]:
    rows = ["| case | median wall | worst | x fixed floor | x probed floor | median CPU | peak RSS | resources "
            "| violations |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for case in cases:
        if case.rejected is not None:
            rows.append(f"| {case.label} | rejected: {case.rejected.replace('|', '/')[:160]} | | | | | | | |")
            continue
        if not case.walls:
            continue
        rows.append(
            f"| {case.label} | {case.median:.2f} s | {max(case.walls):.2f} s | {case.median / fixed:.2f} | "
            f"{case.median / floor:.2f} | "
            f"{statistics.median(case.cpus):.2f} s | {max(case.peaks_kib) / 1024:.0f} MiB | "
            f"{'' if case.resources is None else case.resources} | "
            f"{'' if case.violations is None else case.violations} |"
        )
    return rows


def slope_lines(cases: Sequence[Case], floor: float) -> list[str]:
    """The least-squares line per service and per pool; `floor`: the fixed floor the intercept is compared to."""
    lines: list[str] = []
    for axis, unit in (("services", "service"), ("pools", "pool")):
        sweep = [c for c in cases if c.kind == "preview" and c.walls and c.label.startswith(f"{axis} sweep")]
        points = [(c.services if axis == "services" else c.pools, c.median) for c in sweep]
        fit = slope([(x, y) for x, y in points if x is not None])
        if fit is None:
            lines.append(f"- per {unit}: not enough timed points ({len(points)}) for a slope")
            continue
        b, a, r2 = fit
        lines.append(f"- per {unit}: {b * 1000:.1f} ms (intercept {a:.2f} s = {a / floor:.2f}x fixed floor, "
                     f"R^2 {r2:.3f}, {len(points)} points)")
    return lines


def pack_lines(pack: dict[str, object] | None, services: int, pools: int) -> list[str]:
    """The pack replay's lines (`bench/pack_replay.py`)."""
    if pack is None:
        return ["not measured (`--pack-services 0`)"]
    calls = pack["calls"]
    assert isinstance(calls, dict)
    return [
        f"`bench/pack_replay.py`: the analyzer requests `tools.preview` sent for {services} services at {pools} pools "
        f"(first preview), recorded once and replayed one at a time over gRPC to a fresh pack process, "
        f"{pack['runs']} times; from its last registration (the pack started and imported) to the stack verdict.",
        "",
        "| pack CPU (median) | worst | wall (median) | worst | gRPC floor CPU (as many empty calls) "
        "| startup CPU (imports, before the clock) | calls |",
        "|---:|---:|---:|---:|---:|---:|---|",
        f"| {pack['cpu_median_s']:.2f} s | {pack['cpu_worst_s']:.2f} s | {pack['wall_median_s']:.2f} s | "
        f"{pack['wall_worst_s']:.2f} s | {pack.get('floor_cpu_median_s', 0.0):.2f} s | "
        f"{pack['startup_cpu_median_s']:.2f} s | "
        + ", ".join(f"{k} {v}" for k, v in calls.items()) + " |",
    ]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per case (median of these; >= 5)")
    parser.add_argument("--services", type=int, nargs="*", default=[1, 10, 50, 100])
    parser.add_argument("--pools", type=int, nargs="*", default=[1, 10, 50])
    parser.add_argument("--sweep-pools", type=int, default=10, help="GPU pools of the services sweep")
    parser.add_argument("--grid", action="store_true", help="every (services, pools) pair, not two sweeps")
    parser.add_argument("--checkov", help=f"checkov executable (default {DEFAULT_CHECKOV}, else PATH)")
    parser.add_argument("--no-checkov", action="store_true")
    parser.add_argument("--watch-saves", type=int, default=5, help="saves timed in watch mode (0: none)")
    parser.add_argument("--watch-settle", type=float, default=5.0, help="seconds between two saves in watch mode")
    parser.add_argument("--pack-services", type=int, default=100,
                        help="services of the stack whose analyzer calls are replayed to the pack alone (0: none)")
    parser.add_argument("--output", type=Path, default=REPO / "bench" / "results.md")
    parser.add_argument("--note", default="", help="a line about the conditions, copied into the results")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")

    started = datetime.datetime.now(datetime.UTC)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-preview-") as tmp:
        work = Path(tmp)
        cases = [Case(s, preview_cmd(["--stack", s], policy_config_of(s)), "preview") for s in ("dev", "prod")]
        pairs: list[tuple[str, int, int]] = []
        if args.grid:
            pairs = [("grid", s, p) for p in args.pools for s in args.services]
        else:
            pairs = [("services sweep", s, args.sweep_pools) for s in args.services]
            pairs += [("pools sweep", 0, p) for p in args.pools]
        for sweep, services, pools in pairs:
            path = write_stack(work, REPO / "Pulumi.prod.yaml", services=services, pools=pools)
            cases.append(Case(f"{sweep}: {services} services, {pools} pools",
                              preview_cmd(["--stack", path.stem.removeprefix("Pulumi."), "--config-file", str(path)],
                                          policy_config_of("prod")),
                              "preview", services=services, pools=pools))
        floor_case = Case("floor: import the same SDK modules", [sys.executable, "-c", _FLOOR,
                                                                 str(floor_modules(work))], "floor")
        module_count = len(json.loads(Path(floor_case.cmd[-1]).read_text(encoding="utf-8")))
        cases.insert(0, floor_case)
        fixed_case = Case(f"fixed floor: import {len(FIXED_FLOOR_MODULES)} named SDK modules",
                          [sys.executable, "-c", _FIXED_FLOOR], "floor")
        cases.insert(0, fixed_case)

        checkov = None if args.no_checkov else find_checkov(args.checkov)
        for run in range(args.runs):
            print(f"run {run + 1}/{args.runs}", file=sys.stderr)
            for case in cases:
                if case.rejected is None:
                    _run(case)
        checkov_cases: list[tuple[Case, Case]] = []
        if checkov is not None:
            targets = [c for c in cases if c.kind == "preview" and c.walls
                       and (c.label == "prod" or c.services == max(args.services, default=0))]
            for target in targets:
                manifests = render_manifests(target, work)
                if manifests is None:
                    continue
                count = len(list(manifests.glob("*.yaml")))
                checkov_cases.append((target, Case(
                    f"checkov over {target.label} ({count} manifests)",
                    [checkov, "-d", str(manifests), "--framework", "kubernetes", "--quiet", "--compact",
                     "--skip-download", "--soft-fail"], "checkov")))
            for run in range(args.runs):
                print(f"checkov run {run + 1}/{args.runs}", file=sys.stderr)
                for _, case in checkov_cases:
                    _run(case)
        pack: dict[str, object] | None = None
        if args.pack_services > 0:
            print("the pack alone", file=sys.stderr)
            recording = pack_replay.record(work, args.pack_services, args.sweep_pools, "preview")
            pack = pack_replay.summary([pack_replay.replay(recording) for _ in range(args.runs)])
        print("watch mode", file=sys.stderr)
        latencies = watch_latency(args.watch_saves, args.watch_settle, work) if args.watch_saves > 0 else []
    load_after = os.getloadavg()

    floor, fixed = floor_case.median, fixed_case.median
    lines = [
        "# Preview + policy gate: benchmark results",
        "",
        f"Taken {started:%Y-%m-%d %H:%M} UTC by `bench/preview.py --runs {args.runs}` "
        f"(median of {args.runs} fresh processes per case).",
        "",
        "## Machine",
        "",
        *machine(),
        f"- load average (1, 5, 15 min): {load_before[0]:.2f} {load_before[1]:.2f} {load_before[2]:.2f} before, "
        f"{load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f} after",
        *([f"- note: {args.note}"] if args.note else []),
        "",
        "## Wall time and peak memory",
        "",
        "The fixed floor is a fresh Python importing `" + "`, `".join(FIXED_FLOOR_MODULES) + "` (issue 30: it "
        "does not move with what the preview imports; `x fixed floor` is each median wall time over its). "
        f"The probed floor is a fresh Python importing the {module_count} Pulumi SDK modules the prod preview "
        "imports (`x probed floor`). CPU is user + system seconds of the run's whole "
        "process tree (the preview and the policy pack), which a busy machine disturbs less than wall time; "
        "on an idle machine with two or more cores, wall time can be below it (the pack starts while the "
        "program runs). Peak RSS is the largest process of the run's tree (the preview or the policy pack).",
        "",
        *table(cases, floor, fixed),
        "",
        "## Slope",
        "",
        *slope_lines(cases, fixed),
        "",
        "## The policy pack alone, as the engine drives it",
        "",
        *pack_lines(pack, args.pack_services, args.sweep_pools),
        "",
        "## Watch mode: from the save of prod's stack file to the new verdict on screen",
        "",
        (f"median {statistics.median(latencies):.2f} s, best {min(latencies):.2f} s, worst {max(latencies):.2f} s "
         f"over {len(latencies)} saves, {args.watch_settle:.0f} s apart" if latencies else "not measured"),
        "",
        "## The gate against checkov on the same manifests",
        "",
    ]
    if checkov is None:
        lines.append(f"checkov not found: `make scan-venv` installs {CHECKOV_PIN} in its own virtualenv "
                     "(.scan-venv), or pass `--checkov PATH`.")
    elif not checkov_cases:
        lines.append("No measured stack rendered a Kubernetes manifest, so checkov had nothing to scan.")
    else:
        lines += ["| scan | median wall | worst | peak RSS | preview + gate of the same stack | checkov / gate |",
                  "|---|---:|---:|---:|---:|---:|"]
        for target, case in checkov_cases:
            lines.append(f"| {case.label} | {case.median:.2f} s | {max(case.walls):.2f} s | "
                         f"{max(case.peaks_kib) / 1024:.0f} MiB | {target.median:.2f} s | "
                         f"{case.median / target.median:.2f} |")
        version = subprocess.run([checkov, "--version"], capture_output=True, text=True, check=False)
        lines += ["", f"checkov {version.stdout.strip()} (`{CHECKOV_PIN}` in its own virtualenv), "
                      "`--framework kubernetes --quiet --compact --skip-download --soft-fail`."]
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())

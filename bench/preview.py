"""Wall time and peak memory of the offline preview + policy gate, per stack.

    .venv/bin/python bench/preview.py [--runs 3] [--stack dev --stack prod] [--phase preview --phase up]

Each run is a fresh `python -m tools.preview --stack S --phase P --json` process (with
`--policy-config policies/config/S.json` when it exists), as CI and `make preview` run it, started
through a small wrapper process so that peak memory is that run's alone: the
largest resident set among the preview and the policy pack it starts (`ru_maxrss` of
RUSAGE_CHILDREN in the wrapper, KiB on Linux). Prints one line per stack: median and worst wall
time, peak RSS, resource and violation counts, per stack and phase (default: the `preview` phase).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


# Runs the command, then reports the peak RSS of its process tree on stderr's last line.
_WRAPPER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.run(sys.argv[1:]).returncode\n"
    "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr)\n"
    "sys.exit(code)\n"
)


def run_once(stack: str, phase: str) -> tuple[float, int, int, int]:
    cmd = [sys.executable, "-c", _WRAPPER, sys.executable, "-m", "tools.preview", "--stack", stack,
           "--phase", phase, "--json"]
    policy_config = REPO / "policies" / "config" / f"{stack}.json"
    if policy_config.is_file():
        cmd += ["--policy-config", str(policy_config)]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"preview of {stack} failed with exit {proc.returncode}:\n{proc.stderr}")
    doc = json.loads(proc.stdout)
    peak_kib = int(proc.stderr.strip().splitlines()[-1])
    return elapsed, peak_kib, len(doc["resources"]), len(doc["violations"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--stack", action="append", default=None)
    parser.add_argument("--phase", action="append", choices=("preview", "update", "up"), default=None)
    args = parser.parse_args()
    for stack in args.stack or ["dev", "prod"]:
        for phase in args.phase or ["preview"]:
            report(stack, phase, [run_once(stack, phase) for _ in range(args.runs)], args.runs)


def report(stack: str, phase: str, results: list[tuple[float, int, int, int]], runs: int) -> None:
    walls = [r[0] for r in results]
    print(
        f"{stack} ({phase}): median {statistics.median(walls):.2f}s, worst {max(walls):.2f}s over {runs} runs; "
        f"peak RSS {max(r[1] for r in results) / 1024:.0f} MiB; "
        f"{results[0][2]} resources, {results[0][3]} violations"
    )


if __name__ == "__main__":
    main()

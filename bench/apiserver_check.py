"""The API-server check's cost on a stack's recording (what every preview pays after the program ran), and the
per-call cost of a CEL rule with and without the Kubernetes library (tools/apiserver/cel_library).

    .venv/bin/python bench/apiserver_check.py [--stack dev] [--runs 5] [--baseline DIR]

The stack's program runs once (a first `pulumi preview`); its recorded resources are saved, then each run is a
fresh process that imports `tools.apiserver.check` and calls `check_resources` on them twice: the first call
(cold: schemas loaded, CEL rules compiled) and the second (warm). `--baseline DIR`: a checkout of another
commit (e.g. `git worktree add /tmp/base <commit>` with `.venv` and `.upstream-cache` linked in), timed the
same way in interleaved runs, on the same recording. Medians are printed; speed is never asserted by tests.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_CHILD = """
import pickle, sys, time
sys.path.insert(0, {repo!r})
start = time.perf_counter()
from tools.apiserver.check import check_resources
from tools.upstream.lock import cache_dir
imported = time.perf_counter()
resources = pickle.load(open({recording!r}, "rb"))
t0 = time.perf_counter()
report = check_resources(resources, cache_dir())
t1 = time.perf_counter()
check_resources(resources, cache_dir())
t2 = time.perf_counter()
print(imported - start, t1 - t0, t2 - t1, report.objects, len(report.findings))
"""

RULES = {
    "plain": "self.name.size() <= 63 && self.name.matches('^[a-z0-9-]+$')",
    "ip": "isIP(self.addr) && ip(self.addr).family() == 4",
    "cidr": "cidr(self.cidr).containsIP(self.addr)",
    "quantity": "quantity(self.mem).isLessThan(quantity('64Gi'))",
    "semver": "semver(self.version, true).isGreaterThan(semver('1.0.0'))",
    "optional": "self.?spec.?replicas.orValue(1) >= 1",
    "format": "!format.dns1123Label().validate(self.name).hasValue()",
}
VARIABLES = {"self": {"name": "gpu-pool", "addr": "10.0.1.7", "cidr": "10.0.0.0/16", "mem": "32Gi",
                      "version": "v1.2", "spec": {"replicas": 2}}}


def record(stack: str, out: Path) -> int:
    from tools.preview.command import run_program  # noqa: PLC0415
    from tools.preview.stack_files import load_project, load_stack_config  # noqa: PLC0415

    project = load_project(REPO)
    config = load_stack_config(REPO / f"Pulumi.{stack}.yaml", project.name, REPO)
    recording = run_program(project, stack, config, "preview", None)
    out.write_bytes(pickle.dumps(list(recording.resources)))
    return len(recording.resources)


def child(repo: Path, recording: Path) -> list[float]:
    code = _CHILD.format(repo=str(repo), recording=str(recording))
    done = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True)
    return [float(x) for x in done.stdout.split()]


def per_call(rounds: int) -> dict[str, float]:
    from tools.apiserver import cel_rules  # noqa: PLC0415

    out = {}
    for name, rule in RULES.items():
        assert cel_rules.value_of(rule, VARIABLES) is True, name
        start = time.perf_counter()
        for _ in range(rounds):
            cel_rules.value_of(rule, VARIABLES)
        out[name] = (time.perf_counter() - start) / rounds * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stack", default="dev")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--baseline", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        recording = Path(tmp) / "resources.pickle"
        count = record(args.stack, recording)
        trees = {"this": REPO, **({"baseline": args.baseline.resolve()} if args.baseline else {})}
        runs: dict[str, list[list[float]]] = {name: [] for name in trees}
        for _ in range(args.runs):
            for name, tree in trees.items():
                runs[name].append(child(tree, recording))
    result = {"stack": args.stack, "resources": count}
    for name, samples in runs.items():
        result[name] = {"import_s": round(statistics.median(s[0] for s in samples), 4),
                        "first_check_s": round(statistics.median(s[1] for s in samples), 4),
                        "second_check_s": round(statistics.median(s[2] for s in samples), 4),
                        "objects": int(samples[0][3]), "findings": int(samples[0][4])}
    result["per_call_us"] = {k: round(v, 1) for k, v in per_call(args.rounds).items()}
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()

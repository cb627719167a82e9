"""Does the GPU probe's verdict on a real GPU agree with what `python -m tools.matrix check` predicts?

    .venv/bin/python bench/probe_vs_matrix.py bench/probe_runs/2026-12-01-h200-r580 [--today 2026-12-01]

Reads the run folder bench/probe_gpu.sh wrote (results.jsonl: one line per scenario with the probe's JSON
report) and, for every kernel the probe ran, asks the matrix about the driver the probe found and the CUDA
release of the toolkit that built the kernel (its NVRTC). The matrix's `cuda-driver-compatible` finding
predicts:

- ok: the driver supports that CUDA natively: SASS and PTX both run;
- advisory (minor version compatibility): SASS for the GPU runs, PTX does not JIT
  (cudaErrorUnsupportedPtxVersion); source: https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html
- error: the runtime does not start on the driver (cudaErrorInsufficientDriver), nothing runs.

Prints one line per kernel (scenario, code, built by, found driver, predicted, observed, agree) and exits
1 when any disagree. tests/components/test_probe.py runs it over the recorded runs.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from tools.matrix.cli import main as matrix_main  # noqa: E402

RUNS = "runs"
FAILS = "fails"
MATRIX_RULE = "cuda-driver-compatible"


@dataclass(frozen=True)
class Comparison:
    """One kernel of one scenario: what the matrix predicts and what the GPU did."""

    scenario: str
    code: str
    built_with: str
    driver: str
    level: str
    predicted: str
    observed: str

    @property
    def agrees(self) -> bool:
        return self.predicted == self.observed


def matrix_level(driver: str, cuda: str, today: str) -> str:
    """The level (ok, advisory, error) of the matrix's cuda-driver-compatible finding for this pair."""
    out = io.StringIO()
    argv = ["check", "--os", "ubuntu-24.04", "--driver", driver, "--cuda", cuda, "--today", today, "--json"]
    with contextlib.redirect_stdout(out):
        matrix_main(argv)
    document = json.loads(out.getvalue())
    (finding,) = [f for f in document["findings"] if f["rule"] == MATRIX_RULE]
    return str(finding["level"])


def predicted_outcome(level: str, code: str) -> str:
    if level == "ok":
        return RUNS
    if level == "advisory":
        return RUNS if code == "sass" else FAILS
    return FAILS


def compare(run_dir: Path, today: str) -> list[Comparison]:
    rows = []
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        result = json.loads(line)
        report = result["report"]
        (driver,) = {gpu["driver"] for gpu in report["gpus"]}
        for kernel in report["kernels"]:
            level = matrix_level(driver, kernel["built_with"], today)
            rows.append(Comparison(
                scenario=result["scenario"], code=kernel["code"], built_with=kernel["built_with"], driver=driver,
                level=level, predicted=predicted_outcome(level, kernel["code"]),
                observed=RUNS if kernel["passed"] else FAILS,
            ))
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("run_dir", type=Path)
    parser.add_argument("--today", default="2026-12-01", help="the date the matrix judges lifecycles at")
    args = parser.parse_args(argv)
    rows = compare(args.run_dir, args.today)
    print(f"{'scenario':28} {'code':4} {'NVRTC':5} {'driver':11} {'matrix':8} {'predicted':9} {'observed':8} agree")
    for row in rows:
        print(f"{row.scenario:28} {row.code:4} {row.built_with:5} {row.driver:11} {row.level:8} "
              f"{row.predicted:9} {row.observed:8} {'yes' if row.agrees else 'NO'}")
    return 0 if all(row.agrees for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())

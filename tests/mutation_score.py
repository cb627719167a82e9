"""Mutation score per path from mutmut's results (`mutants/**/*.py.meta`), after `make mutants`.

score = killed / (killed + survived), where killed counts mutants a test failed on (mutmut exit codes 1
and 3) and those that timed out; "no tests" (no selected test reaches the mutated function) counts as
survived. Mutants not checked yet are reported apart and left out of the score, so a partial run says
how partial it is. The second score leaves out the survivors tests/mutants-equivalent.md lists as
equivalent (each with its reason). Run: `python -m tests.mutation_score` from the repository root.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MUTANTS = REPO / "mutants"
EQUIVALENT = REPO / "tests" / "mutants-equivalent.md"
GROUPS = (
    ("policies/gpu_guard/matrix", "policies/gpu_guard/matrix/"),
    ("policies/gpu_guard/versions.py", "policies/gpu_guard/versions.py"),
    ("policies/gpu_guard/inventory.py", "policies/gpu_guard/inventory.py"),
    ("  (its split: props.py)", "policies/gpu_guard/props.py"),
    ("  (its split: scheduling.py)", "policies/gpu_guard/scheduling.py"),
    ("policies/gpu_guard/rules", "policies/gpu_guard/rules/"),
    ("components/config", "components/config"),
    ("components/inference", "components/inference/"),
    ("components/addons", "components/addons/"),
)
KILLED = {1, 3, 36, 24, -24, 152, 255}  # a failing test, a pytest error, a timeout
SURVIVED = {0, 5, 33}  # tests pass, or no test reaches the mutant


def equivalent_names(text: str) -> set[str]:
    """Mutant names listed as `name` at the start of a table row or bullet of mutants-equivalent.md."""
    return set(re.findall(r"^\s*[|-]\s*`([\w.]+__mutmut_\d+)`", text, re.M))


def tally(meta_files: list[Path], equivalent: set[str]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for meta in meta_files:
        rel = meta.relative_to(MUTANTS).as_posix().removesuffix(".meta")
        group = next((name for name, prefix in GROUPS if rel.startswith(prefix)), None)
        if group is None:
            continue
        counts = out.setdefault(group, Counter())
        for name, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
            if code is None:
                counts["not checked"] += 1
            elif code in KILLED:
                counts["killed"] += 1
            elif name in equivalent:
                counts["equivalent"] += 1
            elif code in SURVIVED:
                counts["survived"] += 1
            else:
                counts["other"] += 1  # suspicious, segfault, skipped: reported, never counted as killed
    return out


def main() -> None:
    equivalent = equivalent_names(EQUIVALENT.read_text(encoding="utf-8")) if EQUIVALENT.is_file() else set()
    results = tally(sorted(MUTANTS.rglob("*.py.meta")), equivalent)
    if not results:
        raise SystemExit("no mutmut results under mutants/: run `make mutants` first")
    total: Counter[str] = Counter()
    print(f"{'path':34} {'killed':>7} {'survived':>8} {'equiv.':>6} {'other':>5} {'unchecked':>9} "
          f"{'score':>6} {'w/o equiv.':>10}")
    for name, _prefix in GROUPS:
        counts = results.get(name, Counter())
        total.update(counts)
        print(_row(name, counts))
    print(_row("total", total))


def _row(name: str, c: Counter[str]) -> str:
    judged = c["killed"] + c["survived"] + c["equivalent"] + c["other"]
    score = 100 * c["killed"] / judged if judged else 0.0
    without = judged - c["equivalent"]
    score_eq = 100 * c["killed"] / without if without else 0.0
    return (f"{name:34} {c['killed']:7} {c['survived']:8} {c['equivalent']:6} {c['other']:5} "
            f"{c['not checked']:9} {score:5.1f}% {score_eq:9.1f}%")


if __name__ == "__main__":
    main()

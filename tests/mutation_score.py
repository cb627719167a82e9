"""Mutation score per path from mutmut's results (`mutants/**/*.py.meta`), after `make mutants`.

score = killed / (killed + survived), where killed counts mutants a test failed on (mutmut exit codes 1
and 3) and those that timed out; "no tests" (no selected test reaches the mutated function) counts as
survived. Mutants not checked yet are reported apart and left out of the score, so a partial run says
how partial it is. The second score leaves out the survivors tests/mutants-equivalent.md lists as
equivalent (each with its reason). Run: `python -m tests.mutation_score` from the repository root.

A full run takes hours on 2 cores, so it can run in chunks on several machines and be merged here:
`python -m tests.mutation_score chunks N` prints N lines of mutant name patterns (the unchecked mutants'
functions, split by count), each line one `make mutants MUTANTS='...'` elsewhere; `pack FILE.tgz` there
writes its results (the `*.meta` files); `merge FILE.tgz|DIR ...` here folds them into mutants/. A merged
result is taken only where the function's source hash (mutmut's `hash_by_function_name`) equals the one
here: a result measured on other code than this checkout's is stale and left out.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import tarfile
from collections import Counter
from pathlib import Path
from typing import Any

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


def _function_of(mutant: str) -> str:
    """`pkg.mod.x_name__mutmut_12` -> `x_name`: the key of `hash_by_function_name`."""
    return mutant.rsplit("__mutmut_", 1)[0].rsplit(".", 1)[1]


def merge_meta(target: dict[str, Any], source: dict[str, Any]) -> tuple[int, int]:
    """Fold the checked results of `source` into `target` (two parsed `.meta` files of one module).

    A result is taken where the source checked the mutant and its function's hash equals the target's
    (the same code); a later source wins over an earlier result. Returns (taken, stale)."""
    taken = stale = 0
    target_hashes = target.get("hash_by_function_name", {})
    source_hashes = source.get("hash_by_function_name", {})
    codes = target.setdefault("exit_code_by_key", {})
    for name, code in source.get("exit_code_by_key", {}).items():
        if code is None:
            continue
        function = _function_of(name)
        if name not in codes or target_hashes.get(function) != source_hashes.get(function):
            stale += 1
            continue
        codes[name] = code
        for key in ("durations_by_key", "estimated_durations_by_key"):
            if name in source.get(key, {}):
                target.setdefault(key, {})[name] = source[key][name]
        taken += 1
    return taken, stale


def _read_sources(source: Path) -> dict[str, dict[str, Any]]:
    """`.meta` files of a results archive (`pack`) or folder (a `mutants/` or a folder holding one), by
    their path under mutants/."""
    found: dict[str, dict[str, Any]] = {}
    if source.is_dir():
        root = source / "mutants" if (source / "mutants").is_dir() else source
        for meta in sorted(root.rglob("*.py.meta")):
            found[meta.relative_to(root).as_posix()] = json.loads(meta.read_text(encoding="utf-8"))
        return found
    with tarfile.open(source) as tar:
        for member in tar.getmembers():
            name = member.name.removeprefix("./").removeprefix("mutants/")
            if member.isfile() and name.endswith(".py.meta"):
                handle = tar.extractfile(member)
                if handle is not None:
                    found[name] = json.load(io.TextIOWrapper(handle, encoding="utf-8"))
    return found


def merge(sources: list[Path], mutants: Path = MUTANTS) -> Counter[str]:
    """Fold several chunks' results into `mutants`, in the order given. A module mutants/ does not hold yet
    is copied whole (its hashes are mutmut's own for this checkout only if the chunk ran on it: `make
    mutants` once here first makes the comparison possible)."""
    counts: Counter[str] = Counter()
    for source in sources:
        if not source.exists():
            raise SystemExit(f"{source}: no such results archive or folder (`pack` makes one where the chunk ran)")
        for rel, meta in _read_sources(source).items():
            target_path = mutants / rel
            if not target_path.is_file():
                target_path.parent.mkdir(parents=True, exist_ok=True)
                target_path.write_text(json.dumps(meta, indent=4), encoding="utf-8")
                counts["copied"] += sum(code is not None for code in meta.get("exit_code_by_key", {}).values())
                continue
            target = json.loads(target_path.read_text(encoding="utf-8"))
            taken, stale = merge_meta(target, meta)
            counts["taken"] += taken
            counts["stale"] += stale
            target_path.write_text(json.dumps(target, indent=4), encoding="utf-8")
    return counts


def pack(out: Path, mutants: Path = MUTANTS) -> int:
    """Write every `.meta` file under `mutants` into the archive `out` (paths relative to mutants/)."""
    metas = sorted(mutants.rglob("*.py.meta"))
    if not metas:
        raise SystemExit("no mutmut results under mutants/: run `make mutants` first")
    with tarfile.open(out, "w:gz") as tar:
        for meta in metas:
            tar.add(meta, arcname=meta.relative_to(mutants).as_posix())
    return len(metas)


def chunks(count: int, mutants: Path = MUTANTS, prefixes: tuple[str, ...] = ()) -> list[list[str]]:
    """The unchecked mutants' functions as `module.function__mutmut_*` patterns, split into `count` lists of
    about equal mutant counts (largest function first, each to the lightest list)."""
    per_function: Counter[str] = Counter()
    for meta in sorted(mutants.rglob("*.py.meta")):
        rel = meta.relative_to(mutants).as_posix()
        if prefixes and not rel.startswith(prefixes):
            continue
        for name, code in json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"].items():
            if code is None:
                per_function[name.rsplit("__mutmut_", 1)[0] + "__mutmut_*"] += 1
    lists: list[list[str]] = [[] for _ in range(count)]
    weights = [0] * count
    for pattern, n in sorted(per_function.items(), key=lambda item: (-item[1], item[0])):
        lightest = weights.index(min(weights))
        lists[lightest].append(pattern)
        weights[lightest] += n
    return [sorted(patterns) for patterns in lists if patterns]


RULES_PATH = tuple(prefix for _name, prefix in GROUPS if prefix.startswith("policies/"))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.mutation_score", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("score", help="the score per path (the default)")
    p_merge = sub.add_parser("merge", help="fold chunks' results (archives from `pack`, or folders) into mutants/")
    p_merge.add_argument("sources", nargs="+", type=Path)
    p_pack = sub.add_parser("pack", help="write mutants/**/*.meta into one .tgz (to carry a chunk's results)")
    p_pack.add_argument("out", type=Path)
    p_chunks = sub.add_parser("chunks", help="split the unchecked mutants into N MUTANTS= pattern lists")
    p_chunks.add_argument("count", type=int)
    p_chunks.add_argument("--rules-path", action="store_true", help="only the rules path (policies/gpu_guard)")
    args = parser.parse_args(argv)
    if args.command == "merge":
        counts = merge(args.sources)
        print(f"merged: {counts['taken']} results taken, {counts['copied']} from modules copied whole, "
              f"{counts['stale']} left out (another source hash, or a mutant this checkout lacks)")
    elif args.command == "pack":
        print(f"{args.out}: {pack(args.out)} .meta files")
        return
    elif args.command == "chunks":
        for patterns in chunks(args.count, prefixes=RULES_PATH if args.rules_path else ()):
            print(" ".join(patterns))
        return
    score()


def score() -> None:
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

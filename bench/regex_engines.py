"""The cost of RE2 (google-re2, what tools/apiserver/regex.py runs) beside Python's `re`, on the patterns the
pinned CRDs declare (`pattern` in their schemas) and the regexes their CEL rules pass to `find`/`matches`.

    .venv/bin/python bench/regex_engines.py [--rounds 2000]

For each engine: the time to compile every pattern once (cold, caches cleared) and the time per match of a
pattern against a value that fits it and one that does not, over every pattern, best of 5. Patterns Python's
`re` cannot compile (none in the pinned CRDs) or RE2 refuses are counted, not timed.
"""

from __future__ import annotations

import argparse
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]
import yaml

REPO = Path(__file__).resolve().parents[1]
VALUES = ("30s", "1h30m5s", "Never", "10%", "karpenter.sh/capacity-type", "", "a" * 63, "30s\n", "\u0665%")
CEL_REGEX = re.compile(r"""\.(?:find|findAll|matches)\(\s*(['"])((?:\\.|(?!\1).)*)\1""")


def _walk(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("pattern"), str):
            yield node["pattern"]
        for rule in node.get("x-kubernetes-validations") or []:
            for match in CEL_REGEX.finditer(str(rule.get("rule", ""))):
                yield match.group(2).encode().decode("unicode_escape")
        for value in node.values():
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


def patterns() -> list[str]:
    found: set[str] = set()
    for path in sorted((REPO / ".upstream-cache" / "crds").rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")):
            found.update(_walk(doc))
    return sorted(found)


def _best(fn: Callable[[], None], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    args = parser.parse_args()
    pats = patterns()
    options = re2.Options()
    options.log_errors = False
    engines: dict[str, Callable[[str], Any]] = {"re": re.compile, "re2": lambda p: re2.compile(p, options)}
    clear = {"re": re.purge, "re2": re2._Regexp._make.cache_clear}  # re2 caches compiled programs itself
    print(f"{len(pats)} patterns from the pinned CRDs; {len(VALUES)} values each; {args.rounds} rounds")
    for name, compile_ in engines.items():
        compiled = []
        for pattern in pats:
            try:
                compiled.append(compile_(pattern))
            except Exception:  # noqa: BLE001 - counted: the engine refuses the pattern
                continue

        def compile_all(compile_: Callable[[str], Any] = compile_, clear: Callable[[], None] = clear[name]) -> None:
            clear()
            for pattern in pats:
                try:
                    compile_(pattern)
                except Exception:  # noqa: BLE001
                    continue

        def match_all(programs: list[Any] = compiled) -> None:
            for _ in range(args.rounds):
                for program in programs:
                    for value in VALUES:
                        program.search(value)

        compile_s = _best(compile_all)
        match_s = _best(match_all, repeat=3)
        per_match_us = match_s / (args.rounds * max(len(compiled), 1) * len(VALUES)) * 1e6
        print(f"{name:4}: compiled {len(compiled)}/{len(pats)}; compile all {compile_s * 1000:.2f} ms; "
              f"{per_match_us:.3f} us per search (best of 3 runs)")


if __name__ == "__main__":
    main()

"""Where the tests find the upstream reference data: the cache `make upstream` fills (never ../shared).

`upstream.lock.json` pins every file; `make upstream` copies or downloads them into `.upstream-cache/`
(GPU_PLATFORM_UPSTREAM_CACHE moves it) and checks each sha256. Locally a test whose file is not in the
cache skips with the reason. Under `CI=true` it fails instead (except a pin marked `optional` in the lockfile,
which skips with its reason everywhere: tools/upstream/lock.py), the same here and on GitHub: CI runs
`make upstream` first, so a missing file there would hide coverage behind a green run (as a missing
registry binary does, see tests/policies/conftest_registry.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

from tools.upstream.lock import cache_dir, load

REPO = Path(__file__).resolve().parent.parent


def upstream_cache() -> Path:
    return cache_dir()


def missing_upstream(reason: str) -> NoReturn:
    """Skip the calling test with `reason`; fail it when CI=true."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def absent_pins(cache: Path) -> list[str]:
    """The pinned files (not the optional ones) that `cache` does not hold: what a test that reads the whole cache
    (the API-server check, the conformance harness, a preview's verdict) would silently go without."""
    return [pin.file for pin in load() if not pin.optional and not (cache / pin.file).is_file()]


def upstream(*parts: str) -> Path:
    """A path in the upstream cache; skips the calling test with the reason when it is absent (fails in CI).

    With no parts, the cache itself, and the test needs every pinned file: an empty or partly filled cache (the
    folder exists once `make test` has tried to fill it) skips it the same way. A test that reads the cache only
    through a subprocess (a preview's verdict with its API-server check) calls `upstream()` first for that reason.
    """
    if not parts:
        cache = upstream_cache()
        absent = absent_pins(cache)
        if absent:
            missing_upstream(f"upstream reference data {cache / absent[0]} is absent ({len(absent)} pinned file(s) "
                             "missing; run `make upstream`: upstream.lock.json pins them)")
        return cache
    path = upstream_cache().joinpath(*parts)
    if not path.exists():
        optional = {pin.file: pin.optional for pin in load() if pin.optional}.get("/".join(parts))
        if optional:
            pytest.skip(f"optional upstream file {'/'.join(parts)} not fetched ({optional}): "
                        "`make upstream` where raw.githubusercontent.com or GPU_PLATFORM_UPSTREAM_URL answers")
        missing_upstream(f"upstream reference data {path} is absent (run `make upstream`: upstream.lock.json pins it)")
    return path

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


def upstream(*parts: str) -> Path:
    """A path in the upstream cache; skips the calling test with the reason when it is absent (fails in CI)."""
    path = upstream_cache().joinpath(*parts)
    if not path.exists():
        optional = {pin.file: pin.optional for pin in load() if pin.optional}.get("/".join(parts))
        if optional:
            pytest.skip(f"optional upstream file {'/'.join(parts)} not fetched ({optional}): "
                        "`make upstream` where raw.githubusercontent.com or GPU_PLATFORM_UPSTREAM_URL answers")
        missing_upstream(f"upstream reference data {path} is absent (run `make upstream`: upstream.lock.json pins it)")
    return path

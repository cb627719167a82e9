"""Where the shared contracts and upstream reference data live (`../shared`), for tests that read them.

Locally a test that needs `../shared` and cannot find it skips with the reason. Under `CI=true` it
fails instead: CI checks `../shared` out, so a missing copy there would hide coverage behind a
green run (as a missing registry binary does, see tests/policies/conftest_registry.py).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NoReturn

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    return Path(os.environ.get("GPU_PLATFORM_SHARED", REPO.parent / "shared"))


def missing_shared(reason: str) -> NoReturn:
    """Skip the calling test with `reason`; fail it when CI=true."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {reason}")
    pytest.skip(reason)


def upstream(*parts: str) -> Path:
    """A path under ../shared/upstream; skips the calling test with the reason when it is absent (fails in CI)."""
    path = shared_dir().joinpath("upstream", *parts)
    if not path.exists():
        missing_shared(f"upstream reference data {path} is absent (checkout ../shared next to the repo to run this)")
    return path

"""Where the shared contracts and upstream reference data live (`../shared`), for tests that read them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def shared_dir() -> Path:
    return Path(os.environ.get("GPU_PLATFORM_SHARED", REPO.parent / "shared"))


def upstream(*parts: str) -> Path:
    """A path under ../shared/upstream; skips the calling test with the reason when it is absent."""
    path = shared_dir().joinpath("upstream", *parts)
    if not path.exists():
        pytest.skip(f"upstream reference data {path} is absent (checkout ../shared next to the repo to run this)")
    return path

"""The golden files of tests/matrix/golden/: written when GOLDEN_UPDATE=1 (a deliberate change, then read the
diff), read back either way so the test compares against what is on disk."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import yaml

GOLDEN_DIR = Path(__file__).parent / "golden"


def golden(name: str, actual: Any) -> Any:
    """The expected content of golden/<name>; rewritten from `actual` first when GOLDEN_UPDATE=1."""
    path = GOLDEN_DIR / name
    if os.environ.get("GOLDEN_UPDATE") == "1":
        GOLDEN_DIR.mkdir(exist_ok=True)
        path.write_text(yaml.safe_dump(actual, width=10_000, allow_unicode=True, sort_keys=True), encoding="utf-8")
    return yaml.safe_load(path.read_text(encoding="utf-8"))

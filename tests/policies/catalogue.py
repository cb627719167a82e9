"""The policy catalogue as ../shared/POLICIES.md states it: name -> (default, prod) enforcement."""

from __future__ import annotations

import re

from tests.shared import missing_shared, shared_dir

_ROW = re.compile(r"^\|\s*`(?P<name>[a-z0-9-]+)`\s*\|\s*(?P<level>[^|]+)\|")


def catalogue() -> dict[str, tuple[str, str]]:
    path = shared_dir() / "POLICIES.md"
    if not path.is_file():
        missing_shared(f"{path} is absent: the catalogue check needs the shared contracts checkout")
    out: dict[str, tuple[str, str]] = {}
    for line in path.read_text().splitlines():
        match = _ROW.match(line)
        if not match:
            continue
        level = match["level"].strip()
        default = level.split(",")[0].strip()
        prod = "mandatory" if "*prod* mandatory" in level else default
        out[match["name"]] = (default, prod)
    return out

"""The policy catalogue as ../shared/POLICIES.md states it: name -> (default, prod) enforcement."""

from __future__ import annotations

import re
from collections.abc import Collection

from tests.shared import missing_shared, shared_dir

_ROW = re.compile(r"^\|\s*`(?P<name>[a-z0-9-]+)`\s*\|\s*(?P<level>[^|]+)\|")
# An item of the "Planned by open issues" list: - `name` (level, *prod* mandatory): rule
_PLANNED = re.compile(r"^- `(?P<name>[a-z0-9-]+)` \((?P<level>[^)]+)\)")


def catalogue(implemented: Collection[str] = ()) -> dict[str, tuple[str, str]]:
    """The tables' policies, plus each planned policy whose name is in `implemented` (it has landed)."""
    path = shared_dir() / "POLICIES.md"
    if not path.is_file():
        missing_shared(f"{path} is absent: the catalogue check needs the shared contracts checkout")
    out: dict[str, tuple[str, str]] = {}
    planned = False
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            planned = line.strip() == "## Planned by open issues"
        match = (_PLANNED if planned else _ROW).match(line)
        if not match or (planned and match["name"] not in implemented):
            continue
        level = match["level"].strip()
        default = level.split(",")[0].strip()
        prod = "mandatory" if "*prod* mandatory" in level else default
        out[match["name"]] = (default, prod)
    return out

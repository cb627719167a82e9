"""The policy catalogue as docs/policies.md states it: name -> (default, prod) enforcement.

docs/policies.md is generated from the pack (`python -m tools.policy_docs`) and reviewed in the pull
request that changes it; tests/tools/test_policy_docs.py keeps it equal to the pack.
"""

from __future__ import annotations

from tools.policy_docs import DOCS, parse


def catalogue() -> dict[str, tuple[str, str]]:
    """The catalogue's own policies (not the resource parts nor the caveats twins), by name."""
    rows = parse(DOCS.read_text(encoding="utf-8"))
    return {name: (default, prod) for name, (kind, default, prod) in rows.items()
            if "part of" not in kind and "twin of" not in kind}

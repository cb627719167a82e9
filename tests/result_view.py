"""Reading the preview's result document (tools/preview/result.py) in tests.

`validate` holds every document a test produces to the shipped schema (`tools/preview/result.schema.json`):
`PreviewRun.json()` (tests/conftest.py) calls it, so every `--json` run of the suite is validated.

`entries` lists a document's verdicts as rows of (policy, enforcement, urn, message, blocks), the shape the
engine reports a violation in: each finding (and the policy half folded into it, `twin`), each object a pending
policy waits for, and each policy an unjudged component's children would meet (`<policy>-pending`). Tests that
assert on one engine verdict read it there; the document itself holds each of them once.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from functools import cache
from typing import Any

import jsonschema  # type: ignore[import-untyped]  # requirements.txt pins jsonschema (4.26.0)

from tools.preview.result import SCHEMA_PATH


@cache
def _validator() -> Any:
    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def validate(doc: Mapping[str, Any]) -> None:
    """Raise AssertionError naming every place where `doc` breaks the schema."""
    errors = sorted(_validator().iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{'/'.join(map(str, e.absolute_path))}: {e.message[:300]}" for e in errors)


def entries(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for f in doc["findings"]:
        message = f["message"] + (f" Fix: {f['fix']}." if f.get("fix") else "")
        for policy in (f["policy"], *([f["twin"]] if f.get("twin") else [])):
            rows.append({"policy": policy, "enforcement": f["level"], "urn": f["object"]["urn"],
                         "message": message, "blocks": f["label"], "offlineOnly": f["offlineOnly"],
                         "stackKey": f["stackKey"]})
    for p in doc["pending"]:
        for urn in p["objects"]:
            rows.append({"policy": f"{p['policy']}-pending", "enforcement": "advisory", "urn": urn,
                         "message": "; ".join(p["reasons"]), "blocks": "before-create", "offlineOnly": False,
                         "stackKey": None})
    for u in doc["unjudged"]:
        for policy in u["policies"]:
            rows.append({"policy": f"{policy}-pending", "enforcement": "advisory", "urn": u["urn"],
                         "message": f"{policy} is pending offline: {u['type']} '{u['name']}' is unjudged "
                                    f"({u['why']}); {policy} could judge what it registers ({u['basis']})",
                         "blocks": "before-create", "offlineOnly": False, "stackKey": None})
    return rows

"""Upstream's own validation suites, translated (tests/upstream_suites/*.yaml; their SOURCE and the translation
rule: tests/upstream_suites/README.md): every case is accepted or refused by the offline API server exactly as
upstream's suite asserts the real one does, with upstream's expected message where the suite gives one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.shared import upstream
from tools.apiserver.check import validate_object

K8S = "1.35"
SUITES = Path(__file__).resolve().parents[1] / "upstream_suites"


def _suites() -> list[dict[str, Any]]:
    """The generated suites (*.yaml) and the hand-translated ones (modules with `SUITES`)."""
    suites = [yaml.safe_load(path.read_text(encoding="utf-8")) for path in sorted(SUITES.glob("*.yaml"))]
    for path in sorted(SUITES.glob("*.py")):
        module = importlib.import_module(f"tests.upstream_suites.{path.stem}")
        suites += getattr(module, "SUITES", [])
    return suites


def _cases() -> list[Any]:
    params = []
    for doc in _suites():
        for case in doc["cases"]:
            file, line = case["source"].rsplit(":", 2)[-2:]
            params.append(pytest.param(case, doc.get("field_validation", "Warn"),
                                       id=f"{file.rsplit('/', 1)[-1]}:{line}:{case['name']}"))
    return params


@pytest.mark.parametrize(("case", "field_validation"), _cases())
def test_the_verdict_agrees_with_upstreams_suite(case, field_validation):
    findings = validate_object(case["object"], K8S, upstream(), old=case.get("old"),
                               field_validation=field_validation)
    undecided = [f for f in findings if f.level == "advisory" and f.rule != "unknown-field"]
    assert undecided == [], f"{case['source']}: not decided offline: {undecided}"
    rejected = [f"{f.path}: {f.message}" for f in findings if f.level == "rejected"]
    if case["expect"] == "accept":
        assert rejected == [], f"{case['source']} ({case['name']}): upstream accepts it"
    else:
        assert rejected, f"{case['source']} ({case['name']}): upstream refuses it"
        if case.get("message"):
            # The API server prefixes a CEL rule's message with `Invalid value: "<the node's schema type>": `
            # (validation.go `field.Invalid(fldPath, sts.Type, ...)`); the offline finding has the message alone.
            expected = re.sub(r'^Invalid value: "[a-z]+": ', "", case["message"])
            assert any(expected in r for r in rejected), (case["message"], rejected)


def test_every_suite_says_where_it_comes_from_and_has_cases():
    suites = _suites()
    assert len(suites) >= 3
    for doc in suites:
        assert doc["license"] == "Apache-2.0" and "@" in doc["suite"], doc["suite"]
        assert doc["cases"], doc["suite"]
        for case in doc["cases"]:
            repo_tag, file, line = case["source"].rsplit(":", 2)
            assert "@" in repo_tag and file and int(line) > 0, case["source"]
            assert case["expect"] in ("accept", "reject"), case["source"]

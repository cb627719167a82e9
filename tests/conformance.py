"""Conformance harness: would the API server and Helm accept what the preview rendered?

The checks are the product's own (`tools/apiserver`, which `python -m tools.preview` runs in every phase):
built-in objects against the Kubernetes schemas, custom resources against the upstream CRDs and their CEL
rules, Helm values against the chart's values.yaml. This module re-exports them for the tests and adds
`check_preview`, which checks what `python -m tools.preview --out DIR` wrote to disk.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tools.apiserver.check import FIELD_VALIDATION, object_name
from tools.apiserver.check import validate_object as _validate_object
from tools.apiserver.findings import Finding
from tools.apiserver.helm_values import (
    FREE_FORM_KEYS,
    HELM_RELEASE,
    chart_name,
    release_findings,
    values_findings,
)
from tools.apiserver.helm_values import subchart_sections as _subcharts
from tools.apiserver.schemas import load_crds, schema_version

__all__ = [
    "FREE_FORM_KEYS", "HELM_RELEASE", "Finding", "_subcharts", "chart_name", "check_preview", "load_crds",
    "object_name", "release_findings", "schema_version", "validate_object", "values_findings",
]


def validate_object(obj: Any, kubernetes_version: str, upstream: Path | None, *,
                    field_validation: str = FIELD_VALIDATION) -> list[Finding]:
    """The product's check of one object on create, less the transition rules the API server skips on create."""
    return [f for f in _validate_object(obj, kubernetes_version, upstream, field_validation=field_validation)
            if f.level != "skipped"]


def check_preview(out_dir: Path, kubernetes_version: str, upstream: Path) -> list[Finding]:
    """Check everything `python -m tools.preview --out OUT_DIR` wrote; advisories (a rule the offline check
    could not evaluate, a transition rule skipped on create) are not findings here.

    A render with no manifest or no Helm release is itself a finding (`empty-render`): the stacks
    render both, so a check that found nothing to check would otherwise pass on nothing.
    """
    findings: list[Finding] = []
    manifests = sorted((out_dir / "manifests").glob("*.yaml"))
    if not manifests:
        findings.append(Finding("empty-render", str(out_dir / "manifests"), "",
                                "the preview wrote no manifest: there is nothing to check"))
    for manifest in manifests:
        obj = yaml.safe_load(manifest.read_text(encoding="utf-8"))
        findings += [f for f in validate_object(obj, kubernetes_version, upstream) if f.level == "rejected"]
    doc = json.loads((out_dir / "resources.json").read_text(encoding="utf-8"))
    releases = [res for res in doc["resources"] if res["type"] == HELM_RELEASE]
    if not releases:
        findings.append(Finding("empty-render", str(out_dir / "resources.json"), "",
                                f"the preview registered no {HELM_RELEASE}: no Helm values to check"))
    for res in releases:
        findings += release_findings(res, upstream)
    return findings

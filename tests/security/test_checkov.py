"""checkov (Kubernetes framework, --skip-download) over the `--out` manifests of both stacks.

Every finding is fixed or carries a `checkov.io/skip<n>: CKV_..=<reason>` annotation on the object.
checkov is pinned in requirements-scan.txt and installed in a virtualenv of its own (checkov 3.3.30 needs
packaging<24, the Pulumi SDK packaging>=26); the scan tests run where `checkov` is on PATH or $CHECKOV names
it, and skip, saying so, elsewhere. The annotation tests need no checkov.
Source: https://www.checkov.io/2.Basics/Suppressing%20and%20Skipping%20Policies.html (Kubernetes annotations)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PreviewRun

SKIP_KEY = re.compile(r"^checkov\.io/skip\d+$")
SKIP_VALUE = re.compile(r"^(?P<check>CKV2?_K8S_\d+)=(?P<reason>.+)$")


def checkov() -> str:
    found = os.environ.get("CHECKOV") or shutil.which("checkov")
    if not found:
        pytest.skip("checkov is not installed: pip install -r requirements-scan.txt into its own venv, put it on "
                    "PATH (or set CHECKOV)")
    return found


def scan(directory: Path) -> dict[str, Any]:
    done = subprocess.run([checkov(), "--framework", "kubernetes", "--skip-download", "--compact", "-o", "json",
                           "-d", str(directory)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    # Several frameworks give a list; one gives a mapping; no resource gives the bare summary.
    report = report[0] if isinstance(report, list) else report
    return report if "results" in report else {"summary": report, "results": {
        "failed_checks": [], "skipped_checks": [], "passed_checks": []}}


def manifests(preview: PreviewRun) -> Path:
    assert preview.out_dir is not None
    return preview.out_dir / "manifests"


def skip_annotations(directory: Path) -> list[tuple[str, str, str]]:
    """(object, check, reason) of every checkov.io/skip annotation in the manifests."""
    found = []
    for path in sorted(directory.glob("*.yaml")):
        for document in yaml.safe_load_all(path.read_text()):
            annotations = ((document or {}).get("metadata") or {}).get("annotations") or {}
            for key, value in annotations.items():
                if key.startswith("checkov.io/"):
                    assert SKIP_KEY.match(key), f"{path.name}: {key} is not checkov.io/skip<n>"
                    match = SKIP_VALUE.match(value)
                    assert match, f"{path.name}: {key}: {value!r} is not CKV_K8S_<n>=<reason>"
                    found.append((f"{document['kind']}/{document['metadata']['name']}", match["check"],
                                  match["reason"]))
    return found


def test_every_checkov_skip_in_the_manifests_gives_a_reason(stack_preview: PreviewRun):
    for _, _, reason in skip_annotations(manifests(stack_preview)):
        assert len(reason.split()) >= 5, reason


def test_the_smoke_test_skips_only_the_image_digest_check(run_preview: Any):
    dev = run_preview("--stack", "dev", "--json", out=True)
    assert skip_annotations(manifests(dev)) == [
        ("Job/cuda-smoke-l4-spot", "CKV_K8S_43",
         "the official python image is pinned by release tag and pulled Always; the probe's own code is the "
         "mounted file and its wheels are pinned by version")]


def test_checkov_finds_nothing_unskipped_in_the_stack_manifests(stack_preview: PreviewRun):
    report = scan(manifests(stack_preview))
    failed = [(f["check_id"], f["resource"], f["check_name"]) for f in report["results"]["failed_checks"]]
    assert failed == []
    assert report["summary"]["parsing_errors"] == 0
    skipped = {(f["resource"], f["check_id"]) for f in report["results"]["skipped_checks"]}
    annotated = {(obj, check) for obj, check, _ in skip_annotations(manifests(stack_preview))}
    assert {check for _, check in skipped} == {check for _, check in annotated}


def test_checkov_fails_a_privileged_pod(tmp_path: Path):
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}))
    failed = {f["check_id"] for f in scan(tmp_path)["results"]["failed_checks"]}
    assert "CKV_K8S_16" in failed  # "Container should not be privileged"

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

import yaml

from tests.conftest import PreviewRun, shipped_args
from tests.shared import missing_upstream

SKIP_KEY = re.compile(r"^checkov\.io/skip\d+$")
SKIP_VALUE = re.compile(r"^(?P<check>CKV2?_K8S_\d+)=(?P<reason>.+)$")


def checkov() -> str:
    found = os.environ.get("CHECKOV") or shutil.which("checkov")
    if not found:
        missing_upstream("checkov is not installed: `make scan-venv` (requirements-scan.txt, its own venv), then "
                         "`make test` finds it, or set CHECKOV")
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


SMOKE_SKIP = ("Job/cuda-smoke-l4-spot", "CKV_K8S_43",
              "the official python image is pinned by release tag and pulled Always; the probe's own code is the "
              "mounted file and its wheels are pinned by version")
# The Triton and vLLM Deployments keep three findings, each for a reason on the object
# (components/inference/workload.py).
TRITON_SKIPS = ("CKV_K8S_43", "CKV_K8S_15", "CKV_K8S_40")


def test_the_smoke_test_and_triton_skip_only_their_documented_checks(run_preview: Any):
    dev = run_preview(*shipped_args("dev"), out=True)
    found = skip_annotations(manifests(dev))
    assert SMOKE_SKIP in found
    servers = ("Deployment/triton-dev", "Deployment/vllm-dev")
    assert sorted(found) == sorted([SMOKE_SKIP] + [(o, c, r) for o, c, r in found if o in servers])
    for server in servers:  # vLLM's reasons are its own (components/inference/workload.py VLLM_CHECKOV_SKIPS)
        assert [c for o, c, _ in found if o == server] == list(TRITON_SKIPS), server
    prod = run_preview(*shipped_args("prod"), out=True)
    assert [(o, c) for o, c, _ in skip_annotations(manifests(prod))] == [
        ("Deployment/triton", check) for check in TRITON_SKIPS]


def test_prod_renders_its_serving_and_karpenter_objects_for_checkov(run_preview: Any):
    prod = run_preview(*shipped_args("prod"), out=True)
    kinds = {yaml.safe_load(p.read_text())["kind"] for p in manifests(prod).glob("*.yaml")}
    assert {"Deployment", "Service", "Ingress", "NetworkPolicy", "PodDisruptionBudget", "ScaledObject",
            "NodePool", "EC2NodeClass", "StorageClass", "VolumeSnapshotContent"} <= kinds


def test_triton_runs_non_root_read_only_without_capabilities_and_bounded(run_preview: Any):
    for stack, name in (("dev", "triton-dev"), ("prod", "triton")):
        deployment = yaml.safe_load((manifests(run_preview(*shipped_args(stack), out=True))
                                     / f"deployment-inference-{name}.yaml").read_text())
        pod = deployment["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert container["securityContext"] == {
            "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True,
            "runAsNonRoot": True, "runAsUser": 1000, "runAsGroup": 1000}
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
        assert {"cpu", "memory"} <= set(container["resources"]["limits"])
        assert {"livenessProbe", "readinessProbe"} <= set(container)
        tmp = next(m for m in container["volumeMounts"] if m["mountPath"] == "/tmp")
        assert "emptyDir" in next(v for v in pod["volumes"] if v["name"] == tmp["name"])
        policy = yaml.safe_load((manifests(run_preview(*shipped_args(stack), out=True))
                                 / f"networkpolicy-inference-{name}.yaml").read_text())["spec"]
        assert policy["podSelector"]["matchLabels"] == deployment["spec"]["selector"]["matchLabels"]
        assert policy["policyTypes"] == ["Ingress"]
        assert sorted(p["port"] for p in policy["ingress"][0]["ports"]) == sorted(
            p["containerPort"] for p in container["ports"])


def test_checkov_finds_nothing_unskipped_in_the_stack_manifests(stack_preview: PreviewRun):
    report = scan(manifests(stack_preview))
    failed = [(f["check_id"], f["resource"], f["check_name"]) for f in report["results"]["failed_checks"]]
    assert failed == []
    assert report["summary"]["parsing_errors"] == 0
    skipped = {(f["resource"], f["check_id"]) for f in report["results"]["skipped_checks"]}
    annotated = {(obj, check) for obj, check, _ in skip_annotations(manifests(stack_preview))}
    assert {check for _, check in skipped} == {check for _, check in annotated}
    # Each skipped finding is on the very object that carries the annotation (checkov names it Kind.ns.name).
    assert {(resource.split(".")[0], check) for resource, check in skipped} == {
        (obj.split("/")[0], check) for obj, check in annotated}


def test_checkov_fails_a_privileged_pod(tmp_path: Path):
    (tmp_path / "pod.yaml").write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "default"},
        "spec": {"containers": [{"name": "c", "image": "busybox", "securityContext": {"privileged": True}}]}}))
    failed = {f["check_id"] for f in scan(tmp_path)["results"]["failed_checks"]}
    assert "CKV_K8S_16" in failed  # "Container should not be privileged"

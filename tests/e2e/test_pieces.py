"""The driver's pure pieces: image versions to roll between, the inference answer check, the outage measure,
the report, the model snapshot (EBS direct APIs on moto), and `make e2e` without an account."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import boto3
import pytest
from moto import mock_aws

from tools.e2e import images, inference, model_snapshot
from tools.e2e.driver import StepError, empty_or_explain
from tools.e2e.kube import ClusterUnreachable, Kube, KubeError, longest_gap, node_ready_with_gpu
from tools.e2e.report import Report, Row
from tools.e2e.runid import RUN_TAG, run_tags

REPO = Path(__file__).resolve().parents[2]
RUN = "e2e-202612050600-pieces"


def test_one_release_before_the_pin() -> None:
    assert images.one_before(["1.66.0", "1.67.1", "1.67.0", "1.68.0", "1.69.0"], "v1.68.0") == "v1.67.1"
    assert images.one_before(["1.9.0", "1.10.0"], "1.10.0") == "1.9.0"  # numeric, not text, order
    with pytest.raises(ValueError, match=r"no release older than v1\.66\.0"):
        images.one_before(["1.66.0", "1.68.0"], "v1.66.0")


def test_the_previous_and_current_image_of_a_parameter_history() -> None:
    history = [{"Version": 3, "Value": "ami-c"}, {"Version": 1, "Value": "ami-a"}, {"Version": 2, "Value": "ami-b"},
               {"Version": 4, "Value": "ami-c"}]
    assert images.previous_and_current(history) == ("ami-b", "ami-c")
    with pytest.raises(ValueError, match="only one image"):
        images.previous_and_current([{"Version": 1, "Value": "ami-a"}, {"Version": 2, "Value": "ami-a"}])


def test_the_inference_answer_is_checked() -> None:
    body = json.loads(inference.request_body())
    assert [i["name"] for i in body["inputs"]] == ["INPUT0", "INPUT1"]
    right = {"outputs": [{"name": "OUTPUT0", "data": [11, 22, 33, 44]},
                         {"name": "OUTPUT1", "data": [-9, -18, -27, -36]}]}
    assert inference.check_answer(200, json.dumps(right).encode()) == ""
    wrong = {"outputs": [{"name": "OUTPUT0", "data": [11, 22, 33, 45]},
                         {"name": "OUTPUT1", "data": [-9, -18, -27, -36]}]}
    assert "OUTPUT0=[11.0, 22.0, 33.0, 45.0]" in inference.check_answer(200, json.dumps(wrong).encode())
    assert inference.check_answer(503, b"no healthy target").startswith("HTTP 503")
    assert inference.check_answer(200, b"<html>").startswith("not an inference response")


def test_the_model_repository_is_triton_s_layout() -> None:
    model = model_snapshot.MODEL_DIR / inference.MODEL
    assert (model / "config.pbtxt").is_file() and (model / "1" / "model.py").is_file()
    assert f'name: "{inference.MODEL}"' in (model / "config.pbtxt").read_text()


def test_the_longest_outage_of_samples() -> None:
    assert longest_gap([(0, True), (10, False), (20, False), (30, True), (40, False), (45, True)]) == 20
    assert longest_gap([(0, True), (10, False), (50, False)]) == 40
    assert longest_gap([]) == 0


def test_a_gpu_node_is_ready_and_allocates_a_gpu() -> None:
    ready = {"status": {"conditions": [{"type": "Ready", "status": "True"}], "allocatable": {"nvidia.com/gpu": "1"}}}
    assert node_ready_with_gpu(ready)
    assert not node_ready_with_gpu({"status": {"conditions": [{"type": "Ready", "status": "True"}],
                                               "allocatable": {}}})
    assert not node_ready_with_gpu({"status": {"conditions": [{"type": "Ready", "status": "False"}],
                                               "allocatable": {"nvidia.com/gpu": "1"}}})


def test_the_report_names_the_failed_step_and_what_the_sweeper_removed(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    rows = [Row("up", 754.2, "failed", "CommandError: quota | exceeded"), Row("destroy", 61, "passed")]
    report = Report(RUN, rows=rows,
                    sweep={"removed": ["ec2-vpc vpc-1"], "left": [], "failed": [], "scheduled": []})
    path = report.write(tmp_path / "out")
    data = json.loads(path.read_text())
    assert data["failed_step"] == "up" and data["ok"] is False
    assert data["steps"][0] == {"step": "up", "seconds": 754.2, "result": "failed",
                                "detail": "CommandError: quota | exceeded"}
    text = summary.read_text()
    assert "| up | 12m34s | failed | CommandError: quota \\| exceeded |" in text
    assert "Failed step: **up**." in text and "- ec2-vpc vpc-1" in text


def test_the_model_snapshot_is_written_block_by_block_and_tagged(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.setenv(name, "testing")
    image = model_snapshot.build_image(model_snapshot.MODEL_DIR, tmp_path / "models.ext4", size_mib=8)
    written = list(model_snapshot.blocks(image))
    assert written and all(len(data) == model_snapshot.BLOCK for _, data in written)
    assert len(written) < 8 * 2  # an 8 MiB image has 16 blocks; the empty ones are not sent
    with mock_aws():
        ebs = boto3.client("ebs", region_name="us-west-2")
        snapshot = model_snapshot.upload(ebs, image, run_tags(RUN), "e2e model")
        listed = ebs.list_snapshot_blocks(SnapshotId=snapshot)["Blocks"]
    assert sorted(b["BlockIndex"] for b in listed) == [i for i, _ in written]
    assert RUN_TAG in run_tags(RUN)


def test_make_e2e_without_an_account_says_what_it_needs_and_creates_nothing(tmp_path: Path) -> None:
    """The command `make e2e` runs first, in an environment with no AWS credentials, no Pulumi CLI, no kubectl."""
    bare = tmp_path / "bin"
    bare.mkdir()
    env = {"PATH": str(bare), "HOME": str(tmp_path), "AWS_EC2_METADATA_DISABLED": "true",
           "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none"),
           "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "tools.e2e", "check"], cwd=REPO, env=env, capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 2, proc.stderr
    out = proc.stderr
    for need in ("MAX_USD", "a region", "the Pulumi CLI", "kubectl", "E2E_INGRESS_HOST", "AWS credentials",
                 "Nothing was created"):
        assert need in out, need
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bin"]  # no state, no report, no file of any kind


def test_make_e2e_checks_before_it_installs_the_pack_or_runs() -> None:
    proc = subprocess.run(["make", "-n", "e2e", "MAX_USD=25", "VENV=.venv"], cwd=REPO, capture_output=True,
                          text=True, check=False, timeout=60)
    lines = [line for line in proc.stdout.splitlines() if "tools.e2e" in line or "pack-venv" in line]
    assert [("check" in lines[0]), ("pack-venv" in lines[1]), (" run" in lines[2])] == [True, True, True], lines
    assert 'MAX_USD="25"' in lines[0]


def test_every_pin_of_requirements_e2e_is_imported_by_the_driver() -> None:
    from tests.test_requirements import _unused, requirement_names  # noqa: PLC0415

    path = REPO / "requirements-e2e.txt"
    assert requirement_names(path) == ["boto3", "botocore"]
    assert _unused(path, REPO / "tools" / "e2e") == []
    assert "-r requirements-e2e.txt" in (REPO / "requirements-dev.txt").read_text().splitlines()


def _kube_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, objects: dict[str, list[dict[str, object]]]) -> tuple[
        Kube, Path]:
    state, log = tmp_path / "state.json", tmp_path / "kubectl.log"
    state.write_text(json.dumps({"objects": objects}))
    log.write_text("")
    monkeypatch.setenv("FAKE_KUBECTL_STATE", str(state))
    monkeypatch.setenv("FAKE_KUBECTL_LOG", str(log))
    script = tmp_path / "kubectl"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} {REPO / 'tests' / 'e2e' / 'fake_kubectl.py'} \"$@\"\n")
    script.chmod(0o755)
    return Kube(tmp_path / "kubeconfig", kubectl=str(script), sleep=lambda _: None, log=lambda _: None), log


def _meta(name: str, namespace: str = "inference", **extra: object) -> dict[str, object]:
    return {"metadata": {"name": name, "namespace": namespace, **extra}}


def test_the_cluster_is_emptied_in_order_waiting_for_each_kind(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    kube, log = _kube_with(tmp_path, monkeypatch, {
        "ingress": [_meta("triton-dev")], "scaledobjects.keda.sh": [_meta("triton-dev")],
        "persistentvolumeclaims": [_meta("triton-dev-0-models")],
        "persistentvolumes": [{"metadata": {"name": "pvc-1"}, "spec": {
            "csi": {"driver": "ebs.csi.aws.com"},
            "claimRef": {"namespace": "inference", "name": "triton-dev-0-models"}}}],
        "nodepools.karpenter.sh": [_meta("gpu-spot", "")], "nodeclaims.karpenter.sh": [_meta("gpu-spot-abcde", "")]})
    done = kube.empty_cluster(budget=600)
    assert len(done) == 5 and "their EBS volumes are deleted" in done
    commands = log.read_text().splitlines()
    first = {verb: next(i for i, c in enumerate(commands) if c.startswith(verb)) for verb in (
        "delete ingress", "delete scaledobjects.keda.sh", "scale deployments", "delete persistentvolumeclaims",
        "delete nodepools.karpenter.sh")}
    assert list(first) == sorted(first, key=first.__getitem__), commands
    # each deletion is waited for: the Ingress (its ALB) gone before anything else is deleted
    gone = max(i for i, c in enumerate(commands) if c.startswith("get ingress"))
    assert gone < first["delete scaledobjects.keda.sh"]
    # the PVs behind the claims are waited for before the NodePools go
    volumes = max(i for i, c in enumerate(commands) if c.startswith("get persistentvolumes"))
    assert first["delete persistentvolumeclaims"] < volumes < first["delete nodepools.karpenter.sh"]
    assert commands[-1].startswith("get nodeclaims.karpenter.sh")


def test_drift_is_done_when_no_nodeclaim_predates_the_roll(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kube, _ = _kube_with(tmp_path, monkeypatch, {"nodeclaims.karpenter.sh": [
        _meta("old", "", creationTimestamp="2026-12-05T06:00:00Z"),
        _meta("new", "", creationTimestamp="2026-12-05T07:10:00Z")]})
    assert kube.nodeclaims_older_than("2026-12-05T07:00:00Z") == 1
    assert kube.nodeclaims_older_than("2026-12-05T05:00:00Z") == 0


def test_an_unreachable_cluster_is_not_an_empty_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """kubectl fails when the API server does not answer (the cleanup job's runner is not in the endpoint's
    /32): pre-destroy fails and says so, it never reports the cluster emptied."""
    kube, log = _kube_with(tmp_path, monkeypatch, {"ingress": [_meta("triton-dev")]})
    monkeypatch.setenv("FAKE_KUBECTL_UNREACHABLE", "1")
    with pytest.raises(ClusterUnreachable, match="Unable to connect to the server"):
        kube.empty_cluster(budget=600)
    with pytest.raises(StepError, match=r"(?s)did not answer .* left to destroy and to the sweep, the backstop"):
        empty_or_explain(kube)
    assert not any(c.startswith("delete") for c in log.read_text().splitlines())
    with pytest.raises(KubeError, match=r"(?s)last kubectl error: .*i/o timeout"):
        kube.until("Ingresses gone", lambda: not kube.items("ingress", "-A"), budget=0)


def test_a_kind_without_its_crd_is_an_empty_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    kube, _ = _kube_with(tmp_path, monkeypatch, {"persistentvolumeclaims": []})
    state = tmp_path / "state.json"
    state.write_text(json.dumps({"objects": {"ingress": [_meta("triton-dev")]},
                                 "absent": ["scaledobjects.keda.sh", "nodepools.karpenter.sh"]}))
    assert kube.empty_cluster(budget=600) == [
        "deleted 1 Ingress(es); the load balancer controller removed their ALBs"]


def test_a_ttl_shorter_than_a_run_can_live_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    from tools.e2e.__main__ import MIN_TTL_HOURS, main  # noqa: PLC0415

    assert main(["sweep", "--older-than-hours", "2", "--region", "us-west-2"]) == 2
    assert f"a shorter TTL would sweep a live run. Use at least {MIN_TTL_HOURS}" in capsys.readouterr().err
    workflow = (REPO / ".github" / "workflows" / "e2e.yml").read_text()
    limits = [int(m) for m in re.findall(r"timeout-minutes: (\d+)", workflow)]
    assert max(limits) + sorted(limits)[-2] <= MIN_TTL_HOURS * 60  # the run's job, then its cleanup job

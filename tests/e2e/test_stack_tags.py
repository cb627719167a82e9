"""The e2e stack's run tags reach what the controllers create: `gpu-platform:tags` in Karpenter's EC2NodeClass
spec.tags, the load balancer controller's defaultTags, the EBS CSI driver's extraVolumeTags and every
Kubernetes object's labels, shown by the offline preview of the config the driver writes; and a tag that cannot
be both an AWS tag and a label is refused with its key."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config.loader import parse_stack_config
from tests.result_view import entries
from tools.e2e.runid import RUN_TAG, STARTED_TAG
from tools.e2e.stack import Inputs, e2e_config, load_dev

REPO = Path(__file__).resolve().parents[2]
NOW = datetime(2026, 12, 5, 6, 0, tzinfo=UTC)
RUN = "e2e-202612050600-tags"


@pytest.fixture(scope="module")
def preview(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    inputs = Inputs(run_id=RUN, region="us-west-2", snapshot_id="snap-0123456789abcdef1", snapshot_gib=1,
                    ingress_host="e2e.example.com",
                    certificate_arn="arn:aws:acm:us-west-2:123456789012:certificate/00000000-0000-0000-0000-000000000001",
                    endpoint_cidrs=("198.51.100.7/32",), deployer_arn="arn:aws:iam::123456789012:role/e2e")
    path = tmp_path_factory.mktemp("e2e") / f"Pulumi.{RUN}.yaml"
    path.write_text(yaml.safe_dump(e2e_config(load_dev(REPO), inputs, NOW)), encoding="utf-8")
    proc = subprocess.run([sys.executable, "-m", "tools.preview", "--config-file", str(path), "--today", "2026-11-30",
                           "--json"], cwd=REPO, capture_output=True, text=True, check=False, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return dict(json.loads(proc.stdout))


def _of(preview: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [r for r in preview["resources"] if r["type"] == kind]


def test_karpenter_tags_its_instances_volumes_and_templates_with_the_run(preview: dict[str, Any]) -> None:
    classes = _of(preview, "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass")
    assert classes
    for node_class in classes:
        assert node_class["inputs"]["spec"]["tags"][RUN_TAG] == RUN
        assert node_class["inputs"]["spec"]["tags"][STARTED_TAG] == "202612050600"


def test_the_load_balancer_controller_and_the_ebs_csi_driver_tag_what_they_create(preview: dict[str, Any]) -> None:
    releases = [r for r in _of(preview, "kubernetes:helm.sh/v3:Release") if "load-balancer" in r["name"]]
    assert [r["inputs"]["values"]["defaultTags"][RUN_TAG] for r in releases] == [RUN]
    addons = [json.loads(r["inputs"]["configurationValues"]) for r in _of(preview, "aws:eks/addon:Addon")
              if r["inputs"].get("addonName") == "aws-ebs-csi-driver"]
    assert [a["controller"]["extraVolumeTags"][RUN_TAG] for a in addons] == [RUN]


def test_every_kubernetes_object_carries_the_run_label(preview: dict[str, Any]) -> None:
    objects = [r for r in preview["resources"] if r["type"].startswith("kubernetes:") and "metadata" in r["inputs"]]
    assert objects
    unlabelled = [f"{r['type']} {r['name']}" for r in objects
                  if (r["inputs"]["metadata"].get("labels") or {}).get(RUN_TAG) != RUN]
    assert unlabelled == []


def test_the_pack_blocks_nothing_in_the_e2e_stack(preview: dict[str, Any]) -> None:
    assert [v["policy"] for v in entries(preview) if v["enforcement"] == "mandatory"] == []


@pytest.mark.parametrize(("tags", "path", "says"), [
    ({"aws:created-by": "me"}, ("tags", "aws:created-by"), "not under aws:"),
    ({"team": "has space"}, ("tags", "team"), "a tag value is also a Kubernetes label value"),
    ({"x" * 64: "v"}, ("tags", "x" * 64), "1-63"),
])
def test_a_tag_that_is_not_also_a_label_is_refused(tags: dict[str, str], path: tuple[str, ...], says: str) -> None:
    config, problems = parse_stack_config({"cluster": {"name": "gpu-dev", "kubernetesVersion": "1.35"}, "tags": tags})
    assert config is None
    assert [p.path for p in problems] == [path]
    assert says in problems[0].rule


def test_a_stack_without_tags_is_unchanged() -> None:
    config, problems = parse_stack_config({"cluster": {"name": "gpu-dev", "kubernetesVersion": "1.35"}})
    assert problems == [] and config is not None and config.tags == {}


def _transform(type_: str, props: dict[str, Any]) -> Any:
    import pulumi  # noqa: PLC0415

    from components.program import kubernetes_labels  # noqa: PLC0415

    args = pulumi.ResourceTransformationArgs(None, type_, "x", props, pulumi.ResourceOptions())  # type: ignore[arg-type]
    return kubernetes_labels({RUN_TAG: RUN, "team": "gpu"})(args)


def test_the_labels_transformation_adds_the_tags_and_keeps_an_object_s_own_labels() -> None:
    import pulumi_kubernetes as k8s  # noqa: PLC0415

    result = _transform("kubernetes:core/v1:Namespace", {"metadata": {"name": "n", "labels": {"team": "serving"}}})
    assert result.props["metadata"]["labels"] == {RUN_TAG: RUN, "team": "serving"}
    meta = k8s.meta.v1.ObjectMetaArgs(name="n", labels={"app": "triton"})
    result = _transform("kubernetes:apps/v1:Deployment", {"metadata": meta})
    assert result.props["metadata"].labels == {RUN_TAG: RUN, "team": "gpu", "app": "triton"}
    assert _transform("aws:ec2/vpc:Vpc", {"tags": {}}) is None
    assert _transform("kubernetes:helm.sh/v3:Release", {"values": {}}) is None


def _next_daily(after: datetime, cron: str) -> datetime:
    """The next time a daily "M H * * *" cron fires after `after` (KEDA's cron scaler, robfig/cron semantics)."""
    minute, hour, *rest = cron.split()
    assert rest == ["*", "*", "*"]
    at = after.replace(hour=int(hour), minute=int(minute), second=0, microsecond=0)
    return at if at > after else at + timedelta(days=1)


@pytest.mark.parametrize("minute", range(60))
def test_the_wake_window_never_opens_during_a_run_whatever_the_minute(minute: int) -> None:
    """KEDA's cron scaler is inactive only while the next start comes before the next end and now is before the
    next start (kedacore/keda pkg/scalers/cron_scaler.go, GetMetricsAndActivity): checked for every minute of
    the hour a run can start at, up to the run's longest life (the job and the cleanup job, about 6.7 h)."""
    now = datetime(2026, 12, 5, 23, minute, 30, tzinfo=UTC)
    inputs = Inputs(run_id=RUN, region="us-west-2", snapshot_id="snap-0123456789abcdef1", snapshot_gib=1,
                    ingress_host="e2e.example.com", certificate_arn="arn:aws:acm:us-west-2:1:certificate/x",
                    endpoint_cidrs=("198.51.100.7/32",), deployer_arn="arn:aws:iam::123456789012:role/e2e")
    config = e2e_config(load_dev(REPO), inputs, now)
    for service in config["config"]["gpu-platform:inferenceServices"]:
        window = service["autoscaling"]["wakeSchedule"]
        for step in range(0, 7 * 60, 5):
            t = now + timedelta(minutes=step)
            start, end = _next_daily(t, window["start"]), _next_daily(t, window["end"])
            assert start < end and t < start, (minute, step, window)
        assert _next_daily(now, window["end"]) - _next_daily(now, window["start"]) == timedelta(minutes=1)


def test_the_e2e_stack_runs_only_the_service_it_sends_its_request_to() -> None:
    """dev's second service (vllm-dev) would share the host, get a snapshot holding only the e2e Triton model, and
    be an internet-facing OpenAI endpoint without an API key, which the pack refuses."""
    dev = load_dev(REPO)
    assert len(dev["config"]["gpu-platform:inferenceServices"]) > 1
    inputs = Inputs(run_id=RUN, region="us-west-2", snapshot_id="snap-0123456789abcdef1", snapshot_gib=1,
                    ingress_host="e2e.example.com", certificate_arn="arn:aws:acm:us-west-2:1:certificate/x",
                    endpoint_cidrs=("198.51.100.7/32",), deployer_arn="arn:aws:iam::123456789012:role/e2e")
    services = e2e_config(dev, inputs, NOW)["config"]["gpu-platform:inferenceServices"]
    assert [s["name"] for s in services] == [dev["config"]["gpu-platform:inferenceServices"][0]["name"]]
    # fast snapshot restore bills per zone-hour on a snapshot the sweeper never touches: off in the e2e stack
    assert services[0]["modelVolume"]["fastSnapshotRestore"] is False

"""Inference services under the recording mocks: the fields that decide scheduling, data safety and traffic."""

from __future__ import annotations

import copy
import json
from functools import cache
from typing import Any

import pytest

from components.config import ConfigError
from tests import conformance
from tests.components.harness import Run, resolved_exports, run, run_rejected, stack_values
from tests.shared import upstream

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"
PDB = "kubernetes:policy/v1:PodDisruptionBudget"
INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"
SCALED_OBJECT = "kubernetes:keda.sh/v1alpha1:ScaledObject"
SERVICE_MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"
SNAPSHOT_CONTENT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotContent"
SNAPSHOT = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshot"
STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
CONFIG_MAP = "kubernetes:core/v1:ConfigMap"
FSR = "aws:ebs/fastSnapshotRestore:FastSnapshotRestore"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
EKS_ADDON = "aws:eks/addon:Addon"


@cache
def dev() -> Run:
    return run(stack_values("dev"))


@cache
def prod() -> Run:
    return run(stack_values("prod"), stack="prod")


def pod_spec(r: Run) -> dict[str, Any]:
    spec: dict[str, Any] = r.one(DEPLOYMENT).inputs["spec"]["template"]["spec"]
    return spec


def test_prod_deployment_requires_the_pools_it_names_by_the_pool_label():
    terms = pod_spec(prod())["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"] == [{"matchExpressions": [
        {"key": "gpu-platform.io/pool", "operator": "In", "values": ["a10g-baseline", "l4-spot-burst"]}]}]


def test_triton_asks_for_its_gpus_tolerates_the_gpu_taint_and_declares_its_cuda():
    deployment = prod().one(DEPLOYMENT).inputs
    spec = deployment["spec"]["template"]["spec"]
    container = spec["containers"][0]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert spec["tolerations"] == [{"key": "nvidia.com/gpu", "operator": "Equal", "value": "true",
                                    "effect": "NoSchedule"}]
    assert deployment["spec"]["template"]["metadata"]["labels"]["gpu-platform.io/cuda"] == "13.0.2"
    reach = json.loads(deployment["metadata"]["annotations"]["gpu-platform.io/reachable-pools"])
    assert [(p["pool"], p["driver"]) for p in reach] == [("a10g-baseline", "580.173.02"),
                                                         ("l4-spot-burst", "580.173.02")]


def test_triton_serves_its_ports_and_probes_its_health_endpoints():
    container = pod_spec(prod())["containers"][0]
    assert [(p["name"], p["containerPort"]) for p in container["ports"]] == [
        ("http", 8000), ("grpc", 8001), ("metrics", 8002)]
    assert container["startupProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert container["readinessProbe"]["httpGet"]["path"] == "/v2/health/ready"
    assert container["livenessProbe"]["httpGet"]["path"] == "/v2/health/live"
    assert "--exit-timeout-secs=120" in container["args"]


def test_graceful_termination_covers_the_pre_stop_pause_and_the_drain():
    spec = pod_spec(prod())
    pause = spec["containers"][0]["lifecycle"]["preStop"]["sleep"]["seconds"]
    assert spec["terminationGracePeriodSeconds"] > pause + 120


def test_replicas_spread_across_zones_and_a_pdb_selects_them():
    r = prod()
    spread = pod_spec(r)["topologySpreadConstraints"][0]
    assert spread["topologyKey"] == "topology.kubernetes.io/zone"
    pdb = r.one(PDB).inputs["spec"]
    pod_labels = r.one(DEPLOYMENT).inputs["spec"]["template"]["metadata"]["labels"]
    assert pdb["maxUnavailable"] == 1
    assert pdb["selector"]["matchLabels"].items() <= pod_labels.items()


def test_each_replica_restores_its_own_read_write_once_volume_from_the_snapshot():
    r = prod()
    volume = next(v for v in pod_spec(r)["volumes"] if v["name"] == "model")
    claim = volume["ephemeral"]["volumeClaimTemplate"]["spec"]
    snapshot = r.one(SNAPSHOT).inputs
    assert claim["accessModes"] == ["ReadWriteOnce"]
    assert claim["dataSource"] == {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot",
                                   "name": snapshot["metadata"]["name"]}
    assert claim["resources"]["requests"]["storage"] == "200Gi"
    storage_class = r.one(STORAGE_CLASS).inputs
    assert claim["storageClassName"] == storage_class["metadata"]["name"]
    assert storage_class["parameters"]["type"] == "gp3"
    assert storage_class["parameters"]["encrypted"] == "true"
    assert storage_class["volumeBindingMode"] == "WaitForFirstConsumer"


def test_the_snapshot_content_is_retained_protected_and_bound_to_the_snapshot():
    content = prod().one(SNAPSHOT_CONTENT)
    assert content.inputs["spec"]["deletionPolicy"] == "Retain"
    assert content.inputs["spec"]["source"] == {"snapshotHandle": "snap-0123456789abcdef0"}
    assert content.protect and content.retain_on_delete
    snapshot = prod().one(SNAPSHOT).inputs
    assert snapshot["spec"]["source"] == {"volumeSnapshotContentName": content.inputs["metadata"]["name"]}
    assert content.inputs["spec"]["volumeSnapshotRef"] == {"name": snapshot["metadata"]["name"],
                                                           "namespace": snapshot["metadata"]["namespace"]}


def test_fast_snapshot_restore_is_on_in_every_zone_of_the_prod_pools_and_off_in_dev():
    restores = prod().of_type(FSR)
    assert sorted(r.inputs["availabilityZone"] for r in restores) == ["us-west-2a", "us-west-2b", "us-west-2c"]
    assert {r.inputs["snapshotId"] for r in restores} == {"snap-0123456789abcdef0"}
    assert dev().of_type(FSR) == []


def test_prod_ingress_is_an_https_alb_with_waf_health_checks_and_a_long_idle_timeout():
    ingress = prod().one(INGRESS).inputs
    notes = ingress["metadata"]["annotations"]
    prefix = "alb.ingress.kubernetes.io/"
    assert ingress["spec"]["ingressClassName"] == "alb"
    assert notes[prefix + "target-type"] == "ip"
    assert notes[prefix + "scheme"] == "internet-facing"
    assert json.loads(notes[prefix + "listen-ports"]) == [{"HTTP": 80}, {"HTTPS": 443}]
    assert notes[prefix + "ssl-redirect"] == "443"
    assert notes[prefix + "ssl-policy"] == "ELBSecurityPolicy-TLS13-1-2-2021-06"
    assert notes[prefix + "certificate-arn"].startswith("arn:aws:acm:us-west-2:")
    assert notes[prefix + "wafv2-acl-arn"].startswith("arn:aws:wafv2:us-west-2:")
    assert notes[prefix + "healthcheck-path"] == "/v2/health/ready"
    assert notes[prefix + "load-balancer-attributes"] == "idle_timeout.timeout_seconds=600"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == prod().one(SERVICE).inputs["metadata"]["name"]


# The ALB annotations the controller documents (kubernetes-sigs/aws-load-balancer-controller
# docs/guide/ingress/annotations.md, commit 00175c1): a misspelt name is silently ignored by the controller.
DOCUMENTED_ALB_ANNOTATIONS = {
    "scheme", "target-type", "listen-ports", "certificate-arn", "ssl-redirect", "ssl-policy", "backend-protocol",
    "healthcheck-path", "healthcheck-port", "success-codes", "load-balancer-attributes", "target-group-attributes",
    "wafv2-acl-arn",
}


def test_every_alb_annotation_is_one_the_controller_documents():
    notes = prod().one(INGRESS).inputs["metadata"]["annotations"]
    names = {k.removeprefix("alb.ingress.kubernetes.io/") for k in notes if k.startswith("alb.ingress.kubernetes.io/")}
    assert names <= DOCUMENTED_ALB_ANNOTATIONS, names - DOCUMENTED_ALB_ANNOTATIONS
    assert len(names) == len(notes)


def test_the_scaled_object_is_the_only_autoscaler_and_queries_prometheus():
    r = prod()
    spec = r.one(SCALED_OBJECT).inputs["spec"]
    trigger = spec["triggers"][0]
    assert spec["scaleTargetRef"]["name"] == r.one(DEPLOYMENT).inputs["metadata"]["name"]
    assert (spec["minReplicaCount"], spec["maxReplicaCount"], spec["fallback"]["replicas"]) == (2, 8, 4)
    assert trigger["type"] == "prometheus"
    assert trigger["metadata"]["serverAddress"] == "http://kube-prometheus-stack-prometheus.monitoring.svc:9090"
    assert (trigger["metadata"]["threshold"], trigger["metadata"]["activationThreshold"]) == ("50", "1")
    assert "replicas" not in r.one(DEPLOYMENT).inputs["spec"]
    assert r.of_type("kubernetes:autoscaling/v2:HorizontalPodAutoscaler") == []


def test_dev_serves_on_the_karpenter_spot_pool_and_declares_its_pinned_release():
    # Karpenter removes the empty gpu-spot node once KEDA scales the service to zero: no GPU cost while idle.
    deployment = dev().one(DEPLOYMENT, "triton-dev").inputs
    terms = deployment["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "gpu-platform.io/pool", "operator": "In", "values": ["gpu-spot"]}]}]
    reach = json.loads(deployment["metadata"]["annotations"]["gpu-platform.io/reachable-pools"])
    assert reach == [{"pool": "gpu-spot", "os": "bottlerocket", "driver": "580", "driverSource": "image",
                      "instanceTypes": ["g6.xlarge", "g5.xlarge", "g4dn.xlarge"], "kubernetes": "1.35",
                      "imageVersion": "v1.68.0"}]


def test_dev_scales_to_zero_and_its_pdb_asks_no_minimum():
    r = dev()
    for service in ("triton-dev", "vllm-dev"):
        assert r.one(SCALED_OBJECT, service).inputs["spec"]["minReplicaCount"] == 0
        assert "minAvailable" not in r.one(PDB, service).inputs["spec"]
        assert r.one(DEPLOYMENT, service).inputs["metadata"]["annotations"]["pulumi.com/skipAwait"] == "true"
    assert r.of_type(INGRESS) == []


def test_the_service_monitor_selects_the_service_and_scrapes_its_metrics_port():
    r = prod()
    monitor = r.one(SERVICE_MONITOR).inputs["spec"]
    service = r.one(SERVICE).inputs
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["namespaceSelector"] == {"matchNames": [service["metadata"]["namespace"]]}
    assert monitor["endpoints"][0]["port"] in {p["name"] for p in service["spec"]["ports"]}


def test_the_dashboard_shows_dcgm_and_triton_panels_grouped_by_pool():
    board = prod().one(CONFIG_MAP, "dashboard").inputs
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    model = json.loads(next(iter(board["data"].values())))
    exprs = " ".join(p["targets"][0]["expr"] for p in model["panels"])
    for metric in ("DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
                   "nv_inference_request_success", "nv_inference_request_duration_us",
                   "nv_inference_queue_duration_us"):
        assert metric in exprs
    assert all("label_gpu_platform_io_pool" in p["targets"][0]["legendFormat"] for p in model["panels"])


# The Karpenter controller's charts (components/karpenter/controller.py), there whenever a stack sets `karpenter`.
KARPENTER = ("oci://public.ecr.aws/karpenter/karpenter", "oci://public.ecr.aws/karpenter/karpenter-crd")


def test_each_add_on_is_installed_once_and_only_when_a_service_needs_it():
    charts = sorted(r.inputs["chart"] for r in prod().of_type(HELM_RELEASE) if r.inputs["chart"] not in KARPENTER)
    assert charts == ["aws-load-balancer-controller", "gpu-operator", "keda", "kube-prometheus-stack"]
    assert sorted(r.inputs["addonName"] for r in prod().of_type(EKS_ADDON)
                  if r.inputs["addonName"] in ("aws-ebs-csi-driver", "snapshot-controller")) == [
        "aws-ebs-csi-driver", "snapshot-controller"]
    dev_charts = sorted(r.inputs["chart"] for r in dev().of_type(HELM_RELEASE) if r.inputs["chart"] not in KARPENTER)
    assert dev_charts == ["gpu-operator", "keda", "kube-prometheus-stack"]


def test_a_stack_without_services_installs_no_serving_add_on():
    values = copy.deepcopy(stack_values("dev"))
    del values["inferenceServices"]
    charts = sorted(r.inputs["chart"] for r in run(values).of_type(HELM_RELEASE))
    assert charts == sorted(["gpu-operator", *KARPENTER])  # Karpenter's charts come with the karpenter section


def test_load_balancer_controller_gets_region_and_vpc_explicitly():
    values = prod().one(HELM_RELEASE, "aws-load-balancer-controller").inputs["values"]
    assert values["region"] == "us-west-2"
    assert values["vpcId"]


def test_services_are_exported():
    outputs = resolved_exports(stack_values("prod"), stack="prod")
    assert outputs["inferenceServices"] == {"triton": {"namespace": "inference", "host": "inference.example.com"}}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_serving_object_passes_the_schema_and_the_upstream_crds(stack: str):
    r = dev() if stack == "dev" else prod()
    up = upstream()
    findings = []
    for res in r.resources:
        if res.type.startswith("kubernetes:") and res.type != HELM_RELEASE and "apiVersion" in res.inputs:
            findings += conformance.validate_object(res.inputs, "1.35", up)
    assert findings == []


# ---- bad input: exit 2 (ConfigError), the key path named, nothing registered -------------------------

def _service(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("prod"))
    service = values["inferenceServices"][0]
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = service
        for key in parents:
            target = target[key]
        target[last] = value
    return values


BAD_INPUT = [
    ({"modelVolume__snapshotId": "snap-123"}, "inferenceServices[0].modelVolume.snapshotId"),
    ({"ingress__certificateArn": "arn:aws:acm:us-west-2:1:cert/x"}, "inferenceServices[0].ingress.certificateArn"),
    ({"ingress__wafAclArn": "arn:aws:wafv2:eu-west-1:111122223333:regional/webacl/gpu-prod/"
                            "00000000-0000-0000-0000-000000000000"}, "inferenceServices[0].ingress.wafAclArn"),
    ({"ingress__host": "not a host"}, "inferenceServices[0].ingress.host"),
    ({"port": 70000}, "inferenceServices[0].port"),
    ({"metricsPort": 8000}, "inferenceServices[0].metricsPort"),
    ({"minReplicas": 9}, "inferenceServices[0].minReplicas"),
    ({"autoscaling__query": "  "}, "inferenceServices[0].autoscaling.query"),
    ({"autoscaling__query": "sum(rate(x[1m])"}, "inferenceServices[0].autoscaling.query"),
    ({"nodePools": ["a10g-baseline", "h100"]}, "inferenceServices[0].nodePools[1]"),
    ({"modelVolume__snapshotSizeGiB": 500}, "inferenceServices[0].modelVolume.sizeGiB = 200"),
]


@pytest.mark.parametrize(("changes", "key"), BAD_INPUT, ids=[k for _, k in BAD_INPUT])
def test_bad_service_input_names_the_key_and_registers_nothing(changes: dict[str, Any], key: str):
    result, error = run_rejected(_service(**changes), stack="prod")
    assert isinstance(error, ConfigError)
    assert key in str(error) and "Pulumi.prod.yaml" in str(error)
    assert result.registered == []

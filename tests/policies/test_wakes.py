"""The wake rule's pure parts (policies/gpu_guard/wakes.py): selectors of a PromQL query, whose series they are."""

from __future__ import annotations

import pytest

from policies.gpu_guard import wakes


@pytest.mark.parametrize(("query", "expected"), [
    ('sum(rate(nv_inference_request_success{namespace="inference", pod=~"t-.*"}[2m]))',
     [("nv_inference_request_success", {"namespace": ("=", "inference"), "pod": ("=~", "t-.*")})]),
    ("sum by (pod) (rate(x[5m])) / on (pod) group_left(node) y offset 5m",
     [("x", {}), ("y", {})]),
    ('{__name__="up", job="a"} and bool z', [("up", {"job": ("=", "a")}), ("z", {})]),
    ('label_replace(m{a!="b"}, "dst", "$1", "src", "(.*)")', [("m", {"a": ("!=", "b")})]),
    ("vector(1) + 2", []),
    ("max_over_time(q[30m:1m])", [("q", {})]),
])
def test_selectors(query: str, expected: list[tuple[str, dict[str, tuple[str, str]]]]):
    assert wakes.selectors(query) == expected


@pytest.mark.parametrize(("labels", "own"), [
    ({"pod": ("=~", "t-.*")}, True),
    ({"pod": ("=", "t-abc-123")}, True),
    ({"exported_pod": ("=~", "t-.*")}, True),
    ({"pod": ("=~", "t-.*|u-.*")}, False),
    ({"pod": ("!~", "t-.*")}, False),
    ({"pod": ("=~", "tt-.*")}, False),
    ({"pod": ("=", "t")}, False),
    ({"service": ("=", "t")}, False),
])
def test_a_pod_matcher_keeps_only_the_target_pods(labels: dict[str, tuple[str, str]], own: bool):
    assert wakes.keeps_only_pods_of(labels, "t") is own


def test_own_selectors_say_why():
    assert wakes.own_selector("nv_gpu_utilization", {}, "t") == (
        "nv_gpu_utilization is a Triton metric, exported only by the server's own pods")
    assert wakes.own_selector("DCGM_FI_DEV_GPU_UTIL", {"exported_pod": ("=~", "t-.*")}, "t") == (
        "DCGM_FI_DEV_GPU_UTIL is a DCGM series of the workload's own pods")
    assert wakes.own_selector("queue", {"pod": ("=~", "t-.*")}, "t") == "queue is a series of the workload's own pods"
    assert wakes.own_selector("DCGM_FI_DEV_GPU_UTIL", {}, "t") is None


def test_scales_to_zero():
    assert wakes.scales_to_zero({})
    assert wakes.scales_to_zero({"minReplicaCount": 0})
    assert not wakes.scales_to_zero({"minReplicaCount": 1})
    assert wakes.scales_to_zero({"minReplicaCount": 1, "idleReplicaCount": 0})


def test_triggers():
    assert wakes.trigger_cannot_wake({"type": "cron", "metadata": {}}, "t") is None
    assert wakes.trigger_cannot_wake({"type": "memory"}, "t") == "the memory trigger reads the workload's own pods"
    assert wakes.trigger_cannot_wake({"type": "prometheus", "metadata": {"query": "vector(1)"}}, "t") is None
    assert wakes.trigger_cannot_wake({"type": "prometheus", "metadata": {"query": "nv_x + other"}}, "t") is None
    assert wakes.trigger_cannot_wake({"type": "prometheus"}, "t") is None


def test_the_message_names_subject_target_why_and_fix():
    spec = {"minReplicaCount": 0, "scaleTargetRef": {"name": "t"},
            "triggers": [{"type": "prometheus", "metadata": {"query": "sum(nv_inference_count)"}}]}
    assert wakes.wake_message("S", spec) == (
        "S scales Deployment 't' to zero but nothing can wake it: the prometheus query 'sum(nv_inference_count)' reads "
        "only the workload's own series (nv_inference_count is a Triton metric, exported only by the server's own "
        "pods): with no pod the result is empty, KEDA reads it as 0 (ignoreNullValues) or as an error, and neither "
        f"passes activationThreshold. Once at zero it never serves again. Fix: {wakes.WAKE_FIX}.")
    assert wakes.wake_message("S", {**spec, "minReplicaCount": 1}) is None


def test_the_policy_and_the_config_check_say_the_same_words():
    from components.config.serving import InferenceServiceConfig  # noqa: PLC0415
    from policies.gpu_guard.base import all_policies  # noqa: PLC0415
    from tests.policies.harness import run_policy  # noqa: PLC0415

    policy = next(p for p in all_policies() if p.name == "scaled-workload-wakes")
    service = InferenceServiceConfig.model_validate({
        "name": "t", "image": "nvcr.io/nvidia/tritonserver:25.10-py3", "minReplicas": 0,
        "autoscaling": {"query": 'sum(rate(nv_inference_request_success{pod=~"t-.*"}[2m]))', "threshold": "2",
                        "wakeSchedule": {"start": "0 7 * * *", "end": "0 8 * * *"}}})
    assert service.autoscaling is not None
    spec = service.scaled_object_spec(service.autoscaling, "http://p:9090")
    spec["triggers"] = spec["triggers"][1:]  # without the cron window
    outcome = run_policy(policy, [{"type": "kubernetes:keda.sh/v1alpha1:ScaledObject", "name": "t",
                                   "props": {"metadata": {"name": "t", "namespace": "n"}, "spec": spec}}], None)
    assert list(outcome.messages) == [wakes.wake_message("ScaledObject 'n/t'", spec)]


def _spec(**changes: object) -> dict[str, object]:
    spec: dict[str, object] = {
        "scaleTargetRef": {"kind": "Deployment", "name": "t"}, "minReplicaCount": 0,
        "fallback": {"failureThreshold": 3, "replicas": 1},
        "triggers": [{"type": "prometheus", "metadata": {"query": "sum(nv_inference_pending_request_count)",
                                                          "ignoreNullValues": "false"}}],
    }
    spec.update(changes)
    return spec


@pytest.mark.parametrize(("changes", "sleeps"), [
    ({}, False),
    ({"minReplicaCount": 1}, True),                                  # never reaches zero
    ({"fallback": None}, True),                                      # no fallback to turn active
    ({"fallback": {"failureThreshold": 3, "replicas": 1, "behavior": "scalingModifiers"}}, True),  # not active
    ({"triggers": [{"type": "prometheus", "metadata": {"query": "sum(nv_x)", "ignoreNullValues": "False"}}]},
     False),                                                          # strconv.ParseBool spelling
    ({"triggers": [{"type": "prometheus", "metadata": {"query": "sum(nv_x)"}}]}, True),  # default true
    ({"triggers": [{"type": "prometheus", "metadata": {"query": "sum(ingress_requests)",
                                                        "ignoreNullValues": "false"}}]}, True),  # not its own
])
def test_a_fallback_keeps_awake_only_what_errors_at_zero(changes: dict[str, object], sleeps: bool):
    assert (wakes.never_sleeps(_spec(**changes)) is None) is sleeps

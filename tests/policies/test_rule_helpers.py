"""Small helpers of three rules, at their edges. Written from survivors of the mutation run (docs/testing.md).

- serving-disruption-protected counts a pod as GPU serving when a container asks for nvidia.com/gpu in its limits
  or only in its requests (Kubernetes uses a GPU limit as the request and refuses a GPU request without a limit,
  https://kubernetes.io/docs/tasks/manage-gpus/scheduling-gpus/; a stack under preview may state either, and the
  rule reads both).
- serving-disruption-protected-resource reads a budget or maxUnavailable as a percentage only with its `%`.
- gpu-workload-schedulable names the GPU pools it looked at, or says there are none.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.rules.gpu_workload_schedulable import _pool_names
from policies.gpu_guard.rules.serving_disruption_protected import _requests_gpu
from policies.gpu_guard.rules.serving_disruption_protected_resource import percent_of
from policies.gpu_guard.views import Pool


@pytest.mark.parametrize(
    ("resources", "gpu"),
    [
        ({"limits": {"nvidia.com/gpu": 1}}, True),
        ({"requests": {"nvidia.com/gpu": "2"}}, True),
        ({"limits": {"nvidia.com/gpu": 0}, "requests": {"nvidia.com/gpu": 1}}, True),
        ({"limits": {"cpu": "4"}, "requests": {"nvidia.com/gpu": 0}}, False),
        ({}, False),
    ],
)
def test_a_container_asking_for_a_gpu_in_limits_or_requests_is_gpu_serving(resources: dict[str, object],
                                                                           gpu: bool) -> None:
    assert _requests_gpu({"containers": [{"name": "sidecar"}, {"name": "triton", "resources": resources}]}) is gpu


@pytest.mark.parametrize(("value", "percent"), [("30%", 30), ("100%", 100), ("30", None), (30, None), ("x%", None)])
def test_only_a_value_with_a_percent_sign_is_a_percentage(value: object, percent: int | None) -> None:
    assert percent_of(value) == percent


def test_the_gpu_pools_looked_at_are_named_or_said_to_be_none() -> None:
    pools = [Pool(urn=f"urn:{n}", name=n, kind="karpenter-nodepool", labels={}, label_domain={}, taints=(),
                  instance_types=(), min_size=None) for n in ("gpu-spot", "a10g")]
    assert _pool_names(pools) == "GPU pools: 'gpu-spot', 'a10g'"
    assert _pool_names([]) == "GPU pools: none"

"""Selector judgements the rules share, on their own: which pods a PodDisruptionBudget selects and whether it
holds a replica back (`serving-disruption-protected`), and which instance-gpu-count requirements make a NodePool
a GPU pool (`gpu-nodes-tainted`).

Label selectors follow Kubernetes' semantics: matchLabels and every matchExpressions entry must all hold; `In`
needs the key with one of the values, `NotIn` holds when the key is absent or has another value, `Exists` and
`DoesNotExist` look at the key alone, and an empty selector selects every pod.
Source: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#resources-that-support-set-based-requirements
Source: https://kubernetes.io/docs/tasks/run-application/configure-pdb/#specifying-a-poddisruptionbudget
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.gpu_guard.rules.serving_disruption_protected import _pdb_holds_one_back, _selector_matches

POD = {"app": "triton", "tier": "serving"}


@pytest.mark.parametrize(("selector", "selected"), [
    ({}, True),
    (None, True),
    ({"matchLabels": {"app": "triton"}}, True),
    ({"matchLabels": {"app": "triton", "tier": "serving"}}, True),
    ({"matchLabels": {"app": "triton", "tier": "batch"}}, False),
    ({"matchLabels": {"zone": "a"}}, False),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["triton", "vllm"]}]}, True),
    ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["vllm"]}]}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}, False),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["vllm"]}]}, True),
    ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["triton"]}]}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, True),
    ({"matchExpressions": [{"key": "zone", "operator": "Exists"}]}, False),
    ({"matchExpressions": [{"key": "zone", "operator": "DoesNotExist"}]}, True),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, False),
    ({"matchLabels": {"app": "triton"},
      "matchExpressions": [{"key": "tier", "operator": "Exists"}, {"key": "app", "operator": "In", "values": ["x"]}]},
     False),
    ({"matchLabels": {"app": "triton"},
      "matchExpressions": [{"key": "tier", "operator": "Exists"}, {"key": "zone", "operator": "DoesNotExist"}]},
     True),
])
def test_a_label_selector_selects_as_kubernetes_does(selector: Any, selected: bool) -> None:
    assert _selector_matches(selector, POD) is selected


@pytest.mark.parametrize(("spec", "replicas", "why"), [
    ({"minAvailable": 1}, 2, None),
    ({"minAvailable": "50%"}, 2, None),
    ({"minAvailable": 0}, 2, "minAvailable 0 lets every replica go"),
    ({"minAvailable": "0%"}, 2, "minAvailable 0% lets every replica go"),
    ({"maxUnavailable": 1}, 2, None),
    ({"maxUnavailable": "50%"}, 2, None),
    ({"maxUnavailable": "100%"}, 2, "maxUnavailable 100% lets every replica go"),
    ({"maxUnavailable": 2}, 2, "maxUnavailable 2 lets all 2 replicas go"),
    ({"maxUnavailable": 3}, 2, "maxUnavailable 3 lets all 2 replicas go"),
    ({"maxUnavailable": 1}, 1, "maxUnavailable 1 lets all 1 replicas go"),
    ({"minAvailable": 1, "maxUnavailable": 5}, 2, None),  # the API takes one of the two; minAvailable is read first
])
def test_a_budget_holds_a_replica_back_or_says_why_not(spec: dict[str, Any], replicas: int, why: str | None) -> None:
    assert _pdb_holds_one_back(spec, replicas) == why


# A Karpenter NodePool requirement on karpenter.k8s.aws/instance-gpu-count that admits only GPU instances
# (gpu-nodes-tainted then treats the pool as a GPU pool). Source: Karpenter's well-known labels and the NodePool
# requirement operators, https://karpenter.sh/docs/concepts/scheduling/#well-known-labels and
# https://karpenter.sh/docs/concepts/nodepools/#spectemplatespecrequirements
@pytest.mark.parametrize(("requirement", "gpu_only"), [
    ({"operator": "Exists"}, True),
    ({"operator": "Gt", "values": ["0"]}, True),
    ({"operator": "Gt", "values": ["3"]}, True),
    ({"operator": "Gt", "values": []}, False),
    ({"operator": "Gte", "values": ["1"]}, True),
    ({"operator": "Gte", "values": ["0"]}, False),
    ({"operator": "Gte", "values": ["x"]}, False),
    ({"operator": "In", "values": ["0"]}, False),
    ({"operator": "In", "values": ["0", "4"]}, True),
    ({"operator": "In", "values": ["one"]}, False),
    ({"operator": "NotIn", "values": ["0"]}, False),
    ({"operator": "Lt", "values": ["2"]}, False),
    ({"operator": "DoesNotExist"}, False),
    ({}, False),
])
def test_a_gpu_count_requirement_marks_a_gpu_pool_only_when_it_admits_gpus_alone(
        requirement: dict[str, Any], gpu_only: bool) -> None:
    from policies.gpu_guard.rules.gpu_nodes_tainted import _gpu_count_requirement  # noqa: PLC0415

    assert _gpu_count_requirement({"key": "karpenter.k8s.aws/instance-gpu-count", **requirement}) is gpu_only

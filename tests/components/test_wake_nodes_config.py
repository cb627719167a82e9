"""The config check of scaled-workload-wakes-nodes: a scaled service reaches a pool that adds nodes (issue 52).

The stack installs no cluster-autoscaler, so a `gpuNodeGroups` pool keeps its desiredSize nodes; only a Karpenter
pool adds a node for a Pending replica. Same rule and words as the pack (tests/policies/fixtures/
scaled-workload-wakes-nodes).
"""

from __future__ import annotations

import copy
from typing import Any

from components.config.loader import check_stack
from tests.components.harness import TODAY
from tests.components.test_config_rules import VALID


def _check(**service: Any) -> list[str]:
    values = copy.deepcopy(VALID)
    values["inferenceServices"][0].update(service)
    _config, problems, _advisories = check_stack(values, region="us-west-2", today=TODAY)
    return [p.render("Pulumi.dev.yaml") for p in problems]


def test_scale_to_zero_on_a_karpenter_pool_passes():
    assert _check() == []  # VALID: nodePools [a10g, gpu-spot], minReplicas 0


def test_scale_to_zero_on_a_node_group_that_keeps_its_node_is_refused_with_both_fixes():
    (message,) = _check(nodePools=["a10g"], maxReplicas=1)
    assert message.startswith('Pulumi.dev.yaml: inferenceServices[0].nodePools = ["a10g"]: inference service '
                              "'triton' (its ScaledObject) scales Deployment 'triton': every GPU pool it can land on "
                              "is a node group of fixed size that nothing in this stack scales ('a10g' (managed node "
                              "group, desiredSize 1); ")
    assert "scaling it to zero frees no node: the 1 node(s) of those groups run, and bill" in message
    assert "fix: add a Karpenter pool to nodePools (gpu-spot)" in message
    assert "or keep minReplicas at 1 or more and maxReplicas at most 1" in message


def test_scale_to_zero_on_a_node_group_at_zero_never_wakes():
    values_service = {"nodePools": ["a10g"], "maxReplicas": 1}
    values = copy.deepcopy(VALID)
    values["gpuNodeGroups"][0]["desiredSize"] = 0
    values["inferenceServices"][0].update(values_service)
    _config, problems, _ = check_stack(values, region="us-west-2", today=TODAY)
    (problem,) = problems
    assert "at desiredSize 0 no node ever comes, so once at zero its replicas stay Pending forever" in problem.rule


def test_replicas_above_what_the_group_holds_are_refused():
    (message,) = _check(nodePools=["a10g"], minReplicas=1, maxReplicas=2)
    assert "its desiredSize nodes hold 1 replica(s), so the replicas above 1 of its maxReplicaCount 2 stay Pending" \
        in message
    assert "scaling it to zero" not in message


def test_a_fixed_service_without_autoscaling_is_not_judged_here():
    assert _check(nodePools=["a10g"], minReplicas=1, maxReplicas=1, autoscaling=None) == []

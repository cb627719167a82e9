"""Probes, one per class, of what the API server does to a custom resource before its CEL rules, in its order
(tools/apiserver/structural.py): pruning, null pruning, defaulting, then the schema with Kubernetes formats,
RE2 patterns, list types and the name. Each failed on the checker before issue 38 (a rejection where the API
server accepts, or the reverse)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.shared import upstream
from tools.apiserver.check import validate_object

K8S = "1.35"

NODE_CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"},
    "spec": {"amiSelectorTerms": [{"alias": "bottlerocket@latest"}], "role": "KarpenterNodeRole",
             "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu"}}],
             "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu"}}]},
}
NODE_POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu"},
    "spec": {"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
        "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}},
}


def _verdict(obj: dict[str, Any]) -> list[tuple[str, str]]:
    return [(f.path, f.message) for f in validate_object(obj, K8S, upstream()) if f.level == "rejected"]


def test_null_for_a_nil_go_slice_is_pruned_before_validation():
    # Go's encoding/json writes `null` for a nil slice without omitempty, as karpenter-provider-aws's client
    # sends every EC2NodeClass; prunenulls.go deletes it (neither nullable nor defaulted).
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["capacityReservationSelectorTerms"] = None
    assert _verdict(obj) == []


def test_a_null_under_additional_properties_is_pruned_too():
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["tags"] = {"team": None}
    assert _verdict(obj) == []


def test_a_budget_without_nodes_is_defaulted_to_ten_percent_before_the_required_check():
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": [{"reasons": ["Empty"]}]}
    assert _verdict(obj) == []


def test_a_required_field_without_a_default_is_still_required():
    obj = copy.deepcopy(NODE_CLASS)
    del obj["spec"]["subnetSelectorTerms"]
    assert [p for p, _ in _verdict(obj)] == ["spec"]


def test_a_custom_resource_name_must_be_a_dns_subdomain():
    obj = copy.deepcopy(NODE_CLASS)
    obj["metadata"]["name"] = "Bad_Name"
    assert [p for p, _ in _verdict(obj)] == ["metadata.name"]
    assert "RFC 1123 subdomain" in _verdict(obj)[0][1]


def test_duplicates_in_a_set_list_are_refused():
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["disruption"] = {"consolidateAfter": "0s",
                                 "budgets": [{"nodes": "10%", "reasons": ["Empty", "Drifted", "Empty"]}]}
    assert _verdict(obj) == [("spec.disruption.budgets[0].reasons[2]", 'Duplicate value: "Empty"')]


def test_duplicate_keys_in_a_map_list_are_refused():
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "gpu"},
            "spec": {"groups": [{"name": "gpu", "rules": []}, {"name": "gpu", "rules": []}]}}
    assert _verdict(rule) == [("spec.groups[1]", 'Duplicate value: "gpu"')]


def test_status_is_dropped_on_create_where_the_crd_has_a_status_subresource():
    obj = copy.deepcopy(NODE_POOL)
    obj["status"] = {"conditions": [{"type": "Ready"}, {"type": "Ready"}], "nodes": "many"}
    assert _verdict(obj) == []


@pytest.mark.parametrize(("value", "accepted"), [
    ("2026-12-01T00:00:00Z", True), ("2026-12-01t10:00:00.5+02:00", True),
    ("2026-12-01", False), ("2026-02-30T00:00:00Z", False), ("2026-12-01T24:00:00Z", False), ("yesterday", False),
])
def test_a_date_time_field_must_be_a_date_time(value, accepted):
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["template"]["spec"]["taints"] = [{"key": "gpu", "effect": "NoSchedule", "timeAdded": value}]
    assert (_verdict(obj) == []) is accepted, _verdict(obj)


@pytest.mark.parametrize(("value", "accepted"), [
    ("30s", True), ("Never", True),
    ("30s\n", False),  # RE2: `$` matches only at the end of the text, not before a trailing newline
])
def test_a_schema_pattern_runs_on_re2_end_anchor(value, accepted):
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["template"]["spec"]["expireAfter"] = value
    assert (_verdict(obj) == []) is accepted, _verdict(obj)


@pytest.mark.parametrize(("value", "accepted"), [("5%", True), ("\u0665%", False), ("1\u0665.5%", False)])
def test_a_schema_pattern_runs_on_re2_ascii_digits(value, accepted):
    # \u0665 is ARABIC-INDIC DIGIT FIVE: Python's \d takes it, RE2's (Go's) is [0-9]. The pattern of
    # kubelet.evictionHard's values starts with \d{1,2}.
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["kubelet"] = {"evictionHard": {"memory.available": value}}
    assert (_verdict(obj) == []) is accepted, _verdict(obj)


@pytest.mark.parametrize(("value", "accepted"), [("warn", True), ("ABORT", True), ("", True), ("never", False)])
def test_a_go_pattern_python_cannot_compile_is_evaluated(value, accepted):
    # prometheus-operator's `partial_response_strategy` pattern `^(?i)(abort|warn)?$` puts a flag after `^`:
    # Go's regexp (RE2) takes it, Python's `re` raises "global flags not at the start of the expression".
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "gpu"},
            "spec": {"groups": [{"name": "gpu", "partial_response_strategy": value, "rules": []}]}}
    assert (_verdict(rule) == []) is accepted, _verdict(rule)


def test_unknown_values_in_a_set_list_are_not_duplicates_until_they_are_known():
    from tools.engine.records import UNKNOWN  # noqa: PLC0415

    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["disruption"] = {"consolidateAfter": "0s", "budgets": [{"nodes": "10%", "reasons": [UNKNOWN, UNKNOWN]}]}
    assert _verdict(obj) == []


@pytest.mark.parametrize(("labels", "paths"), [
    ({"team": "gpu", "gpu-platform.io/pool": "l4"}, []),
    ({"Bad Key": "x"}, ["metadata.labels"]),
    ({"example.com/": "x"}, ["metadata.labels"]),
    ({"team": "not a value"}, ["metadata.labels.team"]),
    ({"team": "x" * 64}, ["metadata.labels.team"]),
])
def test_a_custom_resources_labels_are_validated_as_object_meta(labels, paths):
    obj = copy.deepcopy(NODE_CLASS)
    obj["metadata"]["labels"] = labels
    assert [p for p, _ in _verdict(obj)] == paths

"""The scheduler's matching as the policies reproduce it, function by function (policies/gpu_guard/scheduling.py).

Semantics checked against the Kubernetes documentation:
- taints and tolerations: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
  (an empty effect matches every effect; `Exists` without a key tolerates every taint; `Equal` is the
  default operator and compares the value, a missing value being the empty string)
- node affinity: https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
  (terms are ORed; a term with neither matchExpressions nor matchFields matches no node)
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from policies.gpu_guard.props import Deferred, deferred_get, get
from policies.gpu_guard.scheduling import (
    INSTANCE_FAMILY_LABEL,
    INSTANCE_TYPE_LABEL,
    expression_matches,
    narrow,
    reachable,
    tolerates,
    tolerates_taint,
)
from policies.gpu_guard.views import Taint, is_gpu_taint

GPU = Taint("nvidia.com/gpu", "true", "NoSchedule")
BARE = Taint("nvidia.com/gpu", "", "NoSchedule")  # `kubectl taint nodes n nvidia.com/gpu:NoSchedule`


# --- tolerates ---------------------------------------------------------------------------------------

def test_a_toleration_for_another_effect_is_skipped_and_the_next_one_still_counts():
    tolerations = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"},
                   {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert tolerates(tolerations, GPU)
    assert not tolerates(tolerations[:1], GPU)


def test_equal_without_a_value_tolerates_a_taint_without_a_value_only():
    tol = {"key": "nvidia.com/gpu", "operator": "Equal", "effect": "NoSchedule"}
    assert tolerates([tol], BARE)
    assert not tolerates([tol], GPU)
    assert tolerates([{**tol, "value": ""}], BARE)
    assert tolerates([{**tol, "value": None}], BARE)
    assert not tolerates([{**tol, "value": ""}], GPU)


def test_the_default_operator_is_equal_and_compares_key_and_value():
    assert tolerates([{"key": "nvidia.com/gpu", "value": "true"}], GPU)
    assert not tolerates([{"key": "nvidia.com/gpu", "value": "false"}], GPU)
    assert not tolerates([{"key": "other", "value": "true"}], GPU)


def test_exists_without_a_key_tolerates_everything_and_with_a_key_only_that_key():
    assert tolerates([{"operator": "Exists"}], GPU)
    assert tolerates([{"key": "nvidia.com/gpu", "operator": "Exists"}], GPU)
    assert not tolerates([{"key": "other", "operator": "Exists"}], GPU)
    assert not tolerates([], GPU)


# The cases of k8s.io/api core/v1 toleration.go `ToleratesTaint` (and its toleration_test.go), one per branch:
# the effect, then the key, then the operator; an operator Kubernetes does not know matches nothing.
@pytest.mark.parametrize(("toleration", "taint", "expected"), [
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, Taint("nvidia.com/gpu", "", "NoExecute"), True),
    ({"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}, GPU, False),
    ({"operator": "Exists", "effect": "NoSchedule"}, Taint("CriticalAddonsOnly", "", "NoSchedule"), True),
    ({"operator": "Exists", "effect": "NoSchedule"}, Taint("CriticalAddonsOnly", "", "NoExecute"), False),
    ({"key": "nvidia.com/gpu", "operator": "Equal", "value": "true"}, BARE, False),
    ({"key": "nvidia.com/gpu", "operator": "Exists"}, BARE, True),
    ({"key": "nvidia.com/gpu", "operator": "Gt", "value": "true"}, GPU, False),
    ({"key": "nvidia.com/gpu", "operator": "", "value": "true"}, GPU, True),
])
def test_one_toleration_against_one_taint_as_toleration_go_does(toleration, taint, expected):
    assert tolerates_taint(toleration, taint) is expected
    assert tolerates([toleration], taint) is expected


@pytest.mark.parametrize(("taint", "gpu"), [
    (GPU, True), (BARE, True), (Taint("nvidia.com/gpu", "present", "NoExecute"), True),
    (Taint("nvidia.com/gpu", "true", "PreferNoSchedule"), False), (Taint("gpu", "true", "NoSchedule"), False),
])
def test_the_gpu_taint_is_its_key_and_a_blocking_effect_with_any_value(taint, gpu):
    assert is_gpu_taint(taint) is gpu


# --- expression_matches ------------------------------------------------------------------------------

DOMAIN: dict[str, Any] = {
    "gpu-platform.io/pool": frozenset({"a10g"}),
    "gpu-platform.io/gpu-count": frozenset({"4"}),
    "opaque": None,
}


@pytest.mark.parametrize(("expr", "expected"), [
    ({"key": "gpu-platform.io/pool", "operator": "In", "values": ["a10g"]}, True),
    ({"key": "gpu-platform.io/pool", "operator": "In", "values": ["h100"]}, False),
    ({"key": "gpu-platform.io/pool", "operator": "NotIn", "values": ["a10g"]}, False),
    ({"key": "gpu-platform.io/pool", "operator": "NotIn", "values": ["h100"]}, True),
    ({"key": "absent", "operator": "NotIn", "values": ["x"]}, True),
    ({"key": "absent", "operator": "In", "values": ["x"]}, False),
    ({"key": "opaque", "operator": "In", "values": ["x"]}, True),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Gt", "values": ["3"]}, True),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Gt", "values": ["4"]}, False),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Lt", "values": ["5"]}, True),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Lt", "values": ["4"]}, False),
    # Gt / Lt need one integer value; none (or no values at all) matches no node
    ({"key": "gpu-platform.io/gpu-count", "operator": "Gt", "values": []}, False),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Gt"}, False),
    ({"key": "gpu-platform.io/gpu-count", "operator": "Lt", "values": ["many"]}, False),
    ({"key": "gpu-platform.io/pool", "operator": "Bogus", "values": ["a10g"]}, False),
])
def test_expression_matches_the_documented_operators(expr, expected):
    assert expression_matches(DOMAIN, expr) is expected


def test_a_selector_on_a_value_the_engine_does_not_know_yet_waits():
    err = UnknownValueError(UNKNOWN_STRING_VALUE, ["spec", "template", "metadata", "labels"])
    domain: dict[str, Any] = {"gpu-platform.io/pool": Deferred(err)}
    with pytest.raises(UnknownValueError):
        expression_matches(domain, {"key": "gpu-platform.io/pool", "operator": "In", "values": ["a10g"]})


# --- narrow ------------------------------------------------------------------------------------------

TYPES = ("p5.48xlarge", "g6.xlarge", "g5.12xlarge")


def test_narrow_by_instance_family_compares_the_part_before_the_dot():
    assert narrow({}, TYPES, [{"key": INSTANCE_FAMILY_LABEL, "operator": "In", "values": ["g6", "p5"]}]) \
        == ("p5.48xlarge", "g6.xlarge")
    assert narrow({}, TYPES, [{"key": INSTANCE_FAMILY_LABEL, "operator": "NotIn", "values": ["g6"]}]) \
        == ("p5.48xlarge", "g5.12xlarge")
    # a full type name is not a family
    assert narrow({}, TYPES, [{"key": INSTANCE_FAMILY_LABEL, "operator": "In", "values": ["g6.xlarge"]}]) == ()


def test_narrow_by_instance_type_compares_the_whole_name_and_ignores_other_keys():
    assert narrow({}, TYPES, [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": ["g6.xlarge", "g6"]}]) \
        == ("g6.xlarge",)
    assert narrow({}, TYPES, [{"key": INSTANCE_TYPE_LABEL, "operator": "NotIn", "values": ["g6.xlarge"]}]) \
        == ("p5.48xlarge", "g5.12xlarge")
    assert narrow({}, TYPES, [{"key": "gpu-platform.io/pool", "operator": "In", "values": ["x"]}]) == TYPES
    assert narrow({}, TYPES, [{"key": INSTANCE_TYPE_LABEL, "operator": "Exists"}]) == TYPES


# --- reachable ---------------------------------------------------------------------------------------

def _pool(*taints: Taint) -> Any:
    return SimpleNamespace(taints=tuple(taints), instance_types=TYPES,
                           label_domain={"gpu-platform.io/pool": frozenset({"gpu"}),
                                         INSTANCE_TYPE_LABEL: frozenset(TYPES)})


def _workload(tolerations: list[Any] | None = None, terms: list[Any] | None = None,
              selector: dict[str, str] | None = None) -> Any:
    return SimpleNamespace(tolerations=tolerations or [], required_terms=terms, node_selector=selector or {})


def test_a_noexecute_taint_keeps_an_untolerating_pod_off_the_pool_and_prefer_noschedule_does_not():
    assert reachable(_workload(), _pool(Taint("dedicated", "gpu", "NoExecute"))) is None
    assert reachable(_workload(), _pool(Taint("dedicated", "gpu", "NoSchedule"))) is None
    reach = reachable(_workload(), _pool(Taint("dedicated", "gpu", "PreferNoSchedule")))
    assert reach is not None and reach.instance_types == TYPES


def test_node_selector_narrows_the_instance_types():
    reach = reachable(_workload(selector={INSTANCE_TYPE_LABEL: "g6.xlarge"}), _pool())
    assert reach is not None and reach.instance_types == ("g6.xlarge",)
    assert reachable(_workload(selector={"gpu-platform.io/pool": "cpu"}), _pool()) is None


def test_an_empty_term_matches_no_node_but_the_next_term_still_counts():
    assert reachable(_workload(terms=[{}]), _pool()) is None
    assert reachable(_workload(terms=[{"matchExpressions": []}]), _pool()) is None
    term = {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": ["g5.12xlarge"]}]}
    reach = reachable(_workload(terms=[{}, term]), _pool())
    assert reach is not None and reach.instance_types == ("g5.12xlarge",)


def test_a_term_with_match_fields_only_is_not_empty():
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}
    reach = reachable(_workload(terms=[term]), _pool())
    assert reach is not None and reach.instance_types == TYPES


def test_terms_are_ored_and_their_instance_types_merged_without_duplicates():
    def term(*types: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": INSTANCE_TYPE_LABEL, "operator": "In", "values": list(types)}]}
    miss = {"matchExpressions": [{"key": "gpu-platform.io/pool", "operator": "In", "values": ["cpu"]}]}
    reach = reachable(_workload(terms=[term("g6.xlarge"), miss, term("g6.xlarge", "p5.48xlarge")]), _pool())
    assert reach is not None and reach.instance_types == ("g6.xlarge", "p5.48xlarge")
    assert reachable(_workload(terms=[miss]), _pool()) is None


# --- props.get / deferred_get ------------------------------------------------------------------------

def test_get_walks_sequences_by_index_and_falls_back_to_the_default():
    assert get(["a", "b"], 0) == "a"
    assert get(["a", "b"], 1) == "b"
    assert get(["a", "b"], 2, default="none") == "none"
    assert get(["a"], 5) is None
    assert get("abc", 0, default="x") == "x"  # a string is not a sequence of properties
    assert get({"a": 1}, 0, default="x") == "x"  # an index into a mapping is a missing step
    assert get({"xs": [{"k": "v"}]}, "xs", 0, "k") == "v"
    assert get({"xs": []}, "xs", 0, "k", default=3) == 3


def test_deferred_get_passes_the_default_through_and_defers_unknowns():
    assert deferred_get({}, "missing", default=7) == 7
    assert deferred_get({"a": {"b": 2}}, "a", "b") == 2

    props = unknown_checking_proxy({"spec": {"labels": UNKNOWN_STRING_VALUE}})  # as the SDK hands it over
    deferred = deferred_get(props, "spec", "labels")
    assert isinstance(deferred, Deferred)
    with pytest.raises(UnknownValueError):
        deferred.value()

"""The API server's checks in the gate (tools/apiserver): the CRDs' CEL rules, their Kubernetes functions, unknowns."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.shared import upstream
from tools.apiserver import cel_rules
from tools.apiserver.check import check_resources, validate_object
from tools.engine.records import UNKNOWN, RecordedResource

K8S = "1.35"

NODE_CLASS: dict[str, Any] = {
    "apiVersion": "karpenter.k8s.aws/v1",
    "kind": "EC2NodeClass",
    "metadata": {"name": "gpu"},
    "spec": {
        "amiSelectorTerms": [{"alias": "bottlerocket@v1.68.0"}],
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "rootVolume": True, "ebs": {"volumeSize": "4Gi", "volumeType": "gp3"}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "100Gi", "volumeType": "gp3"}},
        ],
        "role": "KarpenterNodeRole",
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu"}}],
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "gpu"}}],
    },
}


def _cel(obj: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(f.rule, f.path, f.message) for f in validate_object(obj, K8S, upstream()) if f.level != "skipped"]


def test_a_valid_node_class_passes_every_rule():
    assert _cel(NODE_CLASS) == []


def test_two_root_volumes_break_the_crds_rule_with_its_own_message():
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["blockDeviceMappings"][1]["rootVolume"] = True
    findings = validate_object(obj, K8S, upstream())
    assert [(f.rule, f.level, f.path, f.message) for f in findings] == [
        ("crd-cel", "rejected", "spec.blockDeviceMappings", "must have only one blockDeviceMappings with rootVolume")]
    assert "so that the CRD's rule holds: self.filter(x, has(x.rootVolume)" in findings[0].fix


@pytest.mark.parametrize(("change", "path", "message"), [
    (lambda s: s["blockDeviceMappings"][1]["ebs"].update(volumeInitializationRate=200),
     "spec.blockDeviceMappings[1].ebs", "snapshotID must be set when volumeInitializationRate is set"),
    (lambda s: s.update(kubelet={"imageGCHighThresholdPercent": 50, "imageGCLowThresholdPercent": 60}),
     "spec.kubelet", "imageGCHighThresholdPercent must be greater than imageGCLowThresholdPercent"),
    (lambda s: s.update(amiSelectorTerms=[{"alias": "ubuntu@latest"}]),  # split(): a Kubernetes string function
     "spec.amiSelectorTerms[0].alias", "family is not supported, must be one of the following: 'al2', 'al2023', "
     "'bottlerocket', 'windows2019', 'windows2022', 'windows2025'"),
    (lambda s: s.update(amiSelectorTerms=[{"alias": "windows2022@v1"}]),
     "spec.amiSelectorTerms[0].alias", "windows families may only specify version 'latest'"),
    (lambda s: s.update(tags={"kubernetes.io/cluster/gpu": "owned"}),
     "spec.tags", "tag contains a restricted tag matching kubernetes.io/cluster/"),
    (lambda s: s.update(instanceProfile="gpu-profile"),
     "spec", "must specify exactly one of ['role', 'instanceProfile']"),
])
def test_each_broken_karpenter_rule_is_refused_with_its_message(change, path, message):
    obj = copy.deepcopy(NODE_CLASS)
    change(obj["spec"])
    assert _cel(obj) == [("crd-cel", path, message)]


def test_eviction_soft_without_its_grace_period_fails_as_a_runtime_error_like_the_api_server():
    # The rule reads self.evictionSoftGracePeriod unguarded: cel-go fails with "no such key", which the API
    # server reports as the rule failing (validation.go validateExpressions).
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["kubelet"] = {"evictionSoft": {"memory.available": "5%"}}
    assert _cel(obj) == [("crd-cel", "spec.kubelet", "no such key: evictionSoftGracePeriod evaluating rule: "
                                                     "evictionSoft OwnerKey does not have a matching "
                                                     "evictionSoftGracePeriod")]


def test_a_node_pool_label_in_a_restricted_domain_is_refused_by_find():
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {"template": {
        "metadata": {"labels": {"karpenter.sh/custom": "x"}},
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                 "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot"]}]}}}}
    assert _cel(pool) == [("crd-cel", "spec.template.metadata.labels", 'label domain "karpenter.sh" is restricted')]


def test_transition_rules_are_skipped_on_create_and_run_on_an_unchanged_update():
    pool = {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "p"}, "spec": {"template": {
        "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                 "requirements": []}}}}
    created = validate_object(pool, K8S, upstream())
    assert {f.level for f in created} == {"skipped"}
    assert any("nodeClassRef.kind is immutable" in f.message for f in created)
    assert validate_object(pool, K8S, upstream(), has_old=True) == []


def test_escaped_property_names_reach_the_rule():
    content: dict[str, Any] = {
        "apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotContent", "metadata": {"name": "c"},
        "spec": {"deletionPolicy": "Retain", "driver": "ebs.csi.aws.com",
                        "source": {"snapshotHandle": "snap-1"},
                        "volumeSnapshotRef": {"name": "s"}}}
    assert _cel(content) == [("crd-cel", "spec.volumeSnapshotRef",
                              "both spec.volumeSnapshotRef.name and spec.volumeSnapshotRef.namespace must be set")]
    content["spec"]["volumeSnapshotRef"]["namespace"] = "inference"  # `namespace` is `__namespace__` in CEL
    assert _cel(content) == []


def test_a_rule_calling_an_uncovered_kubernetes_function_is_an_advisory_never_a_pass():
    # ext.Lists v3 (`slice`, base.go: 1.34) is not implemented offline
    results = list(cel_rules.evaluate("a,b", {"x-kubernetes-validations": [
        {"rule": "self.split(',').slice(0, 1) == ['a']", "message": "first only"}]}, has_old=False))
    assert [(r.outcome, r.message) for r in results] == [
        ("uncovered", "it calls slice(), a Kubernetes CEL function the offline check does not implement")]


@pytest.mark.parametrize(("rule", "value", "passes"), [
    ("self.split('@')[1] == 'latest'", "al2023@latest", True),
    ("self.split('/', 2).size() == 2", "a/b/c", True),
    ("['a', 'b'].join('-') == self", "a-b", True),
    ("self.lowerAscii() == 'gpu' && self.upperAscii() == 'GPU'", "GpU", True),
    ("self.trim() == 'x'", "  x ", True),
    ("self.replace('-', '.') == 'a.b'", "a-b", True),
    ("self.substring(1, 3) == 'bc' && self.charAt(0) == 'a'", "abcd", True),
    ("self.indexOf('c') == 2 && self.lastIndexOf('a') == 3", "abca", True),
    ("self.find('[0-9]+') == '12' && self.findAll('[0-9]').size() == 3", "ab12c3", True),
    ("self.isSorted() && self.sum() == 6 && self.min() == 1 && self.max() == 3", [1, 2, 3], True),
    ("self.indexOf(2) == 1", [1, 2, 3], True),
    ("self.isSorted()", [3, 1], False),
])
def test_the_kubernetes_functions_behave_as_documented(rule, value, passes):
    results = list(cel_rules.evaluate(value, {"x-kubernetes-validations": [{"rule": rule}]}, has_old=False))
    assert (results == []) is passes, results


def test_a_function_error_fails_the_rule_without_printing():
    results = list(cel_rules.evaluate("ab", {"x-kubernetes-validations": [{"rule": "self.substring(5) == ''"}]},
                                      has_old=False))
    assert [r.outcome for r in results] == ["error"]
    assert results[0].message.startswith("substring(5, None) out of range")


def test_every_rule_of_the_pinned_crds_compiles():
    crds = __import__("tools.apiserver.schemas", fromlist=["load_crds"]).load_crds(upstream())
    rules: list[str] = []

    def walk(schema: Any) -> None:
        if isinstance(schema, dict):
            rules.extend(r["rule"] for r in schema.get("x-kubernetes-validations") or [])
            for value in schema.values():
                walk(value)
        elif isinstance(schema, list):
            for value in schema:
                walk(value)

    for versions in crds.values():
        for entry in versions.values():
            walk(entry.original)
    assert len(rules) >= 84
    for rule in rules:
        cel_rules._program(rule)


def _resource(obj: dict[str, Any], urn: str = "urn:pulumi:dev::p::kubernetes:karpenter.k8s.aws/v1:EC2NodeClass::gpu"
              ) -> RecordedResource:
    return RecordedResource(urn=urn, type="kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", name="gpu", parent=None,
                            custom=True, inputs=obj, properties=None)


def test_an_unknown_value_is_not_judged_until_it_is_known():
    obj = copy.deepcopy(NODE_CLASS)
    obj["spec"]["role"] = UNKNOWN
    obj["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] = UNKNOWN
    report = check_resources([_resource(obj)], upstream())
    assert report.rejected == ()
    obj["spec"]["role"] = ""
    report = check_resources([_resource(obj)], upstream())
    assert [(f.path, f.message) for f in report.rejected] == [("spec.role", "role cannot be empty")]
    assert report.rejected[0].urn.endswith("EC2NodeClass::gpu")


def test_without_the_upstream_cache_custom_resources_are_reported_as_not_checked(tmp_path):
    report = check_resources([_resource(copy.deepcopy(NODE_CLASS))], tmp_path / "missing")
    assert [(f.rule, f.level, f.fix) for f in report.findings] == [("not-checked", "advisory", "run `make upstream`")]


def test_a_chart_the_cache_does_not_pin_is_advisory_not_a_rejection(tmp_path):
    """Any public chart (NVIDIA's device plugin, as the EKS guide installs it) whose values.yaml is not pinned: the
    gate cannot see its keys, so it says so and blocks nothing ("Cannot see, cannot block", POLICIES.md)."""
    from tools.apiserver.helm_values import release_findings  # noqa: PLC0415

    release = {"name": "nvidia-device-plugin", "inputs": {"chart": "nvidia-device-plugin", "values": {"x": 1}}}
    [finding] = release_findings(release, tmp_path)
    assert (finding.rule, finding.level) == ("helm-values", "advisory")
    assert "its values were not checked" in finding.message

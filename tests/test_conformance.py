"""What the preview renders would be accepted by the API server and Helm (harness: tests/conformance.py)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
import yaml

from tests import conformance
from tests.conftest import real_stack_file
from tests.shared import upstream

# The chart version the pinned gpu-operator values.yaml is (tools/apiserver/chart_values.py): a release is judged
# only against the values of the version it installs.
OPERATOR = "v26.7.0"

K8S = "1.35"

DEPLOYMENT: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "inference", "namespace": "serving", "labels": {"app": "inference"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "inference"}},
        "template": {
            "metadata": {"labels": {"app": "inference"}},
            "spec": {"containers": [{"name": "triton", "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                                     "resources": {"limits": {"nvidia.com/gpu": 1}}}]},
        },
    },
}

NODE_POOL: dict[str, Any] = {
    "apiVersion": "karpenter.sh/v1",
    "kind": "NodePool",
    "metadata": {"name": "gpu-spot"},
    "spec": {
        "template": {
            "metadata": {"labels": {"gpu-platform.io/pool": "gpu-spot"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "gpu"},
                "requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                  "values": ["g6.xlarge"]}],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
            },
        },
        "limits": {"nvidia.com/gpu": 8},
    },
}


def _messages(findings: list[conformance.Finding]) -> list[str]:
    return [str(f) for f in findings]


# --------------------------------------------------------------------------------------------------
# The harness itself
# --------------------------------------------------------------------------------------------------


def test_accepts_a_valid_deployment():
    assert conformance.validate_object(DEPLOYMENT, K8S, None) == []


# An unknown field is what the client's field validation makes the API server say: pulumi-kubernetes sends
# `Warn` (tools/apiserver/check.py FIELD_VALIDATION), so the field is dropped with a warning (advisory);
# `Strict` refuses the request; `Ignore` drops it silently.
UNKNOWN_FIELD_VERDICTS = [("Warn", ["advisory"]), ("Strict", ["rejected"]), ("Ignore", [])]


@pytest.mark.parametrize(("field_validation", "levels"), UNKNOWN_FIELD_VERDICTS)
def test_an_unknown_field_in_a_builtin_object_is_judged_by_the_field_validation(field_validation, levels):
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["template"]["spec"]["containers"][0]["gpus"] = 1
    findings = conformance.validate_object(obj, K8S, None, field_validation=field_validation)
    assert [(f.rule, f.level, f.path) for f in findings] == [
        ("unknown-field", level, "spec.template.spec.containers[0]") for level in levels]
    assert all('unknown field "spec.template.spec.containers[0].gpus"' in f.message for f in findings)


def test_rejects_a_wrong_type_in_a_builtin_object():
    obj = copy.deepcopy(DEPLOYMENT)
    obj["spec"]["replicas"] = "two"
    findings = conformance.validate_object(obj, K8S, None)
    assert [(f.rule, f.path) for f in findings] == [("kubernetes-schema", "spec.replicas")]


def test_rejects_a_kind_with_no_schema():
    findings = conformance.validate_object({"apiVersion": "example.com/v1", "kind": "Gadget",
                                            "metadata": {"name": "g"}}, K8S, None)
    assert [f.rule for f in findings] == ["no-schema"]


def test_picks_the_schema_directory_of_the_stack_version():
    assert conformance.schema_version("1.35") == "1.35.0"
    with pytest.raises(LookupError, match=r"Kubernetes 1\.99"):
        conformance.schema_version("1.99")


def test_accepts_a_valid_custom_resource_against_its_upstream_crd():
    assert conformance.validate_object(NODE_POOL, K8S, upstream()) == []


@pytest.mark.parametrize(("field_validation", "levels"), UNKNOWN_FIELD_VERDICTS)
def test_an_unknown_field_in_a_custom_resource_is_pruned_and_judged_by_the_field_validation(field_validation,
                                                                                              levels):
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["template"]["spec"]["gpuDriver"] = "580"
    findings = conformance.validate_object(obj, K8S, upstream(), field_validation=field_validation)
    assert [(f.rule, f.level, f.path) for f in findings] == [
        ("unknown-field", level, "spec.template.spec") for level in levels]
    assert all('unknown field "spec.template.spec.gpuDriver"' in f.message for f in findings)


def test_rejects_a_wrong_type_in_a_custom_resource():
    obj = copy.deepcopy(NODE_POOL)
    obj["spec"]["template"]["spec"]["requirements"][0]["values"] = "g6.xlarge"
    findings = conformance.validate_object(obj, K8S, upstream())
    assert [(f.rule, f.path) for f in findings] == [("crd-schema", "spec.template.spec.requirements[0].values")]


def test_rejects_a_custom_resource_version_the_crd_does_not_serve():
    obj = copy.deepcopy(NODE_POOL)
    obj["apiVersion"] = "karpenter.sh/v1beta1"
    findings = conformance.validate_object(obj, K8S, upstream())
    assert [(f.rule, f.path) for f in findings] == [("crd-schema", "apiVersion")]


@pytest.mark.parametrize(("field_validation", "levels"), UNKNOWN_FIELD_VERDICTS)
def test_an_unknown_field_in_custom_resource_metadata_is_judged_by_the_field_validation(field_validation, levels):
    obj = copy.deepcopy(NODE_POOL)
    obj["metadata"]["label"] = {"a": "b"}
    findings = conformance.validate_object(obj, K8S, upstream(), field_validation=field_validation)
    assert [(f.rule, f.level, f.path) for f in findings] == [("unknown-field", level, "metadata") for level in levels]


def test_rejects_an_unknown_helm_values_key_and_suggests_the_nearest():
    release = {"name": "gpu-operator", "inputs": {"chart": "gpu-operator", "version": OPERATOR, "values": {
        "driver": {"enabled": True, "versoin": "580.173.02"}}}}
    findings = conformance.release_findings(release, upstream())
    assert [(f.rule, f.path) for f in findings] == [("helm-values", "driver.versoin")]
    assert "nearest: version" in findings[0].message


def test_accepts_known_helm_values_and_free_form_maps():
    release = {"name": "gpu-operator", "inputs": {"chart": "gpu-operator", "version": OPERATOR, "values": {
        "driver": {"enabled": True, "version": "580.173.02"},
        "operator": {"nodeSelector": {"gpu-platform.io/system": "true"}},
        "daemonsets": {"tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]},
    }}}
    assert conformance.release_findings(release, upstream()) == []


def test_subchart_sections_are_open_but_parent_keys_are_checked():
    release = {"name": "gpu-operator", "inputs": {"chart": "gpu-operator", "version": OPERATOR, "values": {
        "node-feature-discovery": {"master": {"nodeSelector": {"gpu-platform.io/role": "system"}}},
        "nfd": {"enabeld": True},
    }}}
    findings = conformance.release_findings(release, upstream())
    assert [f.path for f in findings] == ["nfd.enabeld"]


def test_oci_chart_references_resolve_to_the_upstream_chart_name():
    release = {"name": "karpenter", "inputs": {"chart": "oci://public.ecr.aws/karpenter/karpenter", "version": "1.14.1",
                                               "values": {"settings": {"clusterNameTypo": "x"}}}}
    findings = conformance.release_findings(release, upstream())
    assert [f.path for f in findings] == ["settings.clusterNameTypo"]


def test_a_chart_without_upstream_values_is_reported_not_passed():
    release = {"name": "mystery", "inputs": {"chart": "mystery-chart", "values": {"a": 1}}}
    findings = conformance.release_findings(release, upstream())
    assert [(f.rule, f.path) for f in findings] == [("helm-values", "chart")]


def test_a_chart_without_upstream_values_is_advisory_and_a_known_charts_unknown_key_is_rejected():
    """Cannot see, cannot block (issue 37 NEW-8): a chart with no pinned values.yaml is not a violation, and the
    advisory names what would let the check judge; a key the pinned chart lacks stays a rejection."""
    unknown = conformance.release_findings(
        {"name": "efa", "inputs": {"chart": "aws-efa-k8s-device-plugin", "values": {"tolerations": []}}}, upstream())
    assert [(f.rule, f.level) for f in unknown] == [("helm-values", "advisory")]
    assert "were not checked" in unknown[0].message
    assert unknown[0].fix == ("pin the chart's values.yaml in upstream.lock.json "
                              "(charts/aws-efa-k8s-device-plugin/values.yaml)")
    known = conformance.release_findings(
        {"name": "gpu-operator", "inputs": {"chart": "gpu-operator", "version": OPERATOR, "values": {"drvier": {}}}},
        upstream())
    assert [(f.rule, f.path, f.level) for f in known] == [("helm-values", "drvier", "rejected")]


def test_a_chart_without_upstream_values_passes_only_when_the_release_sets_no_value():
    inputs: dict[str, Any] = {"chart": "oci://public.ecr.aws/karpenter/karpenter-crd"}
    release = {"name": "karpenter-crd", "inputs": inputs}
    assert conformance.release_findings(release, upstream()) == []
    inputs["values"] = {"webhook": {"enabled": False}}
    findings = conformance.release_findings(release, upstream())
    assert [(f.rule, f.path) for f in findings] == [("helm-values", "chart")]


def test_an_empty_render_is_a_finding_not_a_pass(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "resources.json").write_text('{"resources": [{"type": "aws:eks/cluster:Cluster"}]}')
    findings = conformance.check_preview(tmp_path, K8S, upstream())
    assert [(f.rule, f.object) for f in findings] == [
        ("empty-render", str(tmp_path / "manifests")), ("empty-render", str(tmp_path / "resources.json"))]


def test_a_render_with_manifests_and_a_release_has_no_empty_render_finding(tmp_path):
    (tmp_path / "manifests").mkdir()
    (tmp_path / "manifests" / "deployment-inference.yaml").write_text(yaml.safe_dump(DEPLOYMENT))
    release = {"type": conformance.HELM_RELEASE, "name": "gpu-operator",
               "inputs": {"chart": "gpu-operator", "version": OPERATOR, "values": {"driver": {"enabled": True}}}}
    (tmp_path / "resources.json").write_text(json.dumps({"resources": [release]}))
    assert conformance.check_preview(tmp_path, K8S, upstream()) == []


# --------------------------------------------------------------------------------------------------
# Both stacks of the real program
# --------------------------------------------------------------------------------------------------


def test_stack_renders_only_conformant_objects_and_values(stack_preview):
    assert stack_preview.returncode in (0, 1), stack_preview.explain()
    stack = stack_preview.json()["stack"]
    config = yaml.safe_load(real_stack_file(stack).read_text())["config"]
    version = str(config["gpu-platform:cluster"]["kubernetesVersion"])
    findings = conformance.check_preview(stack_preview.out_dir, version, upstream())
    assert _messages(findings) == []

"""The Karpenter schema rules encoded in the pack agree with the upstream v1.14.1 CRDs (drift check).

The CRDs are read from the upstream cache (`make upstream`), crds/karpenter/ (reference data, never shipped); each test
skips with the reason when that checkout is absent.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from policies.gpu_guard.rules import imdsv2_required as imds
from policies.gpu_guard.rules import karpenter_v1_api as api
from tests.shared import upstream


def _crd(name: str) -> dict[str, Any]:
    crd: dict[str, Any] = yaml.safe_load(upstream("crds", "karpenter", name).read_text())
    return crd


def _schema(crd: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _at(node: dict[str, Any], *path: str) -> dict[str, Any]:
    for step in path:
        node = node["items"] if step == "[]" else node["properties"][step]
    return node


def _rules(node: dict[str, Any]) -> list[str]:
    return [r["rule"] for r in node.get("x-kubernetes-validations", [])]


def _quoted_list(rule: str) -> list[str]:
    match = re.search(r"in \[([^\]]*)\]", rule)
    assert match, f"no list in CEL rule {rule!r}"
    return re.findall(r"""["']([^"']+)["']""", match.group(1))


NODEPOOLS = "karpenter.sh_nodepools.yaml"
NODECLASSES = "karpenter.k8s.aws_ec2nodeclasses.yaml"


def test_both_crds_serve_only_the_versions_the_pack_accepts():
    for name, group in ((NODEPOOLS, "karpenter.sh"), (NODECLASSES, "karpenter.k8s.aws")):
        crd = _crd(name)
        assert crd["spec"]["group"] == group
        served = tuple(v["name"] for v in crd["spec"]["versions"] if v.get("served"))
        assert served == api.SERVED_VERSIONS[group]


def test_nodepool_required_fields_match_the_crd():
    spec = _at(_schema(_crd(NODEPOOLS)), "spec")
    assert tuple(spec["required"]) == api.NODEPOOL_SPEC_REQUIRED
    assert tuple(_at(spec, "template")["required"]) == api.NODEPOOL_TEMPLATE_REQUIRED
    assert tuple(_at(spec, "template", "spec")["required"]) == api.NODEPOOL_TEMPLATE_SPEC_REQUIRED
    assert tuple(_at(spec, "template", "spec", "nodeClassRef")["required"]) == api.NODE_CLASS_REF_REQUIRED
    assert tuple(_at(spec, "disruption")["required"]) == api.DISRUPTION_REQUIRED


def test_nodepool_enums_and_patterns_match_the_crd():
    spec = _at(_schema(_crd(NODEPOOLS)), "spec")
    assert tuple(_at(spec, "disruption", "consolidationPolicy")["enum"]) == api.CONSOLIDATION_POLICIES
    assert "WhenUnderutilized" not in api.CONSOLIDATION_POLICIES
    assert tuple(_at(spec, "disruption", "budgets", "[]", "reasons", "[]")["enum"]) == api.BUDGET_REASONS
    tspec = _at(spec, "template", "spec")
    assert tuple(_at(tspec, "requirements", "[]", "operator")["enum"]) == api.REQUIREMENT_OPERATORS
    assert tuple(_at(tspec, "taints", "[]", "effect")["enum"]) == api.TAINT_EFFECTS
    assert tuple(_at(tspec, "startupTaints", "[]", "effect")["enum"]) == api.TAINT_EFFECTS
    assert _at(tspec, "expireAfter")["pattern"] == api.DURATION_PATTERN
    assert _at(spec, "disruption", "consolidateAfter")["pattern"] == api.DURATION_PATTERN


def test_requirement_key_lists_match_the_crd_cel_rules():
    key_rules = _rules(_at(_schema(_crd(NODEPOOLS)), "spec", "template", "spec", "requirements", "[]", "key"))
    sh_rule = next(r for r in key_rules if 'endsWith("karpenter.sh")' in r)
    aws_rule = next(r for r in key_rules if 'endsWith("karpenter.k8s.aws")' in r)
    assert tuple(_quoted_list(sh_rule)) == api.KARPENTER_SH_ALLOWED_KEYS
    assert tuple(dict.fromkeys(_quoted_list(aws_rule))) == api.KARPENTER_AWS_KEYS
    restricted = {m for r in key_rules for m in re.findall(r'^self != "([^"]+)"$', r)}
    assert restricted == set(api.RESTRICTED_KEYS)


def test_template_label_rules_match_the_requirement_key_rules():
    labels = _at(_schema(_crd(NODEPOOLS)), "spec", "template", "metadata", "labels")
    aws_rule = next(r for r in _rules(labels) if 'endsWith("karpenter.k8s.aws")' in r)
    assert tuple(dict.fromkeys(_quoted_list(aws_rule))) == api.KARPENTER_AWS_KEYS


def test_price_capacity_type_is_not_a_key_the_crd_admits():
    assert "karpenter.sh/price-capacity-type" not in api.KARPENTER_SH_ALLOWED_KEYS
    problem = api.key_problem("karpenter.sh/price-capacity-type")
    assert problem is not None
    assert "nearest valid key: karpenter.sh/capacity-type" in problem


def test_ec2nodeclass_required_fields_and_enums_match_the_crd():
    spec = _at(_schema(_crd(NODECLASSES)), "spec")
    assert tuple(spec["required"]) == api.EC2NODECLASS_SPEC_REQUIRED
    assert tuple(_at(spec, "amiFamily")["enum"]) == api.AMI_FAMILIES
    assert tuple(_at(spec, "metadataOptions", "httpTokens")["enum"]) == api.HTTP_TOKENS
    assert tuple(_at(spec, "blockDeviceMappings", "[]", "ebs", "volumeType")["enum"]) == api.VOLUME_TYPES


def test_ami_alias_families_and_selector_fields_match_the_crd_cel_rules():
    spec = _at(_schema(_crd(NODECLASSES)), "spec")
    alias_rule = next(r for r in _rules(_at(spec, "amiSelectorTerms", "[]", "alias")) if "split('@')[0] in [" in r
                      and "latest" not in r)
    assert tuple(_quoted_list(alias_rule)) == api.AMI_ALIAS_FAMILIES
    fields_rule = _rules(_at(spec, "amiSelectorTerms"))[0]
    assert tuple(re.findall(r"has\(x\.(\w+)\)", fields_rule)) == api.AMI_SELECTOR_FIELDS


def test_imds_defaults_the_pack_relies_on_match_the_crd():
    options = _at(_schema(_crd(NODECLASSES)), "spec", "metadataOptions")
    assert options["default"]["httpTokens"] == imds.KARPENTER_DEFAULT_HTTP_TOKENS
    assert options["default"]["httpPutResponseHopLimit"] == imds.KARPENTER_DEFAULT_HOP_LIMIT
    assert _at(options, "httpPutResponseHopLimit")["maximum"] >= imds.MAX_HOP_LIMIT

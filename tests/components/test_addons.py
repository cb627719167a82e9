"""The add-ons' IAM and chart values against the upstream documents they restate."""

from __future__ import annotations

import json

import yaml

from components.addons import keda, load_balancer, monitoring
from components.addons.lbc_iam_policy import POLICY
from components.addons.pod_identity import trust_policy
from tests import conformance
from tests.shared import upstream


def test_load_balancer_controller_policy_is_upstreams_statement_for_statement():
    published = json.loads(upstream("iam", "aws-load-balancer-controller.json").read_text())
    assert published == POLICY


def test_pod_identity_roles_trust_only_eks_pod_identity_in_this_account():
    statement = json.loads(trust_policy("111122223333"))["Statement"][0]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert statement["Action"] == ["sts:AssumeRole", "sts:TagSession"]
    assert statement["Condition"] == {"StringEquals": {"aws:SourceAccount": "111122223333"}}


def _chart_values(chart: str) -> object:
    return yaml.safe_load(upstream("charts", chart, "values.yaml").read_text())


def test_add_on_chart_values_use_only_keys_the_charts_have():
    cases = {
        "aws-load-balancer-controller": load_balancer.helm_values("gpu-prod", "us-west-2", "vpc-0123"),
        "keda": keda.helm_values(),
        "kube-prometheus-stack": monitoring.helm_values(),
    }
    for chart, values in cases.items():
        subcharts = conformance._subcharts(upstream("charts", chart, "Chart.yaml"))
        assert conformance.values_findings(chart, values, _chart_values(chart), subcharts=subcharts) == [], chart


def test_a_misspelt_chart_value_is_found():
    values = {**keda.helm_values(), "nodeSelecter": {}}
    findings = conformance.values_findings("keda", values, _chart_values("keda"))
    assert [str(f) for f in findings] and "nodeSelecter" in str(findings[0])

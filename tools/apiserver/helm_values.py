"""Would Helm take a release's values: every key path of `values` exists in the chart's own values.yaml, the one of
the chart version the release installs (`chart_values`; another version's, or none: unjudged, an advisory).

Maps whose upstream value is `{}`/null, maps of free-form entries (labels, annotations, nodeSelector, env,
resources ...) and lists are open; so is the section of a subchart (a `dependencies` entry of the chart's
Chart.yaml), whose keys live in the subchart's own values.yaml, which upstream.lock.json does not pin.
A key the chart does not have is silently ignored by Helm (the template never reads it), so the setting the
user meant never takes effect: the offline check refuses it, with the nearest key the chart has.
Source: https://helm.sh/docs/chart_template_guide/values_files/ (values reach templates only where read)
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

import yaml

from tools.apiserver.chart_values import chart_values, lock_pins, pinned_versions
from tools.apiserver.findings import Finding

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
# pulumi-kubernetes's helm v4 Chart takes the same `chart`, `values` and `valueYamlFiles` and renders them with Helm
# in its provider, then registers the objects as yaml/v2 does (pulumi/pulumi-kubernetes@94977969d6
# provider/pkg/provider/helm/v4/chart.go lines 151, 193-227, 286-312): a key its chart does
# not have is ignored the same way. Its rendered objects are not built offline (the gate runs no Helm), so the
# component stays unjudged beside this check (tools/engine/coverage/unjudged.py).
HELM_V4_CHART = "kubernetes:helm.sh/v4:Chart"
HELM_RELEASES = (HELM_RELEASE, HELM_V4_CHART)

# Keys whose value is a free-form map or list in every chart we use (Kubernetes passthrough fields).
# Source: https://helm.sh/docs/chart_best_practices/values/ (maps passed to templates with toYaml)
FREE_FORM_KEYS = frozenset({
    "nodeSelector", "labels", "annotations", "podLabels", "podAnnotations", "extraLabels", "additionalLabels",
    "commonLabels", "customLabels", "env", "extraEnv", "envFrom", "tolerations", "affinity", "resources",
    "securityContext", "podSecurityContext", "containerSecurityContext", "topologySpreadConstraints",
    "extraArgs", "args", "volumes", "volumeMounts", "extraVolumes", "extraVolumeMounts", "serviceAnnotations",
    "ingressClassParams", "additionalScrapeConfigs", "extraObjects", "extraManifests",
})


def _is_open(key: str, upstream_value: Any) -> bool:
    if upstream_value is None or upstream_value == {} or key in FREE_FORM_KEYS:
        return True
    # A map keyed by label/annotation-like names ("app.kubernetes.io/name") is free-form data.
    return isinstance(upstream_value, dict) and any("/" in str(k) or "." in str(k) for k in upstream_value)


def values_findings(release: str, values: Any, upstream_values: Any, path: str = "",
                    subcharts: frozenset[str] = frozenset()) -> list[Finding]:
    """Every key path of `values` that the chart's values.yaml does not have (subchart sections are open)."""
    findings: list[Finding] = []
    if not isinstance(values, dict):
        return findings
    if not isinstance(upstream_values, dict):
        return [Finding("helm-values", release, path, f"the chart expects {type(upstream_values).__name__} "
                                                      f"here, not a map",
                        fix=f"set {path} to a {type(upstream_values).__name__} as the chart's values.yaml does")]
    for key, value in sorted(values.items()):
        here = f"{path}.{key}" if path else str(key)
        if key not in upstream_values:
            near = difflib.get_close_matches(str(key), [str(k) for k in upstream_values], n=3)
            hint = f"; nearest: {', '.join(near)}" if near else ""
            fix = (f"rename it to {(path + '.' if path else '') + near[0]}" if near
                   else "remove it, or move it under the section of the chart that sets this")
            findings.append(Finding("helm-values", release, here,
                                    f"unknown key {key!r}: the chart's values.yaml has no {here}{hint}", fix=fix))
            continue
        up = upstream_values[key]
        if _is_open(str(key), up) or (not path and key in subcharts):
            continue
        if isinstance(value, dict):
            findings += values_findings(release, value, up, here)
    return findings


def chart_name(chart: str) -> str:
    """`oci://public.ecr.aws/karpenter/karpenter` -> `karpenter`; `gpu-operator` -> `gpu-operator`."""
    return chart.rstrip("/").rsplit("/", 1)[-1]


def release_findings(release: Mapping[str, Any], upstream: Path) -> list[Finding]:
    """Check one `kubernetes:helm.sh/v3:Release`'s or helm v4 `Chart`'s inputs (chart, values) against the upstream
    chart."""
    inputs = release.get("inputs") or {}
    name = str(inputs.get("name") or release.get("name"))
    chart = chart_name(str(inputs.get("chart", "")))
    values_file = upstream / "charts" / chart / "values.yaml"
    if not inputs.get("values") and not inputs.get("valueYamlFiles"):
        return []  # a release that sets no value (the karpenter-crd chart) has no key to check
    if not values_file.is_file() and not pinned_versions(chart, lock_pins()):
        # cannot see, cannot block (/work/shared/POLICIES.md): as a CRD without a schema
        return [Finding("helm-values", name, "chart",
                        f"no upstream values.yaml for chart {chart!r} at {values_file}; its values were not checked",
                        fix=f"pin the chart's values.yaml in upstream.lock.json (charts/{chart}/values.yaml)",
                        level="advisory")]
    version = inputs.get("version")
    judged = chart_values(chart, str(version) if isinstance(version, str) else None, upstream)
    if judged.values is None:  # another version's keys would refuse what Helm installs: never judged against them
        return [Finding("helm-values", name, "version", judged.reason, fix=judged.fix, level="advisory")]
    values_file = judged.values
    findings: list[Finding] = []
    if inputs.get("valueYamlFiles"):
        findings.append(Finding("helm-values", name, "valueYamlFiles",
                                "values from files are not checked; pass them as `values`",
                                fix="pass the values as `values`"))
    upstream_values = load_values(values_file)
    subcharts = subchart_sections(values_file.parent / "Chart.yaml")
    return findings + values_findings(name, inputs.get("values") or {}, upstream_values, subcharts=subcharts)


@cache
def load_values(path: Path) -> Any:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: some values.yaml are large
    return yaml.load(path.read_text(encoding="utf-8"), Loader=loader) or {}


@cache
def subchart_sections(chart_yaml: Path) -> frozenset[str]:
    """The value sections owned by subcharts: each dependency's alias, or its name."""
    if not chart_yaml.is_file():
        return frozenset()
    chart = yaml.safe_load(chart_yaml.read_text(encoding="utf-8")) or {}
    return frozenset(str(d.get("alias") or d["name"]) for d in chart.get("dependencies") or [])

"""MonitoringStack: kube-prometheus-stack with Grafana, scraping the DCGM exporter and Triton."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.config import AddonsConfig

# Source: https://github.com/prometheus-community/helm-charts/tree/main/charts/kube-prometheus-stack
# (helm repo add prometheus-community https://prometheus-community.github.io/helm-charts)
CHART_REPOSITORY = "https://prometheus-community.github.io/helm-charts"
CHART = "kube-prometheus-stack"
NAMESPACE = "monitoring"
# With fullnameOverride the chart names the Prometheus Service `<fullname>-prometheus`, port 9090:
# what KEDA's triggers query. Source: the chart's templates/prometheus/service.yaml.
FULLNAME = "kube-prometheus-stack"
PROMETHEUS_URL = f"http://{FULLNAME}-prometheus.{NAMESPACE}.svc:9090"
# Grafana's dashboard sidecar loads every ConfigMap with this label, in every namespace.
DASHBOARD_LABEL = ("grafana_dashboard", "1")


def helm_values() -> dict[str, Any]:
    """Chart values; every key exists in the chart's values.yaml (88.5.3); grafana and kube-state-metrics
    are subcharts.

    - `serviceMonitorSelectorNilUsesHelmValues: false` (and the PodMonitor twin): Prometheus selects every
      ServiceMonitor, not only those labelled with this release, so the GPU Operator's DCGM exporter
      ServiceMonitor and each service's Triton ServiceMonitor are scraped as they are.
    - The Grafana dashboard sidecar searches every namespace for ConfigMaps labelled `grafana_dashboard: "1"`.
    - Every controller on the system nodes; the node exporter DaemonSet keeps its defaults.
    - Grafana's Prometheus data source keeps the chart's uid `prometheus` (`grafana.sidecar.datasources.uid`),
      which the services' dashboards name.
    - Grafana's admin password: the grafana subchart generates one into a Secret when none is set
      (`kubectl -n monitoring get secret kube-prometheus-stack-grafana -o jsonpath='{.data.admin-password}'`).
    Source: https://github.com/prometheus-community/helm-charts/blob/kube-prometheus-stack-88.5.3/charts/kube-prometheus-stack/values.yaml
    """
    system = labels.system_node_selector()
    return {
        "fullnameOverride": FULLNAME,
        "prometheusOperator": {"nodeSelector": dict(system)},
        "prometheus": {"prometheusSpec": {
            "nodeSelector": dict(system),
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "retention": "15d",
        }},
        "alertmanager": {"alertmanagerSpec": {"nodeSelector": dict(system)}},
        "grafana": {
            "nodeSelector": dict(system),
            "sidecar": {"dashboards": {"enabled": True, "label": DASHBOARD_LABEL[0],
                                       "labelValue": DASHBOARD_LABEL[1], "searchNamespace": "ALL"}},
        },
        # The pool label on `kube_node_labels`, so dashboards can group GPU and Triton series by pool.
        # Source: https://github.com/kubernetes/kube-state-metrics/blob/main/docs/developer/cli-arguments.md
        # (--metric-labels-allowlist); the subchart's `metricLabelsAllowlist` value passes it.
        "kube-state-metrics": {"nodeSelector": dict(system),
                               "metricLabelsAllowlist": [f"nodes=[{labels.POOL_LABEL}]"]},
    }


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
class MonitoringStack(pulumi.ComponentResource):
    """kube-prometheus-stack (Prometheus Operator, Prometheus, Grafana) in `monitoring`, on the system nodes.

    Installs the `monitoring.coreos.com/v1` CRDs the GPU Operator's DCGM ServiceMonitor and the services'
    ServiceMonitors need. Needs no AWS permissions, so no Pod Identity role.

    Requires: Cluster (Kubernetes provider, system node group).
    Conflicts: another Prometheus Operator in the cluster (two operators reconcile the same CRDs).
    Sources:
    - https://github.com/prometheus-community/helm-charts/tree/main/charts/kube-prometheus-stack
    - DCGM exporter ServiceMonitor: https://docs.nvidia.com/datacenter/cloud-native/gpu-telemetry/latest/kube-prometheus.html
    """

    release: k8s.helm.v3.Release
    prometheus_url: str = PROMETHEUS_URL

    def __init__(
        self,
        name: str,
        config: AddonsConfig,
        *,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:addons:MonitoringStack", name, None, opts)
        self.values = helm_values()
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            chart=CHART,
            version=config.kube_prometheus_stack.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            namespace=NAMESPACE,
            create_namespace=True,
            values=self.values,
            # The chart creates its CRDs, admission webhook jobs and Grafana; give it time on a new cluster.
            timeout=900,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"chartVersion": config.kube_prometheus_stack.version,
                               "prometheusUrl": PROMETHEUS_URL})
# pragma: no mutate end

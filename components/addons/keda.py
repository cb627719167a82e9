"""Keda: the KEDA operator that scales inference Deployments on Prometheus queries (and to zero)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.config import AddonsConfig

# Source: https://keda.sh/docs/2.20/deploy/#helm (helm repo add kedacore https://kedacore.github.io/charts)
CHART_REPOSITORY = "https://kedacore.github.io/charts"
CHART = "keda"
NAMESPACE = "keda"


def helm_values() -> dict[str, Any]:
    """Chart values: every KEDA pod (operator, metrics server, webhooks) on the system nodes.

    KEDA reads Prometheus inside the cluster and needs no AWS permissions, so it gets no Pod Identity role.
    Source: https://github.com/kedacore/charts/blob/v2.20.2/keda/values.yaml (top-level nodeSelector)
    """
    return {"nodeSelector": labels.system_node_selector()}


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
class Keda(pulumi.ComponentResource):
    """KEDA (Helm) in its own namespace on the system nodes: ScaledObjects become the services' HPAs.

    Requires: Cluster (Kubernetes provider, system node group); Prometheus for the services' triggers.
    Conflicts: another external-metrics API server (prometheus-adapter) registered for external.metrics.k8s.io,
    and any HPA of its own on a Deployment a ScaledObject targets.
    Sources:
    - https://keda.sh/docs/2.20/deploy/
    - https://keda.sh/docs/2.20/concepts/scaling-deployments/
    """

    release: k8s.helm.v3.Release

    def __init__(
        self,
        name: str,
        config: AddonsConfig,
        *,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:addons:Keda", name, None, opts)
        self.values = helm_values()
        self.release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            chart=CHART,
            version=config.keda.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            namespace=NAMESPACE,
            create_namespace=True,
            values=self.values,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"chartVersion": config.keda.version})
# pragma: no mutate end

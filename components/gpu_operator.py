"""GpuOperatorRelease: the NVIDIA GPU Operator Helm release, pinned drivers and optional CUDA smoke tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.config import GpuOperatorConfig, GpuPool
from components.smoke_test import CudaSmokeTest

# Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
# (helm repo add nvidia https://helm.ngc.nvidia.com/nvidia; chart nvidia/gpu-operator)
CHART_REPOSITORY = "https://helm.ngc.nvidia.com/nvidia"
CHART = "gpu-operator"
NAMESPACE = "gpu-operator"
SMOKE_TEST_NAMESPACE = "gpu-smoke-test"
# The driver container repository/image the operator pulls (`nvcr.io/nvidia/driver:<version>-<os>`).
# Source: upstream chart values.yaml (driver.repository, driver.image)
DRIVER_REPOSITORY = "nvcr.io/nvidia"
DRIVER_IMAGE = "driver"


def _gpu_toleration() -> dict[str, str]:
    return {"key": labels.GPU_TAINT.key, "operator": "Exists", "effect": labels.GPU_TAINT.effect}


def needs_per_pool_drivers(config: GpuOperatorConfig, pools: Sequence[GpuPool]) -> bool:
    """True when operator-managed pools need different drivers (version or precompiled) from the default, or run
    more than one OS release: the ClusterPolicy driver tags its one image with the OS of the first GPU node the
    operator lists, while an NVIDIADriver resolves the tag per node pool.
    Source: https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/controllers/state_manager.go#L579-L611
    (getGPUNodeOSInfo, client.Limit(1)); internal/state/nodepool.go:60-104 and driver.go:551-558 (NVIDIADriver)."""
    wanted = {(p.driver_version, p.use_precompiled) for p in pools}
    several_os = len({p.os for p in pools}) > 1
    return bool(wanted) and (several_os or wanted != {(config.driver_version, config.use_precompiled)})


def helm_values(config: GpuOperatorConfig, pools: Sequence[GpuPool]) -> dict[str, Any]:
    """The chart values; every key exists in the chart's values.yaml (node-feature-discovery keys in its subchart).

    - The operator and NFD master/GC run on the system node group (nodeSelector on its label).
    - Operand DaemonSets (driver, toolkit, device plugin, GFD, DCGM exporter, validator) tolerate the GPU
      taint; the DCGM exporter gets a ServiceMonitor only with `serviceMonitor: true` (the stack says the
      Prometheus Operator CRDs are installed): with the setting on and the CRD absent the operator logs
      "Couldn't find ServiceMonitor CRD" and does not start the GPU Feature Discovery pods, so the
      ClusterPolicy never becomes ready.
      Source: .upstream-cache/nvidia/cloud-native-docs/release-notes.rst (23.3.0, fixed issues), from
      https://github.com/NVIDIA/cloud-native-docs/blob/main/gpu-operator/release-notes.rst
    - One driver for every pool: `driver.version` pinned. Different drivers per pool: the NVIDIADriver CRD
      (`driver.nvidiaDriverCRD.enabled`, no default CR) and one NVIDIADriver object per pool.
    Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-driver-configuration.html
    Source: https://github.com/kubernetes-sigs/node-feature-discovery/blob/master/deployment/helm/node-feature-discovery/values.yaml
    """
    system = labels.system_node_selector()
    per_pool = needs_per_pool_drivers(config, pools)
    return {
        # The chart's pre-upgrade hook Job applies the new chart's CRDs (Helm never upgrades CRDs); it runs
        # on the operator's nodeSelector. Source: chart v26.7.0 values.yaml 87-89 (`operator.upgradeCRD`) and
        # templates/upgrade_crd.yaml; https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/upgrade.html
        "operator": {"nodeSelector": {"kubernetes.io/os": "linux", **system}, "upgradeCRD": True},
        "node-feature-discovery": {
            "master": {"nodeSelector": dict(system)},
            "gc": {"nodeSelector": dict(system)},
        },
        "daemonsets": {"tolerations": [_gpu_toleration()]},
        "driver": {
            "enabled": True,
            "version": config.driver_version,
            "usePrecompiled": config.use_precompiled,
            "nvidiaDriverCRD": {"enabled": per_pool, "deployDefaultCR": not per_pool},
        },
        "toolkit": {"enabled": True},
        "devicePlugin": {"enabled": True},
        "gfd": {"enabled": True},
        "dcgmExporter": {"enabled": True, "serviceMonitor": {"enabled": config.service_monitor}},
    }


def nvidia_driver_spec(pool: GpuPool) -> dict[str, Any]:
    """The NVIDIADriver spec serving exactly one pool (selected by the pool label).

    Source: upstream CRD nvidia.com_nvidiadrivers.yaml (v1alpha1; `default`, `driverType`, `image` required)
    """
    return {
        "default": False,
        "driverType": "gpu",
        "repository": DRIVER_REPOSITORY,
        "image": DRIVER_IMAGE,
        "version": pool.driver_version,
        "usePrecompiled": pool.use_precompiled,
        "nodeSelector": labels.pool_node_selector(pool.name),
        "tolerations": [_gpu_toleration()],
    }


class GpuOperatorRelease(pulumi.ComponentResource):
    """The NVIDIA GPU Operator in its own namespace, with the driver pinned per pool.

    Namespace `gpu-operator` is labelled for Pod Security admission `privileged`: the operator's driver
    and toolkit DaemonSets run privileged containers with host paths, which `baseline` and `restricted`
    reject; NVIDIA's install guide labels the namespace `pod-security.kubernetes.io/enforce=privileged` for
    clusters that use Pod Security Admission.
    Source: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
    Helm release `gpu-operator` from NVIDIA's repository at the configured chart version; values from
    `helm_values`. Where operator-managed pools need different drivers, one `NVIDIADriver` per pool.
    Pools whose image bakes a driver carry `nvidia.com/gpu.deploy.{driver,container-toolkit,device-plugin}=false`
    (components.labels.operator_exclusion_labels), so the operator leaves them alone.
    With `smokeTest`, one CUDA smoke-test Job per operator-managed pool.

    Requires: Cluster (Kubernetes provider, system node group); GPU pools for the operands to land on;
    Prometheus Operator CRDs when `serviceMonitor: true`.
    Conflicts: another NVIDIA device plugin or driver installer on the same nodes.
    Sources:
    - Chart and values: https://github.com/NVIDIA/gpu-operator/blob/main/deployments/gpu-operator/values.yaml
    - NVIDIADriver CR: https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-driver-configuration.html
    """

    namespace: pulumi.Output[str]
    release_name: pulumi.Output[str]
    values: dict[str, Any]
    nvidia_drivers: dict[str, k8s.apiextensions.CustomResource]
    smoke_tests: dict[str, CudaSmokeTest]

    def __init__(
        self,
        name: str,
        config: GpuOperatorConfig,
        pools: Sequence[GpuPool],
        *,
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:GpuOperatorRelease", name, None, opts)
        operator_pools = [p for p in pools if p.driver_source == "operator"]
        k8s_opts = pulumi.ResourceOptions(parent=self, provider=provider)
        namespace = k8s.core.v1.Namespace(
            f"{name}-namespace",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=NAMESPACE,
                labels={
                    "pod-security.kubernetes.io/enforce": "privileged",
                    "pod-security.kubernetes.io/audit": "privileged",
                    "pod-security.kubernetes.io/warn": "privileged",
                },
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.values = helm_values(config, operator_pools)
        release = k8s.helm.v3.Release(
            f"{name}-release",
            name=CHART,
            chart=CHART,
            version=config.version,
            repository_opts=k8s.helm.v3.RepositoryOptsArgs(repo=CHART_REPOSITORY),
            # The literal name, ordered by `depends_on`: in the first preview the Namespace's outputs are unknown
            # (the Kubernetes provider is unconfigured and answers `{}`: pulumi/pulumi provider_plugin.go lines
            # 1430-1440, sdk/python rpc.py lines 1534, 1618-1621), and a `namespace` read from them would make
            # the policies that read it "can't run" there (docs/gate.md, "First preview").
            namespace=NAMESPACE,
            values=self.values,
            # A `version` bump is a `helm upgrade`: the new chart's ClusterPolicy can carry fields the CRDs
            # in the cluster do not know yet (the pre-upgrade hook updates them), so Helm must not validate
            # the rendered objects against the cluster's OpenAPI schema first. NVIDIA's upgrade guide, option
            # 2 (Helm hook): `helm upgrade ... --disable-openapi-validation`; the chart says the same at
            # values.yaml 87-89 (`upgradeCRD` "requires --disable-openapi-validation").
            disable_openapi_validation=True,
            # Wait for the operator Deployment; the driver DaemonSets roll out per node afterwards.
            timeout=900,
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[namespace, *depends_on]),
        )
        self.nvidia_drivers = {}
        if needs_per_pool_drivers(config, operator_pools):
            for pool in operator_pools:
                self.nvidia_drivers[pool.name] = k8s.apiextensions.CustomResource(
                    f"{name}-driver-{pool.name}",
                    api_version="nvidia.com/v1alpha1",
                    kind="NVIDIADriver",
                    metadata=k8s.meta.v1.ObjectMetaArgs(name=f"driver-{pool.name}"),
                    spec=nvidia_driver_spec(pool),
                    opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[release]),
                )
        self.smoke_tests = {}
        if config.smoke_test and operator_pools:
            smoke_namespace = k8s.core.v1.Namespace(
                f"{name}-smoke-namespace",
                metadata=k8s.meta.v1.ObjectMetaArgs(
                    name=SMOKE_TEST_NAMESPACE,
                    labels={"pod-security.kubernetes.io/enforce": "restricted"},
                ),
                opts=k8s_opts,
            )
            for pool in operator_pools:
                self.smoke_tests[pool.name] = CudaSmokeTest(
                    f"{name}-smoke-{pool.name}",
                    pool,
                    namespace=SMOKE_TEST_NAMESPACE,  # literal plus depends_on, as the release's namespace above
                    provider=provider,
                    depends_on=[smoke_namespace, release, *self.nvidia_drivers.values()],
                    opts=pulumi.ResourceOptions(parent=self),
                )
        self.namespace = namespace.metadata.name
        self.release_name = release.name.apply(lambda n: n or CHART)
        self.register_outputs(
            {
                "namespace": self.namespace,
                "releaseName": self.release_name,
                "chartVersion": config.version,
                "nvidiaDrivers": sorted(self.nvidia_drivers),
                "smokeTests": sorted(self.smoke_tests),
            }
        )

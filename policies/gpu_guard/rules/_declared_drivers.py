"""The drivers one resource declares on its own, for the resource-level parts of the matrix policies.

Not a policy (it registers nothing). A resource policy sees one resource at a time, before its step,
with only its own inputs. Three kinds of resource name an operator-installed driver by themselves:

- a GPU node group / self-managed ASG / NodePool through the label contract (CONFIG.md section 2):
  `gpu-platform.io/driver-source: operator` (or an Ubuntu pool without the label),
  `gpu-platform.io/driver` (the version) and `gpu-platform.io/os` (the OS);
- an `NVIDIADriver`: `spec.version`, and the OS when its `spec.nodeSelector` names
  `gpu-platform.io/os`;
- the GPU Operator Helm release: `values.driver.version` (no OS: it serves every operator pool).

What needs two resources at once (which pools a driver's node selector reaches, the chart's
default driver) stays with the stack policies.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..inventory import HELM_RELEASE_TYPES, NVIDIA_DRIVER, OS_LABEL, as_str_map, get
from ..matrix import OsName
from ._matrix_common import as_os
from .gpu_nodes_tainted import gpu_reason, pool_of

OPERATOR_CHART = "gpu-operator"
# The OSes the GPU Operator builds driver containers for (CONFIG.md section 2, `gpu-platform.io/os`).
OPERATOR_OS: tuple[OsName, ...] = ("ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04")


@dataclass(frozen=True)
class DeclaredDriver:
    version: str
    os: OsName | None  # None: the resource does not say (the Helm release, an NVIDIADriver without OS selector)
    precompiled: bool
    what: str  # the resource and where it declares the driver, for messages
    operator: str | None = None  # the GPU Operator chart version, for the Helm release


def declared_drivers(resource_type: str, props: Any, urn: str, name: str) -> list[DeclaredDriver]:
    pool = pool_of(resource_type, props, urn, name)
    if pool is not None:
        if gpu_reason(pool) is None or pool.driver_source != "operator" or not pool.driver_label:
            return []
        os_name = as_os(pool.os)
        if os_name not in OPERATOR_OS:
            return []
        return [DeclaredDriver(pool.driver_label, os_name, False,
                               f"GPU pool '{name}' ({os_name}, gpu-platform.io/driver={pool.driver_label})")]
    if resource_type == NVIDIA_DRIVER:
        spec = get(props, "spec", default={})
        version = get(spec, "version")
        if version is None or version == "":
            return []
        selector = as_str_map(get(spec, "nodeSelector"))
        os_name = as_os(selector.get(OS_LABEL))
        where = f"NVIDIADriver '{get(props, 'metadata', 'name', default=name)}' spec.version {version}"
        return [DeclaredDriver(str(version), os_name if os_name in OPERATOR_OS else None,
                               get(spec, "usePrecompiled", default=False) is True, where)]
    if resource_type in HELM_RELEASE_TYPES:
        chart = str(get(props, "chart", default="")).rsplit("/", 1)[-1]
        if chart != OPERATOR_CHART or get(props, "values", "driver", "enabled", default=True) is False:
            return []
        version = get(props, "values", "driver", "version")
        if version is None or version == "":
            return []
        operator = get(props, "version")
        where = f"GPU Operator release '{name}' values driver.version {version}"
        return [DeclaredDriver(str(version), None,
                               get(props, "values", "driver", "usePrecompiled", default=False) is True, where,
                               str(operator) if operator else None)]
    return []

"""GPUs allocated through Dynamic Resource Allocation (DRA): claims of NVIDIA device classes, and the DRA driver.

Kubernetes 1.34 made DRA GA (`resource.k8s.io/v1`). A pod lists `spec.resourceClaims` (each entry names a
`ResourceClaim`, `resourceClaimName`, or a `ResourceClaimTemplate` the pod's claim is stamped from,
`resourceClaimTemplateName`, in the pod's namespace), and a container consumes one of them through
`resources.claims[].name` (optionally `.request`, one request of that claim). A claim's `spec.devices.requests[]`
asks for devices of a `DeviceClass`: in v1 and v1beta2 under `exactly` (`deviceClassName`, `count`, default 1,
`allocationMode` `ExactCount` or `All`) or as `firstAvailable` alternatives; in v1beta1 the same fields sit on the
request itself. A template holds that spec under `spec.spec`.
Sources: https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/ ;
https://github.com/kubernetes/api/blob/v0.34.0/resource/v1/types.go (DeviceRequest lines 768-810: `Exactly`,
`FirstAvailable`; ExactDeviceRequest lines 814-866: `AllocationMode` ExactCount by default, `All`, "the default count
is one"), https://github.com/kubernetes/api/blob/v0.34.0/core/v1/types.go (ResourceClaim lines 2872-2883: `Request`,
"if empty, everything from the claim"; PodResourceClaim lines 4439-4471: the claim or template "in the same
namespace as this pod").

NVIDIA's DRA Driver for GPUs (`nvidia-dra-driver-gpu` chart) publishes GPUs as devices of its DeviceClasses,
which the chart creates when `resources.gpus.enabled` (the chart's default: true): `gpu.nvidia.com` (a whole GPU),
`mig.nvidia.com` (a MIG slice of a GPU) and, from v25.12.0, `vfio.gpu.nvidia.com` (a GPU passed through to a VM).
The ComputeDomain classes (`compute-domain-*.nvidia.com`) are IMEX channels, not GPUs.
Sources: https://github.com/NVIDIA/k8s-dra-driver-gpu/blob/v25.8.1/deployments/helm/nvidia-dra-driver-gpu/
templates/deviceclass-gpu.yaml and deviceclass-mig.yaml (lines 1-11, `if .Values.resources.gpus.enabled`),
v25.12.0 templates/deviceclass-vfio-gpu.yaml, v25.8.1 values.yaml lines 56-60 (`resources.gpus.enabled: true`).

So a container whose claim requests an NVIDIA GPU class requests GPUs, as one that requests `nvidia.com/gpu` does:
`gpu.nvidia.com`/`vfio.gpu.nvidia.com` count their devices (an `All` request: at least one); MIG slices need one
GPU at least (several slices may share one GPU: NVIDIA's quickstart gpu-test4 puts four on one parent GPU), so a
container of MIG claims only counts as one GPU. A count is never more than the claim says: the lower bound.
A claim the stack does not hold (made elsewhere, or its namespace or name unknown) is not resolved: what it
requests is not known, and no verdict is built on its absence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .props import as_list, get, to_int

CLAIM_KIND = "ResourceClaim"
TEMPLATE_KIND = "ResourceClaimTemplate"
# The resource.k8s.io versions a claim can be written in (v1: Kubernetes 1.34; v1beta2: 1.33; v1beta1: 1.32).
CLAIM_TYPES: dict[str, str] = {
    f"kubernetes:resource.k8s.io/{version}:{kind}": kind
    for version in ("v1", "v1beta2", "v1beta1") for kind in (CLAIM_KIND, TEMPLATE_KIND)
}
# NVIDIA's DRA driver's GPU DeviceClasses, and whether a device is a whole GPU (see the module docstring).
WHOLE_GPU_CLASSES = frozenset({"gpu.nvidia.com", "vfio.gpu.nvidia.com"})
MIG_CLASSES = frozenset({"mig.nvidia.com"})
NVIDIA_GPU_CLASSES = WHOLE_GPU_CLASSES | MIG_CLASSES

# NVIDIA's DRA driver chart, and the value that makes it allocate GPUs (default true).
DRA_CHART = "nvidia-dra-driver-gpu"


@dataclass(frozen=True)
class DeviceRequest:
    """One request of a claim: its name, the device classes it accepts (one, or its `firstAvailable`
    alternatives) and the fewest devices it takes."""

    name: str
    classes: tuple[str, ...]
    count: int


@dataclass(frozen=True)
class Claim:
    kind: str  # CLAIM_KIND or TEMPLATE_KIND
    name: str
    namespace: str | None
    requests: tuple[DeviceRequest, ...]


@dataclass(frozen=True)
class Claimed:
    """What a container claims through DRA: GPUs (the lower bound), the NVIDIA classes named, and the claims of
    the pod it names that the stack does not hold (not resolved: unknown)."""

    gpus: int = 0
    classes: tuple[str, ...] = ()
    unresolved: tuple[str, ...] = ()


def _request(raw: Any) -> DeviceRequest:
    """One `devices.requests[]` entry, in v1/v1beta2 (`exactly`, `firstAvailable`) or v1beta1 (flat) form."""
    name = str(get(raw, "name", default=""))
    alternatives = as_list(get(raw, "firstAvailable"))
    if alternatives:
        return DeviceRequest(name, tuple(str(get(a, "deviceClassName", default="")) for a in alternatives), 1)
    exact = get(raw, "exactly")
    spec = exact if exact is not None else raw
    count = 1 if get(spec, "allocationMode") == "All" else max(to_int(get(spec, "count", default=1)) or 1, 1)
    return DeviceRequest(name, (str(get(spec, "deviceClassName", default="")),), count)


def read_claim(resource_type: str, props: Any, fallback_name: str) -> Claim | None:
    """The claim or template `props` describes, or None for any other type."""
    kind = CLAIM_TYPES.get(resource_type)
    if kind is None:
        return None
    spec = get(props, "spec", "spec") if kind == TEMPLATE_KIND else get(props, "spec")
    requests = tuple(_request(r) for r in as_list(get(spec, "devices", "requests")))
    return Claim(kind, str(get(props, "metadata", "name", default=fallback_name)), as_namespace(props), requests)


class Claims:
    """The stack's claims and templates, found by kind, name and namespace."""

    def __init__(self, claims: Iterable[Claim] = ()) -> None:
        self._by_name: dict[tuple[str, str], list[Claim]] = {}
        for claim in claims:
            self.add(claim)

    def add(self, claim: Claim) -> None:
        self._by_name.setdefault((claim.kind, claim.name), []).append(claim)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Claims) and self._by_name == other._by_name

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def find(self, kind: str, name: str, namespace: str | None) -> Claim | None:
        """The claim of that kind and name in `namespace` (a claim written without a namespace, or a pod whose
        namespace is not given, matches on the name: the object lands in the provider's default namespace)."""
        found = self._by_name.get((kind, name), [])
        return next((c for c in found if namespace is None or c.namespace in (None, namespace)), None)


def _requested(claim: Claim, request: str | None) -> list[DeviceRequest]:
    if request is None:
        return list(claim.requests)
    wanted = request.split("/", 1)[0]  # `<request>/<subrequest>` names one firstAvailable alternative
    return [r for r in claim.requests if r.name == wanted]


def claimed(pod_spec: Any, container: Any, claims: Claims, namespace: str | None) -> Claimed:
    """What `container` of `pod_spec` claims through DRA (see the module docstring for the counting)."""
    entries = {str(get(e, "name", default="")): e for e in as_list(get(pod_spec, "resourceClaims"))}
    whole, mig = 0, False
    classes: list[str] = []
    unresolved: list[str] = []
    for use in as_list(get(container, "resources", "claims")):
        name = str(get(use, "name", default=""))
        entry = entries.get(name)
        template = get(entry, "resourceClaimTemplateName") if entry is not None else None
        claim_name = get(entry, "resourceClaimName") if entry is not None else None
        found = (claims.find(TEMPLATE_KIND, str(template), namespace) if template is not None
                 else claims.find(CLAIM_KIND, str(claim_name), namespace) if claim_name is not None else None)
        if found is None:
            unresolved.append(name)
            continue
        request = get(use, "request")
        for r in _requested(found, None if request is None else str(request)):
            nvidia = [c for c in r.classes if c in NVIDIA_GPU_CLASSES]
            if not nvidia or len(nvidia) < len(r.classes):
                continue  # another vendor's class, or alternatives not all NVIDIA GPUs: not surely a GPU
            classes.extend(nvidia)
            if all(c in WHOLE_GPU_CLASSES for c in nvidia):
                whole += r.count
            else:
                mig = True
    gpus = whole or (1 if mig else 0)
    return Claimed(gpus, tuple(dict.fromkeys(classes)), tuple(unresolved))


def dra_gpus_enabled(values: Any) -> bool:
    """Whether an `nvidia-dra-driver-gpu` release allocates GPUs: `resources.gpus.enabled`, the chart's default
    true (v25.8.1 and v25.12.0 values.yaml)."""
    return get(values, "resources", "gpus", "enabled", default=True) is not False


def dra_tolerations(values: Any) -> list[Any]:
    """The tolerations of the DRA driver's kubelet plugin, the DaemonSet that publishes a node's GPUs (chart
    default: none, values.yaml `kubeletPlugin.tolerations: []` at v25.8.1)."""
    return as_list(get(values, "kubeletPlugin", "tolerations"))


def releases_of(releases: Iterable[Any], chart: str) -> list[Any]:
    return [r for r in releases if getattr(r, "chart", None) == chart]


def as_namespace(props: Mapping[str, Any] | Any) -> str | None:
    """The object's namespace; None when it sets none or it is not known yet (a Namespace's output in a first
    preview): a claim is then found by its name."""
    try:
        value = get(props, "metadata", "namespace")
    except UnknownValueError:
        return None
    return None if value is None else str(value)

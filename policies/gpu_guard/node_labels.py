"""The labels a Karpenter NodePool's nodes will carry, as the scheduler will see them (not a policy).

A workload reaches a pool through whatever labels it selects: our label contract (CONFIG.md section
2) when the platform wrote the pool, or the labels Karpenter, EKS Auto Mode and GPU Feature Discovery put
on every node they launch. This module derives a NodePool's label domain (each label the nodes carry,
mapped to the values it can take; `None` for "some value we cannot tell") from:

- the template's `metadata.labels` (fixed values);
- its `requirements` (`In` narrows to those values, `Exists`/`NotIn`/`Gt`/`Lt` leave "some value",
  `DoesNotExist` removes the label);
- the well-known labels Karpenter sets on every node it launches: `node.kubernetes.io/instance-type`,
  `topology.kubernetes.io/zone`, `topology.k8s.aws/zone-id`, `kubernetes.io/arch`, `kubernetes.io/os`,
  `karpenter.sh/capacity-type`, `karpenter.sh/nodepool`, and the provider's instance labels
  (`karpenter.k8s.aws/instance-*` for an EC2NodeClass, `eks.amazonaws.com/instance-*` and
  `eks.amazonaws.com/compute-type: auto` under EKS Auto Mode). The GPU ones (`instance-gpu-*`) exist only on
  GPU instances: present when the pool's families/types are GPU ones of the matrix (or not known).
- the instance family and GPU name derived from the instance types / families the requirements allow
  (families from the types; lower-case GPU model from the matrix, e.g. `l40s` for g6e).

Defaults Karpenter applies when a requirement is absent: `karpenter.sh/capacity-type` on-demand,
`kubernetes.io/arch` amd64, `kubernetes.io/os` linux.

Sources:
- Karpenter well-known labels and NodePool defaults: https://karpenter.sh/docs/concepts/scheduling/#well-known-labels
  and https://karpenter.sh/docs/concepts/nodepools/ (capacity-type and arch defaults)
- Karpenter's label list: kubernetes-sigs/karpenter pkg/apis/v1/labels.go (WellKnownLabels);
  aws/karpenter-provider-aws v1.14.1 pkg/apis/v1/labels.go (the karpenter.k8s.aws instance labels)
- EKS Auto Mode labels (eks.amazonaws.com/instance-family, -gpu-name, -gpu-count, compute-type: auto):
  https://docs.aws.amazon.com/eks/latest/userguide/create-node-pool.html,
  https://docs.aws.amazon.com/eks/latest/userguide/associate-workload.html
- GPU Feature Discovery's `nvidia.com/gpu.present=true` (GPU Operator, or the device-plugin chart with
  `gfd.enabled`): https://github.com/NVIDIA/k8s-device-plugin (README, "Deploying with gpu-feature-discovery")

It also reads what a self-managed node registers with from its launch template's user data (`registered_by`): the
kubelet's `--node-labels` / `--register-with-taints` flags (AL2's `/etc/eks/bootstrap.sh --kubelet-extra-args`, or
a nodeadm `NodeConfig`'s `spec.kubelet.flags`, with `spec.kubelet.config.registerWithTaints`), or Bottlerocket's
`settings.kubernetes.node-labels` / `node-taints`; base64, plain or MIME multipart (AL2023's nodeadm).
- kubelet flags: https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/ (`--node-labels`,
  `--register-with-taints` "<key>=<value>:<effect>"); KubeletConfiguration `registerWithTaints`:
  https://kubernetes.io/docs/reference/config-api/kubelet-config.v1beta1/
- nodeadm NodeConfig (`spec.kubelet.flags`, `spec.kubelet.config`) and its MIME multipart user data:
  https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/ and https://awslabs.github.io/amazon-eks-ami/nodeadm/
- Bottlerocket `settings.kubernetes.node-labels` / `node-taints` ("value:Effect", or a list of them per key):
  https://bottlerocket.dev/en/os/1.20.x/api/settings/kubernetes/
- What pulumi-eks writes (the shapes this reads): pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/userdata.ts 185-501
"""

from __future__ import annotations

import base64
import binascii
import email
import re
import tomllib
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from .props import Deferred, as_list, get
from .scheduling import AUTO_INSTANCE_FAMILY_LABEL, INSTANCE_FAMILY_LABEL, INSTANCE_TYPE_LABEL
from .views import Taint

Domain = dict[str, frozenset[str] | Deferred | None]

AUTO_MODE_NODE_CLASS = ("eks.amazonaws.com", "NodeClass")
EC2_NODE_CLASS = ("karpenter.k8s.aws", "EC2NodeClass")
AUTO_COMPUTE_TYPE_LABEL = "eks.amazonaws.com/compute-type"
GPU_PRESENT_LABEL = "nvidia.com/gpu.present"

# Labels every Karpenter node carries, with Karpenter's default value where it has one (None: some value).
_COMMON: Mapping[str, frozenset[str] | None] = {
    INSTANCE_TYPE_LABEL: None,
    "topology.kubernetes.io/zone": None,
    "topology.kubernetes.io/region": None,
    "topology.k8s.aws/zone-id": None,
    "kubernetes.io/arch": frozenset({"amd64"}),
    "kubernetes.io/os": frozenset({"linux"}),
    "karpenter.sh/capacity-type": frozenset({"on-demand"}),
}
# The provider's instance labels (suffixes), on every node; the GPU ones only on GPU instances.
_INSTANCE_SUFFIXES = ("instance-category", "instance-family", "instance-generation", "instance-size",
                      "instance-cpu", "instance-cpu-manufacturer", "instance-memory", "instance-hypervisor",
                      "instance-network-bandwidth", "instance-ebs-bandwidth",
                      "instance-encryption-in-transit-supported")
_GPU_SUFFIXES = ("instance-gpu-name", "instance-gpu-manufacturer", "instance-gpu-count", "instance-gpu-memory")
PROVIDER_DOMAINS = ("karpenter.k8s.aws", "eks.amazonaws.com")


def is_auto_mode_ref(ref: Any) -> bool:
    """Does a `nodeClassRef` name EKS Auto Mode's NodeClass?"""
    return (str(get(ref, "group", default="")), str(get(ref, "kind", default=""))) == AUTO_MODE_NODE_CLASS


def gpu_keys(domain: str) -> tuple[str, ...]:
    return tuple(f"{domain}/{s}" for s in _GPU_SUFFIXES)


def _matrix_families() -> Callable[[str], str | None]:
    """family -> lower-case GPU model of the matrix (None: not a GPU family of the matrix)."""
    from .matrix import load_matrix  # noqa: PLC0415 - the matrix loads once, on first use

    matrix = load_matrix()
    models: dict[str, str] = {}
    for name in matrix.instance_types():
        known = matrix.instance_type(name)
        if known is not None:
            models[known.family] = known.gpu_model.lower()
    return models.get


def nodepool_domain(labels: Mapping[str, str], requirements: list[Any], pool_name: str,
                    auto_mode: bool) -> tuple[Domain, tuple[str, ...]]:
    """The label domain of a NodePool's nodes and the instance types its requirements list (empty: any)."""
    provider = "eks.amazonaws.com" if auto_mode else "karpenter.k8s.aws"
    family_key = AUTO_INSTANCE_FAMILY_LABEL if auto_mode else INSTANCE_FAMILY_LABEL
    domain: Domain = dict(_COMMON)
    for suffix in _INSTANCE_SUFFIXES:
        domain[f"{provider}/{suffix}"] = None
    if auto_mode:
        domain[AUTO_COMPUTE_TYPE_LABEL] = frozenset({"auto"})
    domain.update({k: frozenset({v}) for k, v in labels.items()})
    absent: set[str] = set()
    fixed = set(labels)  # keys whose values a label or an earlier `In` already narrowed
    instance_types: tuple[str, ...] = ()
    for req in requirements:
        key = str(get(req, "key", default=""))
        operator = str(get(req, "operator", default=""))
        values = frozenset(str(v) for v in as_list(get(req, "values")))
        known = domain.get(key)
        if operator == "In":
            domain[key] = known & values if key in fixed and isinstance(known, frozenset) else values
            fixed.add(key)
            if key == INSTANCE_TYPE_LABEL:
                instance_types = tuple(t for t in (str(v) for v in as_list(get(req, "values")))
                                       if t in domain[key])  # type: ignore[operator]
        elif operator == "DoesNotExist":
            absent.add(key)
        elif operator == "NotIn" and key in fixed and isinstance(known, frozenset):
            domain[key] = known - values
        elif key not in fixed:
            domain[key] = None  # Exists, NotIn, Gt, Lt, Gte, Lte: some value we cannot tell
    if instance_types:
        families = frozenset(t.split(".", 1)[0] for t in instance_types)
        found = domain.get(family_key)
        domain[family_key] = found & families if isinstance(found, frozenset) else families
    families_now = domain.get(family_key)
    gpu_model = _matrix_families()
    gpu_present: bool | None = None  # None: cannot tell (the pool may launch GPU instances)
    if isinstance(families_now, frozenset):
        models = {m for f in families_now if (m := gpu_model(f))}
        gpu_present = bool(models)
        if models and f"{provider}/instance-gpu-name" not in domain:
            domain[f"{provider}/instance-gpu-name"] = frozenset(models)
    if gpu_present is not False:
        for key in gpu_keys(provider):
            domain.setdefault(key, None)
    domain["karpenter.sh/nodepool"] = frozenset({pool_name})
    for key in absent:
        domain.pop(key, None)
    return domain, instance_types


def definitely_gpu(domain: Mapping[str, Any], instance_types: tuple[str, ...]) -> bool:
    """Every node of the pool is a GPU node of the matrix: its instance types, else its instance families."""
    if instance_types:
        return all(_matrix_families()(t.split(".", 1)[0]) for t in instance_types)
    families: set[str] = set()
    for key in (INSTANCE_FAMILY_LABEL, AUTO_INSTANCE_FAMILY_LABEL):
        found = domain.get(key)
        if isinstance(found, frozenset):
            families |= found
    return bool(families) and all(_matrix_families()(f) for f in families)


def gfd_runs(releases: list[Any]) -> bool:
    """Does GPU Feature Discovery label the GPU nodes? The GPU Operator deploys it unless `gfd.enabled: false`; the
    device-plugin chart only with `gfd.enabled: true`.

    Source: https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/deployments/gpu-operator/values.yaml (gfd.enabled)
    and https://github.com/NVIDIA/k8s-device-plugin (chart values gfd.enabled, default false)
    """
    for release in releases:
        enabled = get(release.values, "gfd", "enabled")
        if release.chart == "gpu-operator" and enabled is not False:
            return True
        if release.chart == "nvidia-device-plugin" and enabled is True:
            return True
    return False


_KUBELET_FLAG = re.compile(r"--(node-labels|register-with-taints)[= ]([^\s'\"]+)")


def registered_by(user_data: Any) -> tuple[dict[str, str], tuple[Taint, ...]] | None:
    """The labels and taints a node registers with, read from a launch template's `userData` (module docstring).

    None when `user_data` is not a known string, or not a user data this can read (then it says nothing either way).
    """
    if not isinstance(user_data, str) or not user_data:
        return None
    try:
        text = base64.b64decode(user_data, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        text = user_data
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    parts = _parts(text)
    if parts is None:
        return None
    for content_type, body in parts:
        if content_type == "application/node.eks.aws":
            _read_node_configs(body, labels, taints)
        elif content_type.startswith("text/x-shellscript") or body.startswith("#!"):
            _read_flags(body, labels, taints)
        elif content_type == "application/toml" or "[settings" in body:
            _read_bottlerocket(body, labels, taints)
    return labels, tuple(taints)


def _parts(text: str) -> list[tuple[str, str]] | None:
    head = text.lstrip()
    if head.startswith("MIME-Version") or head.lower().startswith("content-type: multipart"):
        message = email.message_from_string(head)
        return [(part.get_content_type(), str(part.get_payload())) for part in message.walk()
                if not part.is_multipart()]
    if head.startswith("#!"):
        return [("text/x-shellscript", head)]
    if head.startswith(("apiVersion", "---")) and "NodeConfig" in head:
        return [("application/node.eks.aws", head)]
    if head.startswith("[") or "settings." in head:
        return [("application/toml", head)]
    return None


def _read_flags(text: str, labels: dict[str, str], taints: list[Taint]) -> None:
    for flag, value in _KUBELET_FLAG.findall(text):
        _read_flag(flag, value, labels, taints)


def _read_flag(flag: str, value: str, labels: dict[str, str], taints: list[Taint]) -> None:
    for item in (v for v in value.split(",") if v):
        if flag == "node-labels":
            key, _, label = item.partition("=")
            labels[key] = label
        else:
            spec, _, effect = item.rpartition(":")
            key, _, taint_value = spec.partition("=")
            taints.append(Taint(key, taint_value, effect))


def _read_node_configs(text: str, labels: dict[str, str], taints: list[Taint]) -> None:
    try:
        docs = [d for d in yaml.safe_load_all(text) if isinstance(d, Mapping)]
    except yaml.YAMLError:
        return
    for doc in docs:
        kubelet = get(doc, "spec", "kubelet", default={})
        for flag in as_list(get(kubelet, "flags")):
            for name, value in _KUBELET_FLAG.findall(str(flag)):
                _read_flag(name, value, labels, taints)
        for taint in as_list(get(kubelet, "config", "registerWithTaints")):
            taints.append(Taint(str(get(taint, "key", default="")), str(get(taint, "value", default="") or ""),
                                str(get(taint, "effect", default=""))))


def _read_bottlerocket(text: str, labels: dict[str, str], taints: list[Taint]) -> None:
    try:
        settings = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    kubernetes = get(settings, "settings", "kubernetes", default={})
    for key, value in (get(kubernetes, "node-labels", default={}) or {}).items():
        labels[str(key)] = str(value)
    for key, specs in (get(kubernetes, "node-taints", default={}) or {}).items():
        for spec in [specs] if isinstance(specs, str) else as_list(specs):
            taint_value, _, effect = str(spec).rpartition(":")
            taints.append(Taint(str(key), taint_value, effect))

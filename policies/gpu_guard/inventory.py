"""The stack as the scheduler sees it: node pools, GPU workloads, the operator and its drivers.

Policies receive raw resources (`aws:eks/nodeGroup:NodeGroup`, Karpenter `NodePool`, a Helm
`Release`, a `Deployment`...), whether a component made them or someone wrote them by hand. This
module turns them into a few plain views and answers the one question most stack policies ask:
which pools can this workload be scheduled on, and on which of their instance types (the matching
itself is `scheduling.py`; reading properties under unknowns is `props.py`; both re-exported here).

Reading a value that is unknown during preview raises `UnknownValueError`; it is deliberately not
swallowed, so the policy SDK reports "can't run policy ... during preview" (advisory), naming the
value, instead of a policy passing on a value it never saw. Two values of a node group are often
unknown in a first preview and needed by few rules: the kubelet `version` (derived from the control
plane) and a generated `nodeGroupName`. They are `Deferred`: the error is kept and raised only when
a rule reads them (`Pool.kubelet_version`, a selector on `eks.amazonaws.com/nodegroup`), so the
verdict waits only where it depends on them. The same holds for the whole stack: a cluster's `version` (unknown
in a first preview of a cluster that sets none: EKS picks its default at create) is `Deferred` in
`cluster_versions`, and a resource whose view cannot be read for an unknown value leaves its collection
(`pools`, `releases`, `workloads`, `nvidia_drivers`) unread: reading that collection raises the error that
names the value and the resource; a policy that reads none of them judges (issue 45: a cluster with no version
blocked nothing before create). Resources are linked the way the engine
can tell at preview: through URNs, parents and property dependencies (`PolicyResource.
property_dependencies`), never through ids, which are unknown until a resource exists. A launch
template is found from a node group through the `launchTemplate` property's dependencies, else by
its `name` input.

Sources:
- Taints and tolerations matching: https://kubernetes.io/docs/concepts/scheduling-eviction/taint-and-toleration/
- nodeSelector / required node affinity operators:
  https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/
- Label contract: CONFIG.md section 2 (components/labels.py stamps the same keys).
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy.proxy import UnknownValueError

from .dra import CLAIM_TYPES, Claims, as_namespace, claimed, read_claim
from .node_labels import (
    GPU_PRESENT_LABEL,
    definitely_gpu,
    gfd_runs,
    is_auto_mode_ref,
    nodepool_domain,
    registered_by,
)
from .props import Deferred, as_list, as_str_map, deferred_get, get, properties_pending, to_int
from .scheduling import (
    INSTANCE_FAMILY_LABEL,
    INSTANCE_TYPE_LABEL,
    Reach,
    expression_matches,
    reachable,
    tolerates,
)
from .views import (
    BAKED_OS,
    CUDA_LABEL,
    DRIVER_LABEL,
    DRIVER_SOURCE_LABEL,
    GPU_RESOURCE,
    GPU_TAINT_KEY,
    OS_LABEL,
    POOL_LABEL,
    Container,
    DriverSpec,
    HelmRelease,
    Pool,
    Taint,
    Workload,
)

__all__ = [
    "CUDA_LABEL",
    "DRIVER_LABEL",
    "DRIVER_SOURCE_LABEL",
    "GPU_RESOURCE",
    "GPU_TAINT_KEY",
    "INSTANCE_FAMILY_LABEL",
    "INSTANCE_TYPE_LABEL",
    "OS_LABEL",
    "POOL_LABEL",
    "Container",
    "Deferred",
    "DriverSpec",
    "HelmRelease",
    "Pending",
    "Pool",
    "Reach",
    "Taint",
    "Workload",
    "as_list",
    "as_str_map",
    "deferred_get",
    "expression_matches",
    "get",
    "reachable",
    "tolerates",
]

CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
AUTOSCALING_GROUP = "aws:autoscaling/group:Group"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
SUBNET = "aws:ec2/subnet:Subnet"
EKS_CLUSTER_TYPES = ("aws:eks/cluster:Cluster", "eks:index:Cluster")
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
EC2_NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
NVIDIA_DRIVER = "kubernetes:nvidia.com/v1alpha1:NVIDIADriver"
HELM_RELEASE_TYPES = ("kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v4:Chart", "kubernetes:helm.sh/v3:Chart")

# Workload kinds and where their pod spec sits.
POD_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "kubernetes:apps/v1:Deployment": ("spec", "template"),
    "kubernetes:apps/v1:StatefulSet": ("spec", "template"),
    "kubernetes:apps/v1:DaemonSet": ("spec", "template"),
    "kubernetes:apps/v1:ReplicaSet": ("spec", "template"),
    "kubernetes:batch/v1:Job": ("spec", "template"),
    "kubernetes:batch/v1:CronJob": ("spec", "jobTemplate", "spec", "template"),
    "kubernetes:core/v1:Pod": (),
}

# Every Kubernetes type the inventory reads: a stack policy built on it waits on a pending object of these.
INVENTORY_KUBERNETES_TYPES = (NODE_POOL, EC2_NODE_CLASS, NVIDIA_DRIVER, *HELM_RELEASE_TYPES, *POD_TEMPLATE_PATHS)

# EKS managed node group AMI types whose image ships the NVIDIA driver.
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html (amiType values)
_BAKED_AMI_TYPES = {
    "AL2023_x86_64_NVIDIA": "al2023",
    "AL2023_ARM_64_NVIDIA": "al2023",
    "BOTTLEROCKET_x86_64_NVIDIA": "bottlerocket",
    "BOTTLEROCKET_ARM_64_NVIDIA": "bottlerocket",
}

# `taints[].effect` in the EKS API and Pulumi's node group -> Kubernetes effect names.
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_Taint.html
_EKS_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}

# A node group whose launch template names a custom AMI must not set `version` (EKS rejects it), so
# the kubelet version of such a group is carried in this tag (node group `tags`, ASG tags).
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (version)
KUBELET_VERSION_TAG = "gpu-platform.io/kubelet-version"

ASG_LABEL_TAG = "k8s.io/cluster-autoscaler/node-template/label/"
ASG_TAINT_TAG = "k8s.io/cluster-autoscaler/node-template/taint/"


@dataclass(frozen=True)
class Pending:
    """A Kubernetes object present in the stack whose properties the engine does not know yet (first preview)."""

    urn: str
    type: str
    name: str


def _taints_from_k8s(items: Any) -> tuple[Taint, ...]:
    return tuple(
        Taint(str(get(t, "key", default="")), str(get(t, "value", default="")), str(get(t, "effect", default="")))
        for t in as_list(items)
    )


def _deps(resource: Any, prop: str) -> list[Any]:
    deps = getattr(resource, "property_dependencies", None) or {}
    return list(deps.get(prop) or [])


def _node_group_pool(urn: str, name: str, props: Any, templates: Mapping[str, Any], resource: Any = None) -> Pool:
    labels = as_str_map(get(props, "labels"))
    taints = tuple(
        Taint(str(get(t, "key", default="")), str(get(t, "value", default="")),
              _EKS_EFFECTS.get(str(get(t, "effect", default="")), str(get(t, "effect", default=""))))
        for t in as_list(get(props, "taints"))
    )
    instance_types = tuple(str(t) for t in as_list(get(props, "instanceTypes")))
    if not instance_types:
        template = _template_for(get(props, "launchTemplate"), templates, _deps(resource, "launchTemplate"))
        if template is not None and get(template, "instanceType"):
            instance_types = (str(get(template, "instanceType")),)
    ami_type = get(props, "amiType")
    group_name = deferred_get(props, "nodeGroupName", default=name)
    capacity = str(get(props, "capacityType", default="ON_DEMAND"))
    domain = _domain(labels, instance_types)
    domain["eks.amazonaws.com/nodegroup"] = group_name if isinstance(group_name, Deferred) else frozenset(
        {str(group_name)})
    domain["eks.amazonaws.com/capacityType"] = frozenset({capacity})
    return Pool(
        urn=urn, name=labels.get(POOL_LABEL, name), kind="managed-node-group", labels=labels, label_domain=domain,
        taints=taints, instance_types=instance_types, min_size=to_int(get(props, "scalingConfig", "minSize")),
        ami_type=str(ami_type) if ami_type else None, desired_size=_known_int(props, "scalingConfig", "desiredSize"),
        kubelet=_kubelet(props, name), image_version=_opt_str(get(props, "releaseVersion")),
        os_hint=_BAKED_AMI_TYPES.get(str(ami_type)) if ami_type else None, props=props, resource=resource,
    )


def _known_int(props: Any, *path: str) -> int | None:
    """An integer input, or None where it is absent or not known yet (only scaled-workload-wakes-nodes reads it)."""
    value = deferred_get(props, *path)
    return None if isinstance(value, Deferred) else to_int(value)


def _kubelet(props: Any, name: str = "") -> str | Deferred | None:
    version = deferred_get(props, "version")
    if isinstance(version, Deferred):
        return Deferred(_unknown_in(version.error, NODE_GROUP, name, _KUBELET_HINT))
    return _opt_str(version) or _opt_str(get(props, "tags", KUBELET_VERSION_TAG))


def _asg_pool(urn: str, name: str, props: Any, templates: Mapping[str, Any], resource: Any = None) -> Pool:
    labels: dict[str, str] = {}
    taints: list[Taint] = []
    kubelet: str | None = None
    for tag in as_list(get(props, "tags")):
        key, value = str(get(tag, "key", default="")), str(get(tag, "value", default=""))
        if key == KUBELET_VERSION_TAG:
            kubelet = value or None
        elif key.startswith(ASG_LABEL_TAG):
            labels[key[len(ASG_LABEL_TAG):]] = value
        elif key.startswith(ASG_TAINT_TAG):
            taint_value, _, effect = value.partition(":")
            taints.append(Taint(key[len(ASG_TAINT_TAG):], taint_value, effect))
    instance_types: list[str] = []
    template = _template_for(get(props, "launchTemplate"), templates, _deps(resource, "launchTemplate"))
    if template is not None and get(template, "instanceType"):
        instance_types.append(str(get(template, "instanceType")))
    # What the kubelet registers the nodes with, from the template's user data when it is known (node_labels.py);
    # the autoscaler's tags above are what it assumes for a group scaled to zero.
    registered = registered_by(deferred_get(template, "userData")) if template is not None else None
    if registered is not None:
        labels.update(registered[0])
        taints.extend(t for t in registered[1] if t not in taints)
    for override in as_list(get(props, "mixedInstancesPolicy", "launchTemplate", "overrides")):
        if get(override, "instanceType"):
            instance_types.append(str(get(override, "instanceType")))
    types = tuple(dict.fromkeys(instance_types))
    return Pool(
        urn=urn, name=labels.get(POOL_LABEL, name), kind="self-managed", labels=labels,
        label_domain=_domain(labels, types), taints=tuple(taints), instance_types=types,
        min_size=to_int(get(props, "minSize")), kubelet=kubelet, props=props, resource=resource,
        # An Auto Scaling group created without desiredCapacity starts at minSize
        # (https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_CreateAutoScalingGroup.html, DesiredCapacity).
        desired_size=_known_int(props, "desiredCapacity") if deferred_get(props, "desiredCapacity") is not None
        else _known_int(props, "minSize"),
    )


def _nodepool_pool(urn: str, name: str, props: Any, node_classes: Mapping[str, Any]) -> Pool:
    template = get(props, "spec", "template", default={})
    labels = as_str_map(get(template, "metadata", "labels"))
    taints = _taints_from_k8s(get(template, "spec", "taints"))
    pool_name = str(get(props, "metadata", "name", default=name))
    ref = get(template, "spec", "nodeClassRef")
    auto_mode = is_auto_mode_ref(ref)
    domain, instance_types = nodepool_domain(labels, as_list(get(template, "spec", "requirements")), pool_name,
                                             auto_mode)
    class_name = _opt_str(get(ref, "name"))
    os_hint = image_version = branch_pin = None
    node_class = None if auto_mode else node_classes.get(class_name or "")
    if node_class is not None:
        os_hint = _node_class_os(node_class)
        image_version = _node_class_image_version(node_class)
        branch_pin = _node_class_branch_pin(node_class) if os_hint == "bottlerocket" else None
    return Pool(
        urn=urn, name=labels.get(POOL_LABEL, pool_name), kind="karpenter-nodepool", labels=labels,
        label_domain=domain, taints=taints, instance_types=instance_types, min_size=0,
        node_class=class_name, os_hint=os_hint, image_version=image_version, auto_mode=auto_mode,
        driver_branch_pin=branch_pin, props=props,
    )


def _node_class_branch_pin(node_class: Any) -> str | None:
    """`settings.kernel.drivers.nvidia.branch` of a Bottlerocket EC2NodeClass's userData (TOML), or None.

    Karpenter keeps every `settings.*` table of a Bottlerocket userData in the user data it generates
    (aws/karpenter-provider-aws@v1.14.1 pkg/providers/amifamily/bootstrap/bottlerocketsettings.go:38-41), and
    Bottlerocket's ghostdog activates that driver tree at boot (bottlerocket-core-kit PR #1041). A userData that
    is not TOML, or not known yet, pins nothing here (Karpenter refuses invalid TOML itself).
    """
    text = get(node_class, "spec", "userData")
    if not isinstance(text, str):
        return None
    try:
        settings = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    branch = get(settings, "settings", "kernel", "drivers", "nvidia", "branch")
    return branch.strip().lower() if isinstance(branch, str) and branch.strip().lower() in ("lts", "pb") else None


def _node_class_image_version(node_class: Any) -> str | None:
    """The release an EC2NodeClass alias pins (`al2023@v20260917` -> `v20260917`); None for `@latest`."""
    for term in as_list(get(node_class, "spec", "amiSelectorTerms")):
        family, _, version = str(get(term, "alias", default="")).partition("@")
        if family.lower() in BAKED_OS and version and version.lower() != "latest":
            return version
    return None


def _node_class_os(node_class: Any) -> str | None:
    for term in as_list(get(node_class, "spec", "amiSelectorTerms")):
        alias = str(get(term, "alias", default=""))
        family = alias.split("@", 1)[0].lower()
        if family in BAKED_OS:
            return family
    family = str(get(node_class, "spec", "amiFamily", default="")).lower()
    return family if family in BAKED_OS else None


def _domain(labels: Mapping[str, str], instance_types: Sequence[str]) -> dict[str, frozenset[str] | Deferred | None]:
    domain: dict[str, frozenset[str] | Deferred | None] = {k: frozenset({v}) for k, v in labels.items()}
    if instance_types:
        domain[INSTANCE_TYPE_LABEL] = frozenset(instance_types)
        domain[INSTANCE_FAMILY_LABEL] = frozenset(t.split(".", 1)[0] for t in instance_types)
    domain.setdefault("kubernetes.io/os", frozenset({"linux"}))
    return domain


def _template_for(ref: Any, templates: Mapping[str, Any], deps: Iterable[Any] = ()) -> Any:
    """The launch template a node group / ASG uses: its `launchTemplate` dependency (by URN), else by name.

    Never by id: a template's id is unknown until it exists, so an id link would make every preview wait.
    """
    for dep in deps:
        if getattr(dep, "resource_type", None) == LAUNCH_TEMPLATE:
            return dep.props
    if not isinstance(ref, Mapping) or "name" not in ref:
        return None
    value = ref["name"]
    return templates.get(str(value)) if value is not None else None


def _opt_str(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _workload(urn: str, name: str, rtype: str, props: Any, claims: Claims | None = None) -> Workload | None:
    path = POD_TEMPLATE_PATHS.get(rtype)
    if path is None:
        return None
    template = get(props, *path) if path else props
    if not isinstance(template, Mapping):
        return None
    spec = get(template, "spec", default={})
    # DRA: a pod's claims live in its namespace (read only when it names claims: most workloads name none).
    namespace = as_namespace(props) if get(spec, "resourceClaims") is not None else None
    containers = []
    for c in as_list(get(spec, "containers")) + as_list(get(spec, "initContainers")):
        gpus = get(c, "resources", "limits", GPU_RESOURCE)
        if gpus is None:
            gpus = get(c, "resources", "requests", GPU_RESOURCE)
        dra = claimed(spec, c, claims or Claims(), namespace)
        containers.append(Container(str(get(c, "name", default="")), str(get(c, "image", default="")),
                                    (to_int(gpus) or 0) + dra.gpus, dra.classes, dra.unresolved))
    terms = get(spec, "affinity", "nodeAffinity", "requiredDuringSchedulingIgnoredDuringExecution",
                "nodeSelectorTerms")
    return Workload(
        urn=urn,
        name=str(get(props, "metadata", "name", default=name)),
        kind=rtype.rsplit(":", 1)[-1],
        labels=as_str_map(get(template, "metadata", "labels")),
        node_selector=as_str_map(get(spec, "nodeSelector")),
        required_terms=tuple(as_list(terms)) if terms is not None else None,
        tolerations=tuple(as_list(get(spec, "tolerations"))),
        containers=tuple(containers),
    )


@dataclass
class Inventory:
    """Everything the stack policies correlate, read once from the stack's resources.

    A collection one of whose resources holds an unknown value a view needs is unread (`unread`): reading it
    raises that value's `UnknownValueError`, so only a policy that reads it waits ("can't run ... during
    preview"), and the error names the value and its resource.
    """

    _pools: list[Pool] = field(default_factory=list)
    _workloads: list[Workload] = field(default_factory=list)
    _releases: list[HelmRelease] = field(default_factory=list)
    _nvidia_drivers: list[DriverSpec] = field(default_factory=list)
    # (urn, version): a Deferred while the engine does not know the cluster's version (it sets none: EKS's default).
    cluster_versions: list[tuple[str, str | Deferred]] = field(default_factory=list)
    node_classes: dict[str, Any] = field(default_factory=dict)
    launch_templates: dict[str, Any] = field(default_factory=dict)
    pending: list[Pending] = field(default_factory=list)  # `props.properties_pending`: present, not yet known
    claims: Claims = field(default_factory=Claims)  # DRA ResourceClaims and ResourceClaimTemplates (dra.py)
    unread: dict[str, Exception] = field(default_factory=dict)  # collection -> the first unknown it met

    def _read(self, collection: str, items: list[Any]) -> list[Any]:
        error = self.unread.get(collection)
        if error is not None:
            raise error
        return items

    @property
    def pools(self) -> list[Pool]:
        return self._read("pools", self._pools)

    @property
    def workloads(self) -> list[Workload]:
        return self._read("workloads", self._workloads)

    @property
    def releases(self) -> list[HelmRelease]:
        return self._read("releases", self._releases)

    @property
    def nvidia_drivers(self) -> list[DriverSpec]:
        return self._read("nvidia_drivers", self._nvidia_drivers)

    def pending_of(self, types: Iterable[str]) -> list[Pending]:
        """The pending objects of these types: a verdict that reads them waits instead of judging them absent."""
        wanted = tuple(types)
        return [p for p in self.pending if p.type in wanted]

    @property
    def operator(self) -> HelmRelease | None:
        return next((r for r in self.releases if r.chart == "gpu-operator"), None)

    @property
    def control_plane_version(self) -> str | None:
        """The first cluster's version; reading it waits (raises) while the engine does not know it."""
        if not self.cluster_versions:
            return None
        version = self.cluster_versions[0][1]
        return version.value() if isinstance(version, Deferred) else version

    def gpu_pools(self, gpu_instance: Any) -> list[Pool]:
        return [p for p in self.pools if p.is_gpu(gpu_instance)]

    def reach(self, workload: Workload, pools: Iterable[Pool]) -> list[Reach]:
        return [r for r in (reachable(workload, p) for p in pools) if r is not None]

    def operator_drivers(self, default_version: str | None = None) -> list[DriverSpec]:
        """Drivers the GPU Operator installs: NVIDIADriver objects, or the ClusterPolicy default.

        `default_version`: the driver the operator release installs when the values pin none (the
        chart's `driver.version` default, from the matrix); without it such a release counts no driver.
        """
        release = self.operator
        if release is None:
            return []
        values = release.values
        if get(values, "driver", "enabled", default=True) is False:
            return list(self.nvidia_drivers)
        crd_enabled = get(values, "driver", "nvidiaDriverCRD", "enabled", default=False) is True
        drivers = list(self.nvidia_drivers) if crd_enabled else []
        version = get(values, "driver", "version")
        name = "default"
        if version is None:
            version, name = default_version, "chart-default"
        if version is not None and (not crd_enabled
                                    or get(values, "driver", "nvidiaDriverCRD", "deployDefaultCR", default=True)):
            selector = as_str_map(get(values, "driver", "nvidiaDriverCRD", "nodeSelector")) if crd_enabled else {}
            drivers.append(DriverSpec(release.urn, name, str(version), selector,
                                      get(values, "driver", "usePrecompiled", default=False) is True,
                                      "helm-values"))
        return drivers

    def drivers_for(self, pool: Pool, default_version: str | None = None) -> list[DriverSpec]:
        """Operator drivers whose node selector matches the pool's nodes (operator-managed pools only)."""
        return [
            d for d in self.operator_drivers(default_version)
            if all(expression_matches(pool.label_domain, {"key": k, "operator": "In", "values": [v]})
                   for k, v in d.node_selector.items())
        ]


_LAST_CALL: list[tuple[int, Inventory]] = []  # the inventory of the latest numbered AnalyzeStack call
_LAST_CALL_LOCK = threading.Lock()


def build_inventory(resources: Iterable[Any]) -> Inventory:
    """Read `PolicyResource`s (anything with `resource_type`, `props`, `urn`, `name`) into an Inventory.

    The stack of one `AnalyzeStack` call, as the pack's servicer numbers it (`servicer.StackResources.call`),
    is read once for every stack policy of that call: no rule changes an Inventory it is given. A build that
    ends in an exception (an unknown value) is not kept, so each policy meets it again.
    """
    call = getattr(resources, "call", 0)
    if call:
        with _LAST_CALL_LOCK:
            if _LAST_CALL and _LAST_CALL[0][0] == call:
                return _LAST_CALL[0][1]
        inv = _build_inventory(resources)
        with _LAST_CALL_LOCK:
            _LAST_CALL[:] = [(call, inv)]
        return inv
    return _build_inventory(resources)


def _unknown_in(error: Exception, rtype: str, name: str, hint: str = "") -> Exception:
    """`error`, its message naming the resource whose value it is (and what would let the pack judge)."""
    if not isinstance(error, UnknownValueError):
        return error
    named = UnknownValueError(error.unknown_type_sentinel, list(error.props))
    named.message = f"{error.message} ({rtype} {name!r}{': ' + hint if hint else ''})"
    return named


# The collection a resource type's view belongs to (`Inventory.unread`).
_COLLECTIONS = {NODE_GROUP: "pools", AUTOSCALING_GROUP: "pools", NODE_POOL: "pools", NVIDIA_DRIVER: "nvidia_drivers",
                **dict.fromkeys(HELM_RELEASE_TYPES, "releases"), **dict.fromkeys(POD_TEMPLATE_PATHS, "workloads")}
_KUBELET_HINT = "a node group that sets no `version` takes its cluster's when EKS creates it"
_VERSION_HINT = ("a cluster that sets no `version` gets the EKS default at create, which a preview does not know; "
                 "pin `version` to have it judged now")


def _build_inventory(resources: Iterable[Any]) -> Inventory:
    items = list(resources)
    inv = Inventory()
    for r in items:
        try:
            if r.resource_type == LAUNCH_TEMPLATE:
                inv.launch_templates[r.name] = r.props
                value = get(r.props, "name")
                if value is not None:
                    inv.launch_templates[str(value)] = r.props
            elif r.resource_type == EC2_NODE_CLASS:
                inv.node_classes[str(get(r.props, "metadata", "name", default=r.name))] = r.props
            elif r.resource_type in CLAIM_TYPES and not properties_pending(r.resource_type, r.props):
                claim = read_claim(r.resource_type, r.props, r.name)
                if claim is not None:
                    inv.claims.add(claim)
        except UnknownValueError as err:
            if r.resource_type in CLAIM_TYPES:  # what the GPU workloads claim is not known: they wait
                inv.unread.setdefault("workloads", _unknown_in(err, r.resource_type, r.name))
                continue
            # A template or node class whose name is not known: found through dependencies, or never, so the pools
            # that might use it wait rather than be judged without it.
            inv.unread.setdefault("pools", _unknown_in(err, r.resource_type, r.name))
    for r in items:
        rtype, props = r.resource_type, r.props
        if properties_pending(rtype, props):
            inv.pending.append(Pending(r.urn, rtype, r.name))
            continue
        try:
            _read_resource(inv, r)
        except UnknownValueError as err:
            inv.unread.setdefault(_COLLECTIONS.get(rtype, "workloads"), _unknown_in(err, rtype, r.name))
    gfd: bool | Deferred
    try:
        gfd = gfd_runs(inv._releases)
    except UnknownValueError as err:  # a release's values not known: whether GFD labels the GPU nodes waits
        gfd = Deferred(err)
    if gfd:  # GPU Feature Discovery labels every GPU node nvidia.com/gpu.present=true
        for pool in inv._pools:
            if definitely_gpu(pool.label_domain, pool.instance_types):
                pool.label_domain.setdefault(GPU_PRESENT_LABEL, gfd if isinstance(gfd, Deferred) else
                                             frozenset({"true"}))
    return inv


def _read_resource(inv: Inventory, r: Any) -> None:
    rtype, props = r.resource_type, r.props
    if rtype == NODE_GROUP:
        inv._pools.append(_node_group_pool(r.urn, r.name, props, inv.launch_templates, r))
    elif rtype == AUTOSCALING_GROUP:
        inv._pools.append(_asg_pool(r.urn, r.name, props, inv.launch_templates, r))
    elif rtype == NODE_POOL:
        inv._pools.append(_nodepool_pool(r.urn, r.name, props, inv.node_classes))
    elif rtype in EKS_CLUSTER_TYPES:
        version = deferred_get(props, "version")
        if isinstance(version, Deferred):
            inv.cluster_versions.append((r.urn, Deferred(_unknown_in(version.error, rtype, r.name, _VERSION_HINT))))
        elif version is not None:
            inv.cluster_versions.append((r.urn, str(version)))
    elif rtype in HELM_RELEASE_TYPES:
        inv._releases.append(HelmRelease(r.urn, r.name, str(get(props, "chart", default="")).rsplit("/", 1)[-1],
                                         _opt_str(get(props, "version")), _opt_str(get(props, "namespace")),
                                         get(props, "values", default={})))
    elif rtype == NVIDIA_DRIVER:
        spec = get(props, "spec", default={})
        inv._nvidia_drivers.append(DriverSpec(
            r.urn, str(get(props, "metadata", "name", default=r.name)), str(get(spec, "version", default="")),
            as_str_map(get(spec, "nodeSelector")), get(spec, "usePrecompiled", default=False) is True,
            "nvidiadriver"))
    else:
        workload = _workload(r.urn, r.name, rtype, props, inv.claims)
        if workload is not None:
            inv._workloads.append(workload)

"""The components of the package: typed Args in, the repository's own components inside, typed outputs out.

Each class here is a thin shell registered as `gpu-platform:index:<Name>`: it validates its Args through the
stack checks (provider/validate.py), resolves the GPU pools as the program does (`StackConfig.gpu_pools`), and
creates the in-program component of the same name as its only component child, so the Kubernetes and AWS
resources a consumer gets are the ones `__main__.py` creates, with the same names.

What the program takes from its own Cluster and KarpenterController (endpoint, CA, subnets, instance profile,
the Kubernetes provider) a consumer passes as inputs; what the program orders by object references (the system
node group before GPU node groups, Karpenter's CRDs before its pools) a consumer orders with `dependsOn` on the
component, which the shell hands to the inner component as those references.
"""


import types
from collections.abc import Mapping, Sequence
from typing import Any, NotRequired, TypedDict, cast

import pulumi
import pulumi_aws as aws
import pulumi_kubernetes as k8s

from components.cluster import Cluster
from components.config import (
    ClusterConfig,
    ConfigError,
    GpuNodeGroupConfig,
    GpuOperatorConfig,
    InferenceServiceConfig,
    IngressConfig,
    KarpenterPoolConfig,
    ModelVolumeConfig,
    SystemNodeGroupConfig,
)
from components.gpu_node_group import GpuManagedNodeGroup as _GpuManagedNodeGroup
from components.gpu_operator import GpuOperatorRelease as _GpuOperatorRelease
from components.inference.service import InferenceService as _InferenceService
from components.inference.serving import service_cuda
from components.karpenter import KarpenterController
from components.karpenter import KarpenterGpuPool as _KarpenterGpuPool
from components.system_node_group import SystemNodeGroup as _SystemNodeGroup
from provider.args import INPUT_FIELDS, args_type
from provider.validate import resource_label, validate

PACKAGE = "gpu-platform"

ClusterArgs = args_type(ClusterConfig)
SystemNodeGroupArgsConfig = args_type(SystemNodeGroupConfig)
GpuOperatorArgsConfig = args_type(GpuOperatorConfig)
GpuNodeGroupArgsConfig = args_type(GpuNodeGroupConfig)
KarpenterPoolArgsConfig = args_type(KarpenterPoolConfig)
InferenceServiceArgsConfig = args_type(InferenceServiceConfig)


class ClusterAccess(TypedDict):
    """How the components reach an existing EKS cluster (the outputs of its cluster resource)."""

    endpoint: pulumi.Input[str]
    """The cluster's API server endpoint (https://...)."""
    certificate_authority_data: pulumi.Input[str]
    """The cluster's certificate authority, base64, as EKS returns it."""
    service_ipv4_cidr: pulumi.Input[str]
    """The cluster's Kubernetes service range (kubernetesNetworkConfig.serviceIpv4Cidr)."""
    private_subnet_ids: pulumi.Input[list[str]]
    """Private subnets where nodes run, one per Availability Zone."""
    cluster_security_group_id: pulumi.Input[str]
    """The cluster security group EKS created (vpcConfig.clusterSecurityGroupId)."""
    node_role_arn: NotRequired[pulumi.Input[str]]
    """The node IAM role of managed node groups (required by GpuManagedNodeGroup)."""


def _view(cluster: ClusterConfig, access: dict[str, Any], provider: k8s.Provider | None,
          system_node_group: pulumi.Resource | None) -> Cluster:
    """What the in-program components read from a Cluster, from the inputs (they read these attributes only)."""
    return cast(Cluster, types.SimpleNamespace(
        eks_name=cluster.name, cluster_name=pulumi.Output.from_input(cluster.name),
        endpoint=pulumi.Output.from_input(access["endpoint"]),
        certificate_authority_data=pulumi.Output.from_input(access["certificate_authority_data"]),
        service_ipv4_cidr=pulumi.Output.from_input(access["service_ipv4_cidr"]),
        private_subnet_ids=pulumi.Output.from_input(access["private_subnet_ids"]),
        cluster_security_group_id=pulumi.Output.from_input(access["cluster_security_group_id"]),
        node_role_arn=pulumi.Output.from_input(access.get("node_role_arn") or ""),
        provider=provider, system_node_group=system_node_group))


def _dependencies(opts: pulumi.ResourceOptions | None) -> list[pulumi.Resource]:
    depends = opts.depends_on if opts is not None else None
    if depends is None:
        return []
    items = depends if isinstance(depends, Sequence) else [depends]
    return [d for d in items if isinstance(d, pulumi.Resource)]


# The resource-reference inputs that order a component's children, by component: input -> (the resource type
# the schema names, what it stands for). They are typed references (as pulumi-eks takes `cluster`), not
# positions in dependsOn: what Construct receives as dependencies is dependsOn plus every input's
# dependencies (the Node.js SDK merges them: pulumi v3.259.0 sdk/nodejs/runtime/resource.ts:1060-1076), kept by
# the engine in a set and handed on as `dependencies.ToSlice()`, in no fixed order
# (pkg/resource/deploy/source_eval.go:2310-2317, 2570, 2754-2756).
REFERENCES: dict[str, dict[str, tuple[type[pulumi.Resource], str]]] = {
    "GpuManagedNodeGroup": {
        "system_nodes": (aws.eks.NodeGroup, "the system node group's EKS node group (SystemNodeGroup.nodeGroup)")},
    "KarpenterGpuPool": {
        "karpenter_release": (k8s.helm.v3.Release, "Karpenter's controller Helm release"),
        "karpenter_crd_release": (k8s.helm.v3.Release, "the karpenter-crd Helm release")},
}


def reference(value: Any) -> pulumi.Resource | None:
    """A resource-reference input as something `depends_on` waits for; None when it references nothing.

    The Python SDK hands a reference over as the resource when its package's module is registered at a
    compatible version (pulumi 3.272.0 pulumi/runtime/rpc.py:999-1040, `check_version`: same major, minor and
    patch not newer than the plugin's), and otherwise as its id wrapped in an Output that depends on the
    referenced URN (pulumi/provider/server.py `_select_value`). Either way the children wait for that resource.
    """
    if isinstance(value, pulumi.Resource):
        return value
    if isinstance(value, pulumi.Output) and _has_dependencies(value):
        # An Output in depends_on contributes its resources (pulumi/runtime/_depends_on.py:24-45); its value
        # (the id string) must not, so it is mapped to None.
        return cast(pulumi.Resource, value.apply(lambda _: None))
    return None


def _has_dependencies(value: pulumi.Output[Any]) -> bool:
    data = value._data  # the SDK's resolved state: Construct's inputs arrive settled (provider/server.py)
    return data.done() and bool(data.result().resources)


def wrong_reference(component: str, name: str, args: dict[str, Any]) -> tuple[str, str] | None:
    """(input, one-line refusal) of a resource-reference input that references another type of resource."""
    for key, (kind, what) in REFERENCES.get(component, {}).items():
        value = args.get(key)
        if value is None:
            continue
        schema_key = _camel(key)
        if isinstance(value, pulumi.Resource) and not isinstance(value, kind):
            return schema_key, (f"{resource_label(component, name)}: {schema_key} = {_token(type(value))}: not "
                                f"{what}; fix: set {schema_key} to {what} (a {_token(kind)})")
        if reference(value) is None:
            return schema_key, (f"{resource_label(component, name)}: {schema_key} = {value!r}: not a resource; fix: "
                                f"set {schema_key} to {what} (a resource, not its name or id)")
    return None


def _token(kind: type) -> str:
    """The resource type token of a generated resource class (`kubernetes:helm.sh/v3:Release`)."""
    return str(getattr(kind, "pulumi_type", None) or kind.__name__)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def missing_input(component: str, name: str, args: dict[str, Any]) -> tuple[str, str] | None:
    """(input path, one-line refusal) of an input a component needs beyond its schema's required ones."""
    access = args.get("access") or {}
    if component == "GpuManagedNodeGroup" and not access.get("node_role_arn"):
        return "access.nodeRoleArn", (f"{resource_label(component, name)}: access.nodeRoleArn = (missing): a managed "
                                      "node group needs its node IAM role; fix: set access.nodeRoleArn to the role "
                                      "the cluster's node groups use (it needs an EC2_LINUX access entry)")
    return None


def _reference(component: str, name: str, args: Any, key: str) -> pulumi.Resource:
    refusal = wrong_reference(component, name, dict(args))
    if refusal is not None:
        raise ConfigError(refusal[1])
    found = reference(args[key])
    assert found is not None  # wrong_reference refused a value that references nothing
    return found


def _provider(name: str, kubeconfig: pulumi.Input[str], parent: pulumi.Resource) -> k8s.Provider:
    return k8s.Provider(f"{name}-kubernetes", kubeconfig=kubeconfig, opts=pulumi.ResourceOptions(parent=parent))


class SystemNodeGroupArgs(TypedDict):
    cluster: ClusterArgs  # type: ignore[valid-type]
    """The cluster (gpu-platform:cluster): name and Kubernetes version."""
    system_node_group: NotRequired[SystemNodeGroupArgsConfig]  # type: ignore[valid-type]
    """The node group (gpu-platform:systemNodeGroup); every key has a default."""
    node_role_arn: pulumi.Input[str]
    """The node IAM role."""
    subnet_ids: pulumi.Input[list[str]]
    """Private subnets, one per Availability Zone."""


class SystemNodeGroup(pulumi.ComponentResource):
    """The untainted managed node group every controller and CoreDNS run on (components/system_node_group.py)."""

    node_group: pulumi.Output[aws.eks.NodeGroup]
    """The EKS node group (GpuManagedNodeGroup's systemNodes)."""
    node_group_name: pulumi.Output[str]
    """The EKS node group's name."""
    node_group_arn: pulumi.Output[str]
    """The EKS node group's ARN."""
    launch_template_id: pulumi.Output[str]
    """The id of the node launch template."""
    labels: pulumi.Output[dict[str, str]]
    """The node labels of the label contract (gpu-platform.io/*)."""
    node_selector: pulumi.Output[dict[str, str]]
    """The node selector controllers use to land on these nodes."""

    def __init__(self, name: str, args: SystemNodeGroupArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(f"{PACKAGE}:index:SystemNodeGroup", name, None, opts)
        stack = validate("SystemNodeGroup", name, args)
        inner = _SystemNodeGroup(
            name, stack.system_node_group, cluster_name=stack.cluster.name,
            kubernetes_version=stack.cluster.kubernetes_version, node_role_arn=args["node_role_arn"],
            subnet_ids=args["subnet_ids"], opts=pulumi.ResourceOptions(parent=self))
        self.node_group = pulumi.Output.from_input(inner.node_group)
        self.node_group_name = inner.node_group_name
        self.node_group_arn = inner.node_group_arn
        self.launch_template_id = inner.launch_template_id
        self.labels = pulumi.Output.from_input(inner.labels)
        self.node_selector = pulumi.Output.from_input(inner.node_selector)
        self.register_outputs({"nodeGroupName": self.node_group_name, "nodeGroupArn": self.node_group_arn})


class GpuManagedNodeGroupArgs(TypedDict):
    cluster: ClusterArgs  # type: ignore[valid-type]
    """The cluster (gpu-platform:cluster): name and Kubernetes version."""
    access: ClusterAccess
    """Endpoint, CA, subnets and node role of the cluster."""
    node_group: GpuNodeGroupArgsConfig  # type: ignore[valid-type]
    """The GPU node group (one entry of gpu-platform:gpuNodeGroups)."""
    gpu_operator: GpuOperatorArgsConfig  # type: ignore[valid-type]
    """The GPU Operator that installs the pool's driver (gpu-platform:gpuOperator)."""
    system_nodes: pulumi.Input[aws.eks.NodeGroup]
    """The system node group's EKS node group (SystemNodeGroup.nodeGroup): the GPU nodes join after it."""


class GpuManagedNodeGroup(pulumi.ComponentResource):
    """A GPU node group on Canonical's Ubuntu EKS image, driver by the GPU Operator (components/gpu_node_group.py).

    It joins after `systemNodes`, the nodes its controllers run on."""

    node_group_name: pulumi.Output[str]
    """The EKS node group's name."""
    launch_template_id: pulumi.Output[str]
    """The id of the node launch template."""
    node_role_arn: pulumi.Output[str]
    """The ARN of the nodes' IAM role."""
    ami_id: pulumi.Output[str]
    """The AMI the nodes boot."""
    labels: pulumi.Output[dict[str, str]]
    """The node labels of the label contract (gpu-platform.io/*)."""

    def __init__(self, name: str, args: GpuManagedNodeGroupArgs,
                 opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(f"{PACKAGE}:index:GpuManagedNodeGroup", name, None, opts)
        stack = validate("GpuManagedNodeGroup", name, args)
        missing = missing_input("GpuManagedNodeGroup", name, dict(args))
        if missing is not None:
            raise ConfigError(missing[1])
        system = _reference("GpuManagedNodeGroup", name, args, "system_nodes")
        cluster = _view(stack.cluster, dict(args["access"]), None, system)
        inner = _GpuManagedNodeGroup(name, stack.gpu_node_groups[0], stack.gpu_pools()[0], cluster,
                                     opts=pulumi.ResourceOptions(parent=self))
        self.node_group_name = inner.node_group_name
        self.launch_template_id = inner.launch_template_id
        self.node_role_arn = inner.node_role_arn
        self.ami_id = inner.ami_id
        self.labels = pulumi.Output.from_input(inner.labels)
        self.register_outputs({"nodeGroupName": self.node_group_name})


class KarpenterGpuPoolArgs(TypedDict):
    cluster: ClusterArgs  # type: ignore[valid-type]
    """The cluster (gpu-platform:cluster): name, Kubernetes version, existing."""
    access: ClusterAccess
    """Endpoint, CA, service range, subnets and security group of the cluster."""
    karpenter_version: str
    """The Karpenter chart version the cluster runs (gpu-platform:karpenter.version)."""
    pool: KarpenterPoolArgsConfig  # type: ignore[valid-type]
    """The pool (one entry of gpu-platform:karpenter.pools)."""
    gpu_operator: NotRequired[GpuOperatorArgsConfig]  # type: ignore[valid-type]
    """The GPU Operator the cluster runs (required for Ubuntu and AL2023 pools)."""
    instance_profile_name: pulumi.Input[str]
    """The instance profile of Karpenter's node role."""
    kubeconfig: pulumi.Input[str]
    """Kubeconfig of the cluster (the EC2NodeClass and NodePools are created through it)."""
    karpenter_release: pulumi.Input[k8s.helm.v3.Release]
    """Karpenter's controller Helm release: the EC2NodeClass and NodePools are created after it."""
    karpenter_crd_release: NotRequired[pulumi.Input[k8s.helm.v3.Release]]
    """The karpenter-crd Helm release, when the CRDs are a release of their own (as the program installs them)."""


class KarpenterGpuPool(pulumi.ComponentResource):
    """A GPU pool as a Karpenter EC2NodeClass and NodePools (components/karpenter/pool.py).

    The objects are created after `karpenterRelease` and `karpenterCrdRelease` (the CRDs they are instances of)."""

    node_class_name: pulumi.Output[str]
    """The EC2NodeClass name."""
    node_pool_names: pulumi.Output[list[str]]
    """The NodePool names (the pool, and its on-demand fallback when set)."""
    labels: pulumi.Output[dict[str, str]]
    """The node labels of the label contract (gpu-platform.io/*)."""

    def __init__(self, name: str, args: KarpenterGpuPoolArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(f"{PACKAGE}:index:KarpenterGpuPool", name, None, opts)
        stack = validate("KarpenterGpuPool", name, args, karpenter_version=args.get("karpenter_version"))
        release = _reference("KarpenterGpuPool", name, args, "karpenter_release")
        crds = _reference("KarpenterGpuPool", name, args, "karpenter_crd_release") if args.get(
            "karpenter_crd_release") is not None else release
        provider = _provider(name, args["kubeconfig"], self)
        cluster = _view(stack.cluster, dict(args["access"]), provider, None)
        controller = cast(KarpenterController, types.SimpleNamespace(
            instance_profile_name=pulumi.Output.from_input(args["instance_profile_name"]),
            crd_release=crds, release=release, security_group_tag=None))
        pool = stack.karpenter.pools[0] if stack.karpenter else None
        assert pool is not None  # validate placed it
        inner = _KarpenterGpuPool(name, pool, stack.gpu_pools()[0], cluster, controller,
                                  cluster_name=stack.cluster.name, existing_cluster=stack.cluster.existing,
                                  opts=pulumi.ResourceOptions(parent=self))
        self.node_class_name = pulumi.Output.from_input(pool.name)
        self.node_pool_names = pulumi.Output.from_input(sorted(inner.node_pools))
        self.labels = pulumi.Output.from_input(inner.labels)
        self.register_outputs({"nodeClassName": self.node_class_name, "nodePoolNames": self.node_pool_names})


class GpuOperatorReleaseArgs(TypedDict):
    cluster: ClusterArgs  # type: ignore[valid-type]
    """The cluster (gpu-platform:cluster): name and Kubernetes version."""
    gpu_operator: GpuOperatorArgsConfig  # type: ignore[valid-type]
    """The operator release (gpu-platform:gpuOperator)."""
    node_groups: NotRequired[list[GpuNodeGroupArgsConfig]]  # type: ignore[valid-type]
    """The GPU node groups it serves (gpu-platform:gpuNodeGroups)."""
    karpenter_version: NotRequired[str]
    """The Karpenter chart version, when `pools` is given."""
    pools: NotRequired[list[KarpenterPoolArgsConfig]]  # type: ignore[valid-type]
    """The Karpenter pools it serves (gpu-platform:karpenter.pools)."""
    kubeconfig: pulumi.Input[str]
    """Kubeconfig of the cluster."""


class GpuOperatorRelease(pulumi.ComponentResource):
    """The NVIDIA GPU Operator Helm release, one NVIDIADriver per Ubuntu pool (components/gpu_operator.py)."""

    namespace: pulumi.Output[str]
    """The namespace it runs in."""
    release_name: pulumi.Output[str]
    """The Helm release name."""
    driver_pools: pulumi.Output[list[str]]
    """The pools that get an NVIDIADriver resource."""

    def __init__(self, name: str, args: GpuOperatorReleaseArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(f"{PACKAGE}:index:GpuOperatorRelease", name, None, opts)
        stack = validate("GpuOperatorRelease", name, args, karpenter_version=args.get("karpenter_version"))
        assert stack.gpu_operator is not None  # a required input
        provider = _provider(name, args["kubeconfig"], self)
        inner = _GpuOperatorRelease(name, stack.gpu_operator, stack.operator_pools(), provider=provider,
                                    depends_on=_dependencies(opts), opts=pulumi.ResourceOptions(parent=self))
        self.namespace = inner.namespace
        self.release_name = inner.release_name
        self.driver_pools = pulumi.Output.from_input(sorted(inner.nvidia_drivers))
        self.register_outputs({"namespace": self.namespace, "releaseName": self.release_name})


class InferenceServiceArgs(TypedDict):
    cluster: ClusterArgs  # type: ignore[valid-type]
    """The cluster (gpu-platform:cluster): name and Kubernetes version."""
    service: InferenceServiceArgsConfig  # type: ignore[valid-type]
    """The service (one entry of gpu-platform:inferenceServices); its namespace must exist."""
    gpu_operator: NotRequired[GpuOperatorArgsConfig]  # type: ignore[valid-type]
    """The GPU Operator, when a pool of the service gets its driver from it."""
    node_groups: NotRequired[list[GpuNodeGroupArgsConfig]]  # type: ignore[valid-type]
    """The GPU node groups the service may run on (by nodePools name)."""
    karpenter_version: NotRequired[str]
    """The Karpenter chart version, when `pools` is given."""
    pools: NotRequired[list[KarpenterPoolArgsConfig]]  # type: ignore[valid-type]
    """The Karpenter pools the service may run on (by nodePools name)."""
    zones: list[str]
    """Availability Zones of the private subnets (Fast Snapshot Restore is enabled in each)."""
    prometheus_url: str
    """In-cluster URL of the Prometheus KEDA queries (autoscaling)."""
    kubeconfig: pulumi.Input[str]
    """Kubeconfig of the cluster."""


class InferenceService(pulumi.ComponentResource):
    """A Triton inference service: Deployment, Service, PDB, NetworkPolicy, optional ALB Ingress, KEDA scaling,
    model volume from a snapshot, ServiceMonitor and dashboard (components/inference/service.py).

    dependsOn: the namespace and the add-ons its objects need (monitoring; KEDA, the load balancer controller
    and the EBS CSI snapshot storage when used), as in the program."""

    deployment_name: pulumi.Output[str]
    """The Deployment name."""
    service_name: pulumi.Output[str]
    """The ClusterIP Service name."""
    namespace: pulumi.Output[str]
    """The namespace it runs in."""
    endpoint: pulumi.Output[str]
    """The in-cluster HTTP endpoint (Triton's HTTP port)."""
    host: pulumi.Output[str]
    """The ingress host name (empty without ingress)."""

    def __init__(self, name: str, args: InferenceServiceArgs, opts: pulumi.ResourceOptions | None = None) -> None:
        super().__init__(f"{PACKAGE}:index:InferenceService", name, None, opts)
        stack = validate("InferenceService", name, args, karpenter_version=args.get("karpenter_version"))
        config = with_outputs(stack.inference_services[0], dict(args["service"]))
        provider = _provider(name, args["kubeconfig"], self)
        _InferenceService(name, config, stack.gpu_pools(), cuda=service_cuda(config),
                          zones=list(args["zones"]), prometheus_url=args["prometheus_url"], provider=provider,
                          depends_on=_dependencies(opts), opts=pulumi.ResourceOptions(parent=self))
        self.deployment_name = pulumi.Output.from_input(config.name)
        self.service_name = pulumi.Output.from_input(config.name)
        self.namespace = pulumi.Output.from_input(config.namespace)
        self.endpoint = pulumi.Output.from_input(
            f"http://{config.name}.{config.namespace}.svc.cluster.local:{config.port}")
        self.host = pulumi.Output.from_input(config.ingress.host if config.ingress else "")
        self.register_outputs({"deploymentName": self.deployment_name, "endpoint": self.endpoint})


def with_outputs(config: InferenceServiceConfig, service: Mapping[str, Any]) -> InferenceServiceConfig:
    """The validated service with the Outputs that fed its input fields (provider/args.py INPUT_FIELDS) put back,
    so the children depend on the resources they come from, stay secret when they are, and get the value an
    unknown one takes at apply rather than the stand-in it was validated as."""
    updates: dict[str, Any] = {}
    for key, section, model in (("ingress", config.ingress, IngressConfig),
                                ("model_volume", config.model_volume, ModelVolumeConfig)):
        given = service.get(key)
        if section is None or not isinstance(given, Mapping):
            continue
        outputs = {f: given[f] for f in model.model_fields if (model.__name__, f) in INPUT_FIELDS
                   and isinstance(given.get(f), pulumi.Output)}
        if outputs:
            updates[key] = section.model_copy(update=outputs)
    return config.model_copy(update=updates) if updates else config


COMPONENTS: list[type[pulumi.ComponentResource]] = [
    SystemNodeGroup, GpuManagedNodeGroup, KarpenterGpuPool, GpuOperatorRelease, InferenceService]

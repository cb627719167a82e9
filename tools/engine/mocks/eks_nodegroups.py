"""The children pulumi-eks's `eks:index:ManagedNodeGroup` registers through the engine, emulated for its inputs.

`ManagedNodeGroup` is a remote component (its Construct runs in the pulumi-eks Node.js plugin, which does not run
offline), and the most common pulumi-eks idiom (pulumi-eks examples/managed-nodegroups-py). Without its children the
pack sees no node group at all. `createManagedNodeGroup` (nodejs/eks/nodes/nodegroup.ts 1879-2126) registers one
`aws:eks/nodeGroup:NodeGroup` named as the component, parented to it, with the component's own arguments spread
into it (`...nodeGroupArgs`: the JS SDK's generated constructor keeps only the NodeGroup's own inputs) plus the
values it computes: `clusterName`, `nodeRoleArn`, `scalingConfig` with pulumi-eks's defaults, `subnetIds`, `amiType`
(derived from `operatingSystem`/`gpu`/the instance types' architecture when not given: `determineAmiType`,
tools/engine/mocks/eks_ami.py) and `version` (the cluster's when neither a version nor a launch template is given:
the cluster's input, else its state, as an update reads it).

With any of `kubeletExtraArgs`, `bootstrapExtraArgs`, `bottlerocketSettings`, `nodeadmExtraOptions`, `enableIMDSv2`,
`userData`, `amiId`, `enableEfaSupport` it also registers its own `aws:ec2/launchTemplate:LaunchTemplate`
(`createMNGCustomLaunchTemplate`, 2143-2301): `metadataOptions` for `enableIMDSv2`, a root (AL2/AL2023) or data
(Bottlerocket) volume of `diskSize`, the user data `createUserData` writes (tools/engine/mocks/eks_userdata.py:
the taints and labels as kubelet flags, nodeadm or Bottlerocket settings), base64, with the recommended image, and
for `enableEfaSupport` an `aws:ec2/placementGroup:PlacementGroup` (strategy `cluster`) and EFA network interfaces.
The node group then points at that template, loses `diskSize`, and, with custom user data or an AMI ID, `amiType`,
`version` and `releaseVersion` (2059-2072).

The recommended image is read as pulumi-eks reads it, with `aws.ssm.getParameter`, which the mocks answer as they
answer the program's own invokes (tools/engine/mocks/invokes.py). What pulumi-eks reads through invokes the mocks do
not answer is unknown offline (a real preview knows it): the EFA network interfaces (`aws.ec2.getInstanceType`) and
the EFA subnets (`aws.ec2.getSubnets`). A value built over an unknown one (the user data over a new cluster's
endpoint in a first preview) is unknown as a whole, as `apply` makes it. Each child's inputs carry the property
dependencies the engine records (the cluster for what is read from it, the role, the template, the placement group).

Read at the same pulumi-eks snapshot as tools/engine/mocks/eks_children.py (7bf0c1b1, v4.3.0-9; the pinned
4.4.0's source is not in the mirror), and accepted for the same pin (`EMULATED_FOR_PIN`). The lines each value
comes from are in `SOURCE`; tests/tools/fixtures/pulumi_eks_source.yaml holds their text and
tests/tools/test_eks_nodegroups.py checks every cited line against it and runs nodegroup.test.ts's cases.

Not emulated (`uncovered_mng`): a `cluster` given as `CoreData` rather than the component, a value the emulated
user-data writers do not reproduce, and inputs pulumi-eks itself refuses (its validation errors, named). Then nothing
is emulated, and the preview lists the component as not seen offline; the policies that need what it holds are
pending (tools/engine/unseen.py), never "none". The node group's `dependsOn` on the cluster's node access (aws-auth
ConfigMap or access entry, `eksNodeAccess`) is not modelled: it orders steps, it does not change what is judged.
"""

from __future__ import annotations

import base64
import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from tools.engine.mocks.eks import eks_cluster_name
from tools.engine.mocks.eks_ami import (
    PulumiEksInputError,
    determine_ami_type,
    get_operating_system,
    ssm_parameter_name,
    to_ami_type,
)
from tools.engine.mocks.eks_children import Child, Cite, Register, applied
from tools.engine.mocks.eks_userdata import MANAGED, NotEmulated, create_user_data
from tools.engine.records import UNKNOWN, RecordedResource, has_unknown

NODEGROUP_TS = "nodejs/eks/nodes/nodegroup.ts"
USERDATA_TS = "nodejs/eks/nodes/userdata.ts"
CLUSTER_TS = "nodejs/eks/cluster/cluster.ts"
MANAGED_NODE_GROUP = "eks:index:ManagedNodeGroup"
EKS_CLUSTER = "eks:index:Cluster"

SOURCE: dict[str, Cite] = {
    "nodeGroup": Cite(NODEGROUP_TS, 2092, "const nodeGroup = new aws.eks.NodeGroup("),
    "nodeGroupArgs": Cite(NODEGROUP_TS, 2008, "const nodeGroupArgs = Object.assign({}, args);"),
    "version": Cite(NODEGROUP_TS, 1890, "args.version = pulumi.output(args.version ?? core.cluster.version);"),
    "nodeRoleArn": Cite(NODEGROUP_TS, 1917, "roleArn = args.nodeRoleArn;"),
    "nodeRole": Cite(NODEGROUP_TS, 1919, "roleArn = pulumi.output(args.nodeRole).apply((r) => r.arn);"),
    "subnetIds": Cite(NODEGROUP_TS, 1959, "subnetIds = pulumi.output(args.subnetIds);"),
    "coreSubnetIds": Cite(CLUSTER_TS, 1268,
                          "subnetIds: args.subnetIds ? pulumi.output(args.subnetIds) : pulumi.output("),
    "clusterSubnetIds": Cite(CLUSTER_TS, 505,
                             "} else if (args.publicSubnetIds !== undefined || args.privateSubnetIds !== undefined) {"),
    "customLaunchTemplate": Cite(NODEGROUP_TS, 2049, "if (requiresCustomLaunchTemplate(args)) {"),
    "customUserDataArgs": Cite(USERDATA_TS, 135, "export const customUserDataArgs: (keyof CustomUserDataArgs)[] = ["),
    "operatingSystem": Cite(NODEGROUP_TS, 2076, "amiType = determineAmiType("),
    "ignoreScalingChanges": Cite(NODEGROUP_TS, 2086, '? ["scalingConfig.desiredSize"]'),
    "clusterName": Cite(NODEGROUP_TS, 2097, "clusterName: args.clusterName || core.cluster.name,"),
    "scalingConfig.desiredSize": Cite(NODEGROUP_TS, 2100, "const desiredSize = config?.desiredSize ?? 2;"),
    "scalingConfig.minSize": Cite(NODEGROUP_TS, 2101, "const minSize = config?.minSize ?? 1;"),
    "scalingConfig.maxSize": Cite(NODEGROUP_TS, 2102, "const maxSize = config?.maxSize ?? 2;"),
    "launchTemplate": Cite(NODEGROUP_TS, 2117, ": args.launchTemplate,"),
    "launchTemplate.ref": Cite(NODEGROUP_TS, 2112, "id: launchTemplate.id,"),
    "launchTemplate.version": Cite(NODEGROUP_TS, 2114, "return `${version}`;"),
    "diskSize.dropped": Cite(NODEGROUP_TS, 2060, "delete nodeGroupArgs.diskSize;"),
    "amiType.dropped": Cite(NODEGROUP_TS, 2068,
        "if (requiresCustomUserData(userDataArgs) || args.userData || args.amiId) {"),
    "version.dropped": Cite(NODEGROUP_TS, 2069, "delete nodeGroupArgs.version;"),
    "releaseVersion.dropped": Cite(NODEGROUP_TS, 2070, "delete nodeGroupArgs.releaseVersion;"),
    "amiType.derived": Cite(NODEGROUP_TS, 2073,
        "} else if (amiType === undefined && args.operatingSystem !== undefined) {"),
    "placementGroup": Cite(NODEGROUP_TS, 1977, "? new aws.ec2.PlacementGroup("),
    "placementGroup.strategy": Cite(NODEGROUP_TS, 1980, 'strategy: "cluster",'),
    "efaSubnets": Cite(NODEGROUP_TS, 1999, "subnetIds = filterEfaSubnets("),
    "efaZoneRequired": Cite(NODEGROUP_TS, 1993,
        "reason: \"You must specify placementGroupAvailabilityZone when enabling EFA"),
    "amiIdExclusive": Cite(NODEGROUP_TS, 1910,
        "reason: `You cannot specify both amiId and ${key} when creating a managed"),
    "launchTemplateExclusive": Cite(NODEGROUP_TS, 2016,
        "if (args.launchTemplate && requiresCustomLaunchTemplate(args)) {"),
    "userDataExclusive": Cite(NODEGROUP_TS, 2032, "if (requiresCustomUserData(userDataArgs) && args.userData) {"),
    "lt": Cite(NODEGROUP_TS, 2281, "return new aws.ec2.LaunchTemplate("),
    "lt.name": Cite(NODEGROUP_TS, 2282, "`${name}-launchTemplate`,"),
    "lt.taints": Cite(NODEGROUP_TS, 2164, "effect: mapMngTaintEffect(taint.effect),"),
    "lt.clusterMetadata": Cite(NODEGROUP_TS, 2174, "name: args.clusterName || core.cluster.name,"),
    "lt.serviceCidr": Cite(NODEGROUP_TS, 2332, 'if (config.ipFamily === "ipv6") {'),
    "lt.userData": Cite(NODEGROUP_TS, 2196,
        "if (requiresCustomUserData(customUserDataArgs) || args.userData || args.amiId) {"),
    "lt.userData.base64": Cite(NODEGROUP_TS, 2229, 'return Buffer.from(userData, "utf-8").toString("base64");'),
    "lt.metadataOptions": Cite(NODEGROUP_TS, 2239, 'httpTokens: args.enableIMDSv2 ? "required" : "optional",'),
    "lt.hopLimit": Cite(NODEGROUP_TS, 2240, "httpPutResponseHopLimit: 2,"),
    "lt.httpEndpoint": Cite(NODEGROUP_TS, 2241, 'httpEndpoint: "enabled",'),
    "lt.deviceName.linux": Cite(NODEGROUP_TS, 2250, 'return "/dev/xvda";'),
    "lt.deviceName.bottlerocket": Cite(NODEGROUP_TS, 2253, 'return "/dev/xvdb";'),
    "lt.blockDeviceMappings": Cite(NODEGROUP_TS, 2266, "volumeSize: args.diskSize,"),
    "lt.networkInterfaces": Cite(NODEGROUP_TS, 2273, "? getEfaNetworkInterfaces({"),
    "recommendedAmi.amiType": Cite(NODEGROUP_TS, 2372, "const resolvedType = toAmiType(amiType);"),
    "recommendedAmi.ssm": Cite(NODEGROUP_TS, 2388, "return pulumi.output(aws.ssm.getParameter({ name: parameterName"),
    "lt.imageId": Cite(NODEGROUP_TS, 2290, "? args.amiId ?? getRecommendedAMI(args, core.cluster.version, parent)"),
    "lt.placement": Cite(NODEGROUP_TS, 2294, "groupName: placementGroupName,"),
    "mapMngTaintEffect": Cite(NODEGROUP_TS, 2322,
        "reason: `Invalid taint effect: ${effect}. Must be one of NO_SCHEDULE,"),
}

# The arguments that make pulumi-eks build its own launch template (nodegroup.ts 2128-2134: customUserDataArgs of
# userdata.ts 135-140, then enableIMDSv2, userData, amiId, enableEfaSupport).
CUSTOM_LAUNCH_TEMPLATE_ARGS = ("bootstrapExtraArgs", "kubeletExtraArgs", "bottlerocketSettings", "nodeadmExtraOptions",
                               "enableIMDSv2", "userData", "amiId", "enableEfaSupport")


def _camel(snake: str) -> str:
    head, *rest = snake.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _node_group_inputs() -> frozenset[str]:
    """The inputs of `aws.eks.NodeGroup`, as the installed pulumi-aws declares them (the provider schema's names)."""
    from pulumi_aws.eks import NodeGroupArgs  # noqa: PLC0415 - pulumi_aws is heavy; the mocks load it once needed

    params = inspect.signature(NodeGroupArgs.__init__).parameters
    return frozenset(_camel(p) for p in params if p != "__self__")


def _is_urn(value: Any, type_: str) -> bool:
    return isinstance(value, str) and value.startswith("urn:pulumi:") and re.search(
        rf"(::|\$){re.escape(type_)}::", value) is not None


def refused_mng(inputs: Mapping[str, Any]) -> list[str]:
    """The validation errors pulumi-eks raises for these inputs (its preview fails with them): one entry each."""
    errors = []
    if inputs.get("nodeRole") is not None and inputs.get("nodeRoleArn") is not None:  # nodegroup.ts 1895-1900
        errors.append("You cannot specify both nodeRole and nodeRoleArn when creating a managed node group.")
    errors += [f"You cannot specify both amiId and {key} when creating a managed node group."
               for key in ("gpu", "amiType") if inputs.get("amiId") and inputs.get(key)]
    if inputs.get("enableEfaSupport") and not inputs.get("placementGroupAvailabilityZone"):
        errors.append("You must specify placementGroupAvailabilityZone when enabling EFA support.")
    if inputs.get("launchTemplate") is not None and _custom_launch_template(inputs):
        errors.append("If you provide a custom launch template, you cannot provide any of "
                      f"{', '.join(CUSTOM_LAUNCH_TEMPLATE_ARGS)}. Please include these in the launch template that "
                      "you are providing.")
    if _custom_user_data(inputs) and inputs.get("userData"):
        errors.append("If you provide custom userData, you cannot provide any of bootstrapExtraArgs, "
                      "kubeletExtraArgs, bottlerocketSettings, nodeadmExtraOptions. Please include these in the "
                      "userData that you are providing.")
    return errors


def _custom_launch_template(inputs: Mapping[str, Any]) -> bool:
    """`requiresCustomLaunchTemplate` (nodegroup.ts 2136-2138)."""
    return any(inputs.get(key) is not None for key in CUSTOM_LAUNCH_TEMPLATE_ARGS)


def _custom_user_data(inputs: Mapping[str, Any]) -> bool:
    """`requiresCustomUserData` (userdata.ts 145-147)."""
    return any(inputs.get(key) is not None for key in CUSTOM_LAUNCH_TEMPLATE_ARGS[:4])


def uncovered_mng(inputs: Mapping[str, Any], lookup: Callable[[str], RecordedResource | None]) -> list[str]:
    """Why the ManagedNodeGroup's children would not be emulated faithfully: one entry per reason (module docstring)."""
    why = [f"inputs pulumi-eks refuses ({error})" for error in refused_mng(inputs)]
    cluster = inputs.get("cluster")
    if not (_is_urn(cluster, EKS_CLUSTER) and lookup(str(cluster)) is not None):
        why.append("cluster (given as CoreData, not as an eks.Cluster of this program)")
    if inputs.get("nodeRole") is None and inputs.get("nodeRoleArn") is None:
        why.append("nodeRole (neither nodeRole nor nodeRoleArn: pulumi-eks itself refuses it)")
    if not why:
        try:
            _ami_type(inputs)
            _user_data_check(inputs)
        except PulumiEksInputError as exc:
            why.append(f"inputs pulumi-eks refuses ({exc})")
        except NotEmulated as exc:
            why.append(f"user data the emulation does not write ({exc})")
    return why


def _ami_type(inputs: Mapping[str, Any]) -> Any:
    """The node group's `amiType` (nodegroup.ts 2063-2083): dropped with custom user data or an AMI ID, else given, else
    derived from `operatingSystem`; None when absent."""
    if _custom_user_data(inputs) or inputs.get("userData") or inputs.get("amiId"):
        return None
    ami_type = inputs.get("amiType")
    if ami_type is None and inputs.get("operatingSystem") is not None:
        os_, gpu, types = inputs["operatingSystem"], inputs.get("gpu"), inputs.get("instanceTypes")
        return applied(os_, gpu, types, build=lambda: determine_ami_type(os_, gpu, types))
    return ami_type


_EFFECTS = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


def _user_data_taints(taints: Any) -> dict[str, dict[str, Any]] | None:
    """The taints as `createMNGCustomLaunchTemplate` hands them to `createUserData` (nodegroup.ts 2157-2170)."""
    if not taints:
        return None
    out = {}
    for taint in taints:
        effect = taint.get("effect")
        if effect not in _EFFECTS:
            raise PulumiEksInputError(f"Invalid taint effect: {effect}. Must be one of NO_SCHEDULE, NO_EXECUTE, "
                                      "PREFER_NO_SCHEDULE.")
        out[taint["key"]] = {"value": taint.get("value"), "effect": _EFFECTS[effect]}
    return out


def _operating_system(inputs: Mapping[str, Any]) -> Any:
    ami_type, os_ = inputs.get("amiType"), inputs.get("operatingSystem")
    return applied(ami_type, os_, build=lambda: get_operating_system(ami_type, os_))


def _user_data_args(inputs: Mapping[str, Any]) -> dict[str, Any]:
    return {"nodeGroupType": MANAGED, "kubeletExtraArgs": inputs.get("kubeletExtraArgs"),
            "bootstrapExtraArgs": inputs.get("bootstrapExtraArgs"), "labels": inputs.get("labels"),
            "taints": applied(inputs.get("taints"), build=lambda: _user_data_taints(inputs.get("taints"))),
            "bottlerocketSettings": inputs.get("bottlerocketSettings"), "userDataOverride": inputs.get("userData"),
            "nodeadmExtraOptions": inputs.get("nodeadmExtraOptions")}


_PROBE_CLUSTER = {"name": "n", "apiServerEndpoint": "https://e", "certificateAuthority": "c",
                  "serviceCidr": "10.0.0.0/16"}


def _user_data_check(inputs: Mapping[str, Any]) -> None:
    """Raise what `createUserData` would raise for these inputs (a probe cluster: its values do not decide it)."""
    if not (_custom_user_data(inputs) or inputs.get("userData") or inputs.get("amiId")):
        return
    os_ = _operating_system(inputs)
    args = _user_data_args(inputs)
    if not has_unknown(os_) and not has_unknown(args):
        create_user_data(os_, _PROBE_CLUSTER, args)


def _cluster_child(cluster_urn: str, recorded: Mapping[str, RecordedResource]) -> RecordedResource | None:
    """The `aws:eks/cluster:Cluster` emulated under the pulumi-eks Cluster, when it was emulated."""
    return next((r for r in recorded.values() if r.parent == cluster_urn and r.type == "aws:eks/cluster:Cluster"),
                None)


Invoke = Callable[[str, dict[str, Any]], dict[str, Any]]


def construct_managed_node_group(urn: str, name: str, inputs: Mapping[str, Any], *,
                                 recorded: Mapping[str, RecordedResource], register: Register,
                                 invoke: Invoke | None = None) -> None:
    """Register, through `register`, the children pulumi-eks registers for a ManagedNodeGroup (module docstring).

    `recorded`: what the program registered so far, by URN (the cluster component, the role); `invoke`: the
    provider functions pulumi-eks calls (the recommended image's SSM parameter), answered as the program's are;
    the caller checked that `uncovered_mng(inputs, recorded.get)` is empty.
    """
    cluster = recorded[str(inputs["cluster"])]
    eks_cluster = _cluster_child(cluster.urn, recorded)
    cluster_state = eks_cluster.outputs if eks_cluster is not None else {}
    cluster_dep = (eks_cluster.urn,) if eks_cluster is not None else ()
    own_deps = recorded[urn].property_dependencies if urn in recorded else {}
    deps: dict[str, tuple[str, ...]] = {}

    def dep(key: str, *urns: str) -> None:
        deps[key] = tuple(dict.fromkeys([*deps.get(key, ()), *urns]))

    for key, urns in own_deps.items():  # an input that is an Output keeps the resources it came from
        dep(key, *urns)

    if inputs.get("nodeRoleArn") is not None:
        role_arn = inputs["nodeRoleArn"]
    else:
        role = recorded.get(str(inputs["nodeRole"]))
        role_arn = role.outputs.get("arn", UNKNOWN) if role is not None else UNKNOWN
        dep("nodeRoleArn", *own_deps.get("nodeRole", ()), *((role.urn,) if role is not None else ()))

    version = inputs.get("version")
    if version is None and inputs.get("launchTemplate") is None:  # nodegroup.ts 1889-1891
        version = cluster.inputs.get("version", cluster_state.get("version", UNKNOWN))
        dep("version", *cluster_dep)

    if inputs.get("subnetIds") is not None:
        subnets = inputs["subnetIds"]
    elif cluster.inputs.get("subnetIds") is not None:
        subnets = cluster.inputs["subnetIds"]
    elif cluster.inputs.get("publicSubnetIds") is not None or cluster.inputs.get("privateSubnetIds") is not None:
        public, private = cluster.inputs.get("publicSubnetIds") or [], cluster.inputs.get("privateSubnetIds") or []
        subnets = applied(public, private, build=lambda: [*public, *private])
    else:  # the default VPC's subnets, which pulumi-eks looks up (not answered offline)
        subnets = UNKNOWN

    placement_group: tuple[str, Any] | None = None
    if inputs.get("enableEfaSupport") is True:  # nodegroup.ts 1974-2005
        pg_urn, pg_state = register(Child("aws:ec2/placementGroup:PlacementGroup", name, urn, _without_none({
            "strategy": "cluster", "tags": inputs.get("tags")}), True, SOURCE["placementGroup"],
            property_dependencies={"tags": own_deps.get("tags", ())}))
        placement_group = (pg_urn, pg_state.get("name", UNKNOWN))
        subnets = UNKNOWN  # filterEfaSubnets: aws.ec2.getInstanceTypeOfferings and getSubnets, not answered offline

    # The aws cluster's name is assigned in Check (an auto-name when not given): known in a first preview too.
    cluster_name = inputs.get("clusterName") or cluster_state.get("name") or eks_cluster_name(cluster.name,
                                                                                             cluster.inputs)
    if not inputs.get("clusterName"):
        dep("clusterName", *cluster_dep)

    scaling = inputs.get("scalingConfig")
    scaling_config = applied(scaling, build=lambda: {
        "desiredSize": (scaling or {}).get("desiredSize", 2),
        "minSize": (scaling or {}).get("minSize", 1),
        "maxSize": (scaling or {}).get("maxSize", 2),
    })

    own = _node_group_inputs()
    child_inputs = {k: v for k, v in inputs.items() if k in own and v is not None}
    child_inputs.update({
        "clusterName": cluster_name,
        "nodeRoleArn": role_arn,
        "scalingConfig": scaling_config,
        "subnetIds": subnets,
    })
    if version is not None:
        child_inputs["version"] = version
    if _custom_launch_template(inputs):
        lt_urn, lt_state = _launch_template(urn, name, inputs, cluster_name=cluster_name, cluster_state=cluster_state,
                                            cluster_dep=cluster_dep, placement_group=placement_group,
                                            version=version, register=register, invoke=invoke)
        child_inputs.pop("diskSize", None)  # nodegroup.ts 2059-2060
        version_out = lt_state.get("latestVersion", UNKNOWN)
        child_inputs["launchTemplate"] = {"id": lt_state["id"],
                                          "version": applied(version_out, build=lambda: f"{version_out}")}
        deps["launchTemplate"] = (lt_urn,)
    ami_type = _ami_type(inputs)
    if _custom_user_data(inputs) or inputs.get("userData") or inputs.get("amiId"):  # nodegroup.ts 2068-2072
        for key in ("version", "releaseVersion", "amiType"):
            child_inputs.pop(key, None)
            deps.pop(key, None)
    elif ami_type is not None:
        child_inputs["amiType"] = ami_type
    ignore = ("scalingConfig.desiredSize",) if inputs.get("ignoreScalingChanges") else ()
    register(Child("aws:eks/nodeGroup:NodeGroup", name, urn, child_inputs, True, SOURCE["nodeGroup"],
                   ignore_changes=ignore,
                   property_dependencies={k: v for k, v in deps.items() if k in child_inputs and v}))


def _recommended_ami(inputs: Mapping[str, Any], os_: Any, version: Any, invoke: Invoke | None) -> Any:
    """`getRecommendedAMI` (nodegroup.ts 2346-2391): the image ID in the SSM parameter of the AMI type (given, else
    derived from the OS, `gpu` and the instance types) and the version (the node group's, which defaults to the
    cluster's at 1889-1891), read with `aws.ssm.getParameter`, which a preview answers too."""
    ami_type, gpu, types = inputs.get("amiType"), inputs.get("gpu"), inputs.get("instanceTypes")
    if invoke is None or has_unknown([ami_type, os_, gpu, types, version]) or version is None:
        return UNKNOWN
    if ami_type is not None:
        resolved = to_ami_type(str(ami_type))
        if resolved is None:
            raise PulumiEksInputError(f"Cannot resolve recommended AMI for AMI type: {ami_type}. Please provide the "
                                      "AMI ID and userdata.")
    else:
        resolved = determine_ami_type(os_, gpu, types)
    return invoke("aws:ssm/getParameter:getParameter", {"name": ssm_parameter_name(resolved, str(version))})["value"]


def _without_none(value: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in value.items() if v is not None}


def _launch_template(urn: str, name: str, inputs: Mapping[str, Any], *, cluster_name: Any,
                     cluster_state: Mapping[str, Any], cluster_dep: tuple[str, ...],
                     placement_group: tuple[str, Any] | None, version: Any, register: Register,
                     invoke: Invoke | None) -> tuple[str, dict[str, Any]]:
    """`createMNGCustomLaunchTemplate` (nodegroup.ts 2143-2301): register the template, return its URN and state."""
    os_ = _operating_system(inputs)
    deps: dict[str, tuple[str, ...]] = {}
    user_data = None
    if _custom_user_data(inputs) or inputs.get("userData") or inputs.get("amiId"):  # nodegroup.ts 2196-2232
        network = cluster_state.get("kubernetesNetworkConfig", UNKNOWN)
        metadata = {
            "name": cluster_name,
            "apiServerEndpoint": cluster_state.get("endpoint", UNKNOWN),
            "certificateAuthority": applied(cluster_state.get("certificateAuthority", UNKNOWN),
                                            build=lambda: cluster_state["certificateAuthority"]["data"]),
            "serviceCidr": applied(network, build=lambda: (network or {}).get(
                "serviceIpv6Cidr" if (network or {}).get("ipFamily") == "ipv6" else "serviceIpv4Cidr")),
        }
        args = _user_data_args(inputs)
        user_data = applied(metadata, os_, args, build=lambda: base64.b64encode(
            create_user_data(os_, metadata, args).encode()).decode())
        deps["userData"] = cluster_dep
    metadata_options = None
    if inputs.get("enableIMDSv2") is not None:  # nodegroup.ts 2236-2243
        enabled = inputs["enableIMDSv2"]
        metadata_options = applied(enabled, build=lambda: {
            "httpTokens": "required" if enabled else "optional", "httpPutResponseHopLimit": 2,
            "httpEndpoint": "enabled"})
    block_devices = None
    if inputs.get("diskSize"):  # nodegroup.ts 2245-2270
        size = inputs["diskSize"]
        block_devices = [{"deviceName": applied(os_, build=lambda: "/dev/xvdb" if os_ == "Bottlerocket"
                                                else "/dev/xvda"), "ebs": {"volumeSize": size}}]
    # getEfaNetworkInterfaces reads aws.ec2.getInstanceType (EFA support, network cards): not answered offline.
    interfaces = UNKNOWN if inputs.get("enableEfaSupport") else None
    image = None
    if user_data is not None:  # nodegroup.ts 2289-2291
        image = inputs.get("amiId") or _recommended_ami(inputs, os_, version, invoke)
    placement = None
    if placement_group is not None:
        placement = {"groupName": placement_group[1]}
        deps["placement"] = (placement_group[0],)
    if interfaces is not None:
        deps["networkInterfaces"] = cluster_dep
    lt_inputs = _without_none({"blockDeviceMappings": block_devices, "userData": user_data,
                               "metadataOptions": metadata_options, "imageId": image, "placement": placement,
                               "networkInterfaces": interfaces})
    return register(Child("aws:ec2/launchTemplate:LaunchTemplate", f"{name}-launchTemplate", urn, lt_inputs, True,
                          SOURCE["lt"], property_dependencies={k: v for k, v in deps.items() if k in lt_inputs and v}))

"""The child pulumi-eks's `eks:index:ManagedNodeGroup` registers through the engine, emulated for the program's inputs.

`ManagedNodeGroup` is a remote component (its Construct runs in the pulumi-eks Node.js plugin, which does not run
offline), and the most common pulumi-eks idiom (pulumi-eks examples/managed-nodegroups-py). Without its child the
pack sees no node group at all. `createManagedNodeGroup` (nodejs/eks/nodes/nodegroup.ts) registers one
`aws:eks/nodeGroup:NodeGroup` named as the component, parented to it, with the component's own arguments spread
into it (`...nodeGroupArgs`: the JS SDK's generated constructor keeps only the NodeGroup's own inputs) plus the
values it computes: `clusterName`, `nodeRoleArn`, `scalingConfig` with pulumi-eks's defaults, `subnetIds`, and
`version` (the cluster's when neither a version nor a launch template is given).

Read at the same pulumi-eks snapshot as tools/engine/mocks/eks_children.py (7bf0c1b1, v4.3.0-9; the pinned
4.4.0's source is not in the mirror, and npm's newest @pulumi/eks here is 4.3.0), and accepted for the same pin
(`EMULATED_FOR_PIN`). The lines each value comes from are in `SOURCE`; tests/tools/fixtures/pulumi_eks_source.yaml
holds their text and tests/tools/test_eks_children.py checks every cited line against it.

Emulated: the NodeGroup for a component given `cluster` as an `eks:index:Cluster` of the same program, and
`nodeRole` or `nodeRoleArn`. Not emulated (`uncovered_mng`): the custom launch template pulumi-eks builds when any
of `kubeletExtraArgs`, `bootstrapExtraArgs`, `bottlerocketSettings`, `nodeadmExtraOptions`, `enableIMDSv2`,
`userData`, `amiId`, `enableEfaSupport` is set (its user data and AMI lookup), the AMI type derived from
`operatingSystem`, and a `cluster` given as `CoreData` rather than the component. Then nothing is emulated, and the
preview lists the component as not seen offline; the policies that need what it holds are pending
(tools/engine/unseen.py), never "none". The node group's `dependsOn` on the cluster's node access (aws-auth
ConfigMap or access entry, `eksNodeAccess`) is not modelled: it orders steps, it does not change what is judged.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from typing import Any

from tools.engine.mocks.eks import eks_cluster_name
from tools.engine.mocks.eks_children import Child, Cite, Register, applied
from tools.engine.records import UNKNOWN, RecordedResource

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


def uncovered_mng(inputs: Mapping[str, Any], lookup: Callable[[str], RecordedResource | None]) -> list[str]:
    """Why the ManagedNodeGroup's child would not be emulated faithfully: one entry per reason (module docstring)."""
    why = [f"{key} (pulumi-eks's own launch template and user data)"
           for key in CUSTOM_LAUNCH_TEMPLATE_ARGS if inputs.get(key) is not None]
    if inputs.get("operatingSystem") is not None and inputs.get("amiType") is None:
        why.append("operatingSystem (the AMI type pulumi-eks derives from it)")
    cluster = inputs.get("cluster")
    if not (_is_urn(cluster, EKS_CLUSTER) and lookup(str(cluster)) is not None):
        why.append("cluster (given as CoreData, not as an eks.Cluster of this program)")
    if inputs.get("nodeRole") is None and inputs.get("nodeRoleArn") is None:
        why.append("nodeRole (neither nodeRole nor nodeRoleArn: pulumi-eks itself refuses it)")
    return why


def _cluster_child(cluster_urn: str, recorded: Mapping[str, RecordedResource]) -> RecordedResource | None:
    """The `aws:eks/cluster:Cluster` emulated under the pulumi-eks Cluster, when it was emulated."""
    return next((r for r in recorded.values() if r.parent == cluster_urn and r.type == "aws:eks/cluster:Cluster"),
                None)


def construct_managed_node_group(urn: str, name: str, inputs: Mapping[str, Any], *,
                                 recorded: Mapping[str, RecordedResource], register: Register) -> None:
    """Register, through `register`, the `aws:eks/nodeGroup:NodeGroup` pulumi-eks registers for a ManagedNodeGroup.

    `recorded`: what the program registered so far, by URN (the cluster component, the role); the caller checked
    that `uncovered_mng(inputs, recorded.get)` is empty.
    """
    cluster = recorded[str(inputs["cluster"])]
    eks_cluster = _cluster_child(cluster.urn, recorded)
    cluster_state = eks_cluster.outputs if eks_cluster is not None else {}

    if inputs.get("nodeRoleArn") is not None:
        role_arn = inputs["nodeRoleArn"]
    else:
        role = recorded.get(str(inputs["nodeRole"]))
        role_arn = role.outputs.get("arn", UNKNOWN) if role is not None else UNKNOWN

    version = inputs.get("version")
    if version is None and inputs.get("launchTemplate") is None:
        version = cluster.inputs.get("version", cluster_state.get("version", UNKNOWN))

    if inputs.get("subnetIds") is not None:
        subnets = inputs["subnetIds"]
    elif cluster.inputs.get("subnetIds") is not None:
        subnets = cluster.inputs["subnetIds"]
    elif cluster.inputs.get("publicSubnetIds") is not None or cluster.inputs.get("privateSubnetIds") is not None:
        public, private = cluster.inputs.get("publicSubnetIds") or [], cluster.inputs.get("privateSubnetIds") or []
        subnets = applied(public, private, build=lambda: [*public, *private])
    else:  # the default VPC's subnets, which pulumi-eks looks up (not answered offline)
        subnets = UNKNOWN

    scaling = inputs.get("scalingConfig")
    scaling_config = applied(scaling, build=lambda: {
        "desiredSize": (scaling or {}).get("desiredSize", 2),
        "minSize": (scaling or {}).get("minSize", 1),
        "maxSize": (scaling or {}).get("maxSize", 2),
    })
    # The aws cluster's name is assigned in Check (an auto-name when not given): known in a first preview too.
    cluster_name = inputs.get("clusterName") or cluster_state.get("name") or eks_cluster_name(cluster.name,
                                                                                             cluster.inputs)

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
    ignore = ("scalingConfig.desiredSize",) if inputs.get("ignoreScalingChanges") else ()
    register(Child("aws:eks/nodeGroup:NodeGroup", name, urn, child_inputs, True, SOURCE["nodeGroup"],
                   ignore_changes=ignore))

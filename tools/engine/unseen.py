"""What the offline gate cannot see, and the verdicts that wait on it: pending, never "none".

The real engine sees what the offline gate does not in two cases:

- A remote component whose children are not emulated (pulumi-eks's `NodeGroup`/`NodeGroupV2`, a `Cluster` with
  inputs outside its emulation, awsx, pulumi-kubernetes's `helm.sh/v4:Chart`, its `yaml/v2:ConfigGroup`/`ConfigFile`
  where the manifests are not local (tools/engine/mocks/kubernetes_yaml.py), any other multi-language component):
  its provider's Construct registers children that the real preview analyzes (pulumi/pulumi@1b5949891b
  pkg/resource/deploy/source_eval.go lines 2826-2882), and offline it does not run.
- A StackReference to a stack whose outputs were not given (`--stack-outputs`): the engine reads the referenced
  stack in every phase (pkg/resource/deploy/builtins.go lines 278-284, 371), offline its outputs are not known
  (tools/engine/mocks/monitor.py, `stack_reference_outputs`), so every value read from it is unknown, in every
  phase; a "can't run" advisory it may cause names `--stack-outputs` (`name_stack_outputs`).

A verdict waits on what was not seen only where the real preview's would (issue 55). Every value derived from an
unseen source is unknown offline, in every phase (tools/engine/mocks: an unemulated component's outputs, another
stack's, an unemulated pulumi-eks Cluster's), so a policy that reads one cannot run, as pulumi-policy decides it
(pulumi_policy/proxy.py lines 117-120 raise `UnknownValueError` on the read; policy.py lines 1012-1021 and 1098-1107
answer "can't run policy ... during preview"): `pending_offline` names that advisory `<policy>-pending`, with the
source, why it is unseen and what lets the gate judge it. A finding made from known values keeps its level. A
mandatory finding of a stack policy, when an unseen component may hold a type the stack policies read
(`SUBJECT_TYPES`), is `-pending` too: those findings are about what the stack lacks, which no read decides. The
real preview, which sees the children and reads the other stack, judges them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from tools.engine.coverage.schema import schema_children
from tools.engine.coverage.subjects import reads
from tools.engine.mocks.eks_children import not_emulated, uncovered
from tools.engine.mocks.eks_nodegroups import MANAGED_NODE_GROUP, uncovered_mng
from tools.engine.mocks.outputs import models_outputs
from tools.engine.mocks.stack_refs import outputs_for_reference
from tools.engine.records import RecordedResource, Violation, has_unknown

PENDING_SUFFIX = "-pending"  # the pack's own pending twins carry it too (policies/gpu_guard/base.py)
STACK_REFERENCE = "pulumi:pulumi:StackReference"

# The resource types the pack's stack policies read (policies/gpu_guard: inventory.py, homes.py and the rules;
# tests/tools/test_unseen.py fails when the pack names a type this list lacks).
SUBJECT_TYPES: frozenset[str] = frozenset({
    "aws:eks/cluster:Cluster", "aws:eks/nodeGroup:NodeGroup", "aws:eks/fargateProfile:FargateProfile",
    "aws:autoscaling/group:Group", "aws:ec2/launchTemplate:LaunchTemplate", "aws:ec2/subnet:Subnet",
    "aws:sqs/queue:Queue", "aws:cloudwatch/eventRule:EventRule", "aws:cloudwatch/eventTarget:EventTarget",
    "eks:index:Cluster",
    "kubernetes:apps/v1:Deployment", "kubernetes:apps/v1:DaemonSet", "kubernetes:apps/v1:StatefulSet",
    "kubernetes:apps/v1:ReplicaSet", "kubernetes:batch/v1:Job", "kubernetes:batch/v1:CronJob",
    "kubernetes:core/v1:Pod", "kubernetes:core/v1:PersistentVolumeClaim",
    "kubernetes:storage.k8s.io/v1:StorageClass", "kubernetes:policy/v1:PodDisruptionBudget",
    "kubernetes:autoscaling/v2:HorizontalPodAutoscaler", "kubernetes:keda.sh/v1alpha1:ScaledObject",
    "kubernetes:karpenter.sh/v1:NodePool", "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
    "kubernetes:eks.amazonaws.com/v1:NodeClass", "kubernetes:nvidia.com/v1alpha1:NVIDIADriver",
    "kubernetes:helm.sh/v3:Release", "kubernetes:helm.sh/v3:Chart", "kubernetes:helm.sh/v4:Chart",
    # What cost-budget prices (policies/gpu_guard/pricing/) and serving-endpoint-authenticated follows.
    "aws:ebs/fastSnapshotRestore:FastSnapshotRestore", "aws:ec2/natGateway:NatGateway", "aws:kms/key:Key",
    "kubernetes:core/v1:Service", "kubernetes:extensions/v1beta1:Ingress", "kubernetes:networking.k8s.io/v1:Ingress",
    "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotContent",
    # DRA claims a workload's GPUs come from (policies/gpu_guard/dra.py, CLAIM_TYPES).
    *(f"kubernetes:resource.k8s.io/{version}:{kind}" for version in ("v1", "v1beta2", "v1beta1")
      for kind in ("ResourceClaim", "ResourceClaimTemplate")),
})

_NODES = ("aws:eks/nodeGroup:NodeGroup", "aws:autoscaling/group:Group", "aws:ec2/launchTemplate:LaunchTemplate",
          "aws:ec2/launchConfiguration:", "aws:cloudformation/stack:Stack", "aws:ec2/securityGroup", "aws:iam/")

# What a component's provider may register beyond what its package schema's outputs name (tools/engine/coverage/
# schema.py: pulumi-eks's ManagedNodeGroup names only its aws.eks.NodeGroup), by component type: type prefixes.
# Sources: pulumi/pulumi-eks@7bf0c1b1 nodejs/eks/nodes/nodegroup.ts (createNodeGroup: a CloudFormation stack and a
# launch configuration; createNodeGroupV2: a launch template and an auto scaling group; createManagedNodeGroup: an
# aws.eks.NodeGroup and its launch template), nodejs/eks/cluster/cluster.ts (createCore). awsx's components register
# what their schema outputs name (https://github.com/pulumi/pulumi-awsx/blob/master/awsx/schema.json), except the
# ECR image (a docker build pushed to ECR) and the default VPC, whose outputs are ids.
COMPONENT_TYPES: dict[str, tuple[str, ...]] = {
    "eks:index:ManagedNodeGroup": _NODES,
    "eks:index:NodeGroup": _NODES,
    "eks:index:NodeGroupV2": _NODES,
    "eks:index:NodeGroupSecurityGroup": ("aws:ec2/securityGroup",),
    "eks:index:VpcCniAddon": ("aws:eks/addon:Addon",),
    "eks:index:Addon": ("aws:eks/addon:Addon",),
    "awsx:ecr:Image": ("docker", "aws:ecr/"),
    "awsx:ec2:DefaultVpc": ("aws:ec2/",),
}
# Why the gate did not build a component it builds in other cases (tools/engine/mocks/kubernetes_yaml.py).
NOT_BUILT: dict[str, str] = {
    "kubernetes:yaml/v2:ConfigFile": " (the gate builds its objects only from a local file known in this phase)",
    "kubernetes:yaml/v2:ConfigGroup": " (the gate builds its objects only from local files, YAML text and objects "
                                      "known in this phase)",
    "kubernetes:helm.sh/v4:Chart": " (Helm renders the chart's templates in the provider; the offline gate runs no "
                                   "Helm)",
}
PACKAGE_TYPES: dict[str, tuple[str, ...]] = {
    "eks": ("aws:", "kubernetes:", "pulumi:providers:"),
    "awsx": ("aws:",),
    "kubernetes": ("kubernetes:",),
}


@dataclass(frozen=True)
class Unseen:
    """One thing the offline gate did not see: its URN and type, what it may hold, why, and what lets it judge."""

    urn: str
    type: str
    holds: tuple[str, ...]  # type prefixes of what it may register or hold
    why: str
    judge: str

    def hides(self, type_: str) -> bool:
        return any(type_.startswith(prefix) for prefix in self.holds)


def component_holds(res: RecordedResource) -> tuple[str, ...]:
    """What a remote component's provider may register: its schema's resource outputs and `COMPONENT_TYPES`, else
    anything of its package (`PACKAGE_TYPES`; anything at all if the package is unknown)."""
    if res.type == "eks:index:Cluster":
        nodes = _NODES if res.inputs.get("skipDefaultNodeGroup") is not True else ()
        fargate = ("aws:eks/fargateProfile:FargateProfile",) if res.inputs.get("fargate") else ()
        return ("aws:eks/cluster:Cluster", "aws:eks/addon:Addon", "aws:eks/access", "aws:iam/", "aws:ec2/security",
                "kubernetes:core/v1:ConfigMap", "kubernetes:storage.k8s.io/v1:StorageClass", "pulumi:providers:",
                *nodes, *fargate)
    known = declared_holds(res.type)
    if known:
        return known
    return PACKAGE_TYPES.get(res.type.split(":", 1)[0], ("",))


def declared_holds(component_type: str) -> tuple[str, ...]:
    """What the pinned schema and `COMPONENT_TYPES` say a component registers; () when neither says anything."""
    return tuple(dict.fromkeys((*(schema_children(component_type) or ()),
                                *COMPONENT_TYPES.get(component_type, ()))))


def unseen_sources(resources: Sequence[RecordedResource],
                   answered: Callable[[str], bool]) -> list[Unseen]:
    """Every remote component whose children were not emulated, and every StackReference `answered` says no."""
    emulated_parents = {r.parent for r in resources if r.emulated}
    by_urn = {r.urn: r for r in resources}
    found: list[Unseen] = []
    for r in resources:
        extra = not_emulated(r.inputs) if r.type == "eks:index:Cluster" else []
        if r.remote and r.urn in emulated_parents and extra:
            found.append(Unseen(r.urn, r.type, tuple(k for _, kinds in extra for k in kinds),
                                "its children are emulated except what pulumi-eks adds for "
                                + ", ".join(why for why, _ in extra),
                                "`pulumi preview` with the provider judges them"))
        elif r.remote and r.urn not in emulated_parents:
            missing = (uncovered(r.inputs) if r.type == "eks:index:Cluster"
                       else uncovered_mng(r.inputs, by_urn.get) if r.type == MANAGED_NODE_GROUP else [])
            why = ("its provider registers its children, which do not run offline"
                   + (f" (emulated only without {', '.join(missing)})" if missing else "")
                   + NOT_BUILT.get(r.type, ""))
            found.append(Unseen(r.urn, r.type, component_holds(r), why,
                                "`pulumi preview` with the provider judges them"))
        elif r.custom and not r.read and not models_outputs(r.type):
            found.append(Unseen(r.urn, r.type, (), f"the offline mocks do not model the {r.type.split(':')[0]} "
                                                    "provider: what it computes is not known",
                                "`pulumi preview` with the provider judges it"))
        elif r.type == STACK_REFERENCE:
            name = str(r.inputs.get("name") or r.id or r.name)
            if not answered(name):
                found.append(Unseen(r.urn, r.type, ("",), f"stack {name!r}'s outputs were not given",
                                    f"pass them with `--stack-outputs {name}=FILE` (`pulumi stack output --json "
                                    f"--show-secrets --stack {name} > FILE`), or run `pulumi preview`, which reads "
                                    "that stack"))
    return found


def dependents(resources: Sequence[RecordedResource], sources: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """Every resource whose inputs come from one of `sources` (dependencies, property dependencies, provider), to
    every source they come from, transitively, in the order `sources` lists them."""
    order = {s: i for i, s in enumerate(dict.fromkeys(sources))}
    of: dict[str, set[str]] = {s: {s} for s in order}
    changed = True
    while changed:  # a fixed point: the recording lists resources in no dependency order
        changed = False
        for r in resources:
            deps = [*r.dependencies, *(u for urns in r.property_dependencies.values() for u in urns)]
            if r.provider:
                deps.append(r.provider.rsplit("::", 1)[0])
            found = set().union(*(of[d] for d in deps if d in of))
            if found - of.get(r.urn, set()):
                of.setdefault(r.urn, set()).update(found)
                changed = True
    return {urn: tuple(sorted(found, key=order.__getitem__)) for urn, found in of.items()}


def pending_offline(violations: Sequence[Violation], stack_policies: Iterable[str],
                    resources: Sequence[RecordedResource], unseen: Sequence[Unseen]) -> tuple[Violation, ...]:
    """`violations` with what waits on what was not seen made `<policy>-pending`, as the engine decides it:

    - a "can't run" advisory, pulumi-policy's own answer to a policy that read an unknown value (pulumi_policy/
      proxy.py lines 117-120 raise `UnknownValueError` on the read; policy.py lines 1012-1021 and 1098-1107 turn it
      into the advisory), whose unknown comes from an unseen source: `unknown_sources` names it;
    - a mandatory finding of a stack policy when an unseen component may register a type that policy reads
      (`SUBJECT_TYPES`, tools/engine/coverage/subjects.py): its findings are about what the stack lacks (no system
      node group, no device plugin on a pool), which no read of a value can decide.

    A resource policy's mandatory finding keeps its level: the policy reported it from values it read, all known
    (every value derived from an unseen source is unknown in every phase, tools/engine/mocks/monitor.py), as the
    real preview reports it; an unseen component's own registration is judged as the engine sends it, `{}`.
    """
    if not unseen:
        return tuple(violations)
    stack = frozenset(stack_policies)
    # Another stack's resources are no more seen by the real engine than here: only what reads its unknown outputs
    # waits (the pack says at advisory level what may live in that stack).
    hiding = [u for u in unseen if u.type != STACK_REFERENCE and any(u.hides(t) for t in SUBJECT_TYPES)]
    by_urn = {u.urn: u for u in unseen}
    reach = dependents(resources, list(by_urn))
    records = {r.urn: r for r in resources}
    out = []
    for v in violations:
        because: list[Unseen] = []
        if v.enforcement == "mandatory" and v.policy in stack:
            because = [u for u in hiding if reads(v.policy, u.holds)]
        elif v.enforcement != "mandatory" and CANT_RUN in v.message and not v.policy.endswith(PENDING_SUFFIX):
            because = [by_urn[s] for s in unknown_sources(v, records, reach, by_urn)]
        if not because:
            out.append(v)
        elif v.enforcement == "mandatory":
            out.append(replace(v, policy=v.policy + PENDING_SUFFIX, enforcement="advisory",
                               message=pending_message(v, because)))
        else:
            out.append(replace(v, policy=v.policy + PENDING_SUFFIX, message=unknown_read_message(v, because)))
    return tuple(out)


_READ = re.compile(r"value at \.(\S*) can't be known")


def unknown_sources(v: Violation, records: Mapping[str, RecordedResource], reach: Mapping[str, tuple[str, ...]],
                    unseen: Mapping[str, Unseen]) -> tuple[str, ...]:
    """The unseen sources the unknown value a "can't run" advisory names comes from, in `reach`'s order.

    A resource policy's advisory is on the resource it analyzed: the sources of the property it read (the
    property dependencies the engine records for that input; all the resource's sources when none are recorded for
    it). A stack policy's is on the stack (pulumi-policy sends no URN): the sources of that property of every
    resource whose value there is unknown. () when the unknown is the phase's own (an output not yet created, a
    value the cloud chooses at create).
    """
    match = _READ.search(v.message)
    key = match.group(1).split(".", 1)[0] if match else ""
    res = records.get(v.urn)
    if res is not None and res.type != "pulumi:pulumi:Stack":
        candidates = [res]
    else:
        candidates = [r for r in records.values() if key and has_unknown(r.outputs.get(key, r.inputs.get(key)))]
    found: dict[str, None] = {}
    for r in candidates:
        if not r.property_dependencies:  # no record of what each input comes from: any of its sources
            found.update(dict.fromkeys(s for s in reach.get(r.urn, ()) if s in unseen and s != r.urn))
            continue
        # An input the engine records no dependency for is the program's own value or the resource's own output
        # (unknown only as the phase makes it: a first preview, a value the cloud chooses at create).
        for dep in r.property_dependencies.get(key, ()):
            # The value is an output of `dep`: unknown because `dep` is unseen, else because of what `dep` reads.
            found.update(dict.fromkeys((dep,) if dep in unseen else (s for s in reach.get(dep, ()) if s in unseen)))
    return tuple(found)


CANT_RUN = "can't run policy"  # pulumi-policy's advisory for a policy that read an unknown (policy.py 1012-1021)


def name_stack_outputs(violations: Sequence[Violation], resources: Sequence[RecordedResource],
                       unseen: Sequence[Unseen]) -> tuple[Violation, ...]:
    """`violations`, each "can't run" advisory a StackReference not answered may cause naming `--stack-outputs`.

    A resource policy's advisory is on the resource it analyzed: it names the references that resource reads from. A
    stack policy's is on the stack (pulumi-policy sends no URN): it names every reference not answered that something
    in the stack reads from, since it may have read any of them.
    """
    references = {u.urn: u for u in unseen if source_is_reference(u)}
    if not references:
        return tuple(violations)
    reach = dependents(resources, references)
    read = [references[urn] for urn in references if any(urn in srcs and r != urn for r, srcs in reach.items())]
    out = []
    for v in violations:
        if CANT_RUN not in v.message or "--stack-outputs" in v.message:
            out.append(v)
            continue
        own = [references[s] for s in reach.get(v.urn, ()) if s in references]
        because = own or (read if _is_stack(v.urn, resources) else [])
        if not because:
            out.append(v)
            continue
        what = "; ".join(f"{u.why}; {u.judge}" for u in because)
        out.append(replace(v, message=f"{v.message} (it may read what another stack exports: {what})"))
    return tuple(out)


def _is_stack(urn: str, resources: Sequence[RecordedResource]) -> bool:
    return any(r.urn == urn and r.type == "pulumi:pulumi:Stack" for r in resources)


def source_is_reference(u: Unseen) -> bool:
    return u.type == STACK_REFERENCE


def unknown_read_message(v: Violation, because: Sequence[Unseen]) -> str:
    """The pending advisory of a policy that read a value unknown because it comes from an unseen source."""
    what = "; ".join(f"{u.type} '{u.urn.rsplit('::', 1)[-1]}': {u.why}; {u.judge}" for u in because)
    return (f"{v.policy} is pending offline: it read a value that comes from what the offline gate did not see, "
            f"unknown in every phase offline ({what}). {v.message}")


def pending_message(v: Violation, because: Sequence[Unseen]) -> str:
    """The pending advisory: every unseen source named, with why it is unseen and what lets the gate judge it."""
    what = "; ".join(f"{u.type} '{u.urn.rsplit('::', 1)[-1]}': {u.why}; {u.judge}" for u in because)
    return (f"{v.policy} is pending offline: it may read what the offline gate did not see ({what}). "
            f"What the pack found in what the gate saw: {v.message.rsplit(chr(10), 1)[-1]}")


def stack_policy_names(policies: Iterable[object]) -> frozenset[str]:
    """The names of the stack policies among GetAnalyzerInfo's `PolicyInfo`s."""
    return frozenset(str(getattr(p, "name", "")) for p in policies if getattr(p, "kind", "") == "stack")


def answered_by(other_stacks: Mapping[str, Mapping[str, object]], organization: str,
                project: str) -> Callable[[str], bool]:
    """Whether `--stack-outputs` answers the stack a StackReference names: the names resolved as the engine resolves
    them (tools/engine/mocks/stack_refs.py), never by a suffix."""
    return lambda name: outputs_for_reference(name, other_stacks, organization, project) is not None

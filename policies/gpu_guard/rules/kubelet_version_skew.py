"""kubelet-version-skew: a node's kubelet is not newer than the control plane and at most three minors older.

The kubelet version of a managed node group is its `version` (EKS defaults it to the cluster's, so
an absent value is within the skew); a group on a custom AMI (where EKS forbids `version`) and a
self-managed Auto Scaling group state it in the `gpu-platform.io/kubelet-version` tag. Karpenter
pools and groups without either take the kubelet of their AMI, which the stack does not state, so
they are not judged. The control plane is the EKS
cluster's `version`; when the stack holds no cluster there is nothing to compare. With several
clusters in one stack, a node group is compared with the cluster whose `name` its `clusterName`
names, else with the first.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import EKS_CLUSTER_TYPES, Deferred, build_inventory, deferred_get, get
from ..matrix import load_matrix
from ._matrix_common import judged, report_findings

NAME = "kubelet-version-skew"


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    if inv.control_plane_version is None:
        return
    by_name: dict[str, str | Deferred] = {}  # a version read only for the node groups of that cluster
    for resource in args.resources:
        if resource.resource_type in EKS_CLUSTER_TYPES:
            name, version = deferred_get(resource.props, "name"), deferred_get(resource.props, "version")
            if isinstance(name, str) and version is not None:
                by_name[name] = version
    for pool in inv.pools:
        if pool.kind == "karpenter-nodepool" or pool.kubelet_version is None:
            continue
        cluster = get(pool.props, "clusterName")
        found = by_name.get(str(cluster))
        control_plane = (found.value() if isinstance(found, Deferred) else str(found)) if found is not None \
            else inv.control_plane_version
        context = f"node group {pool.name!r} (kubelet {pool.kubelet_version}, control plane {control_plane})"
        report_findings(report, judged(matrix.kubelet_skew, control_plane, pool.kubelet_version), context=context,
                        urn=pool.urn, advisory_prefix=True)


stack_policy(
    name=NAME,
    description="A node's kubelet is not newer than the control plane and at most three minor versions older.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

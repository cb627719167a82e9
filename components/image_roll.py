"""When an unpinned GPU pool holds its image and when it rolls: the kubelet version the deployed pool reports.

A pool without `imageId` takes Canonical's current image for its OS and kubelet version from SSM at the
first deploy, and its launch template ignores later `imageId` changes, so the nodes do not roll whenever
Canonical publishes. That hold must end when the stack moves the pool to another kubelet version
(`cluster.kubernetesVersion` or the pool's `kubeletVersion`): otherwise the nodes keep the old version's
image while the `gpu-platform.io/kubelet-version` tag reports the new one, and the kubelet-version-skew
policy judges a version the nodes do not run.

So before registering the pool, the program reads the kubelet-version tag of the pool as deployed (the
managed node group, or the Auto Scaling group of a self-managed pool). When it differs from the stack's,
this run does not ignore `imageId`: the launch template gets a new version with the new kubelet version's
current image, and the pool rolls (a managed node group's rolling update; a self-managed group's instance
refresh). The next run finds the new tag and holds again. A pool that is not deployed yet, or a cluster
that does not exist yet, has nothing to roll.

Sources:
- Managed node group update on a new launch template version:
  https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html
- Auto Scaling group tag filters (`tag:<key>`): https://docs.aws.amazon.com/autoscaling/ec2/APIReference/API_DescribeAutoScalingGroups.html
- EKS ListNodegroups / DescribeNodegroup (tags): https://docs.aws.amazon.com/eks/latest/APIReference/API_DescribeNodegroup.html
"""

from __future__ import annotations

import pulumi_aws as aws

from components import access, labels

# Tag carrying the kubelet version of the image: a managed node group with a custom AMI must not set
# `version` ("If you specify launchTemplate, and your launch template uses a custom AMI, then don't
# specify version"), so the version is recorded here for people and policies.
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
KUBELET_VERSION_TAG = "gpu-platform.io/kubelet-version"


def deployed_kubelet_version(cluster_name: str, node_group_name: str, pool: str, *, self_managed: bool) -> str | None:
    """The kubelet-version tag of the deployed pool; None when the cluster or the pool does not exist yet."""
    if not access.cluster_exists(cluster_name):
        return None
    if not self_managed:
        if node_group_name not in (aws.eks.get_node_groups(cluster_name=cluster_name).names or []):
            return None
        found = aws.eks.get_node_group(cluster_name=cluster_name, node_group_name=node_group_name)
        return (found.tags or {}).get(KUBELET_VERSION_TAG)
    # `get_ami_ids` is the provider's aws_autoscaling_groups data source (names of the matching groups).
    groups = aws.autoscaling.get_ami_ids(filters=[
        aws.autoscaling.GetAmiIdsFilterArgs(name=f"tag:{labels.POOL_LABEL}", values=[pool]),
        aws.autoscaling.GetAmiIdsFilterArgs(name=f"tag:kubernetes.io/cluster/{cluster_name}", values=["owned"]),
    ]).names or []
    for name in groups:
        for tag in aws.autoscaling.get_group(name=name).tags or []:
            if tag.key == KUBELET_VERSION_TAG:
                return str(tag.value)
    return None


def rolls(deployed: str | None, wanted: str) -> bool:
    """Whether an unpinned pool must take a new image on this run: deployed on another kubelet version."""
    return deployed is not None and deployed != wanted

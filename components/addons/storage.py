"""EbsSnapshotStorage: the EBS CSI driver and the CSI snapshot controller, as EKS managed add-ons."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

import pulumi
import pulumi_aws as aws

from components import labels
from components.addons.pod_identity import pod_identity
from components.config import AddonsConfig

EBS_CSI_ADDON = "aws-ebs-csi-driver"
SNAPSHOT_CONTROLLER_ADDON = "snapshot-controller"
# The controller's service account in the add-on, and the AWS managed policy EKS documents for it.
# Source: https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html
EBS_CSI_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
EBS_CSI_POLICY = "service-role/AmazonEBSCSIDriverPolicy"
ADDON_NAMESPACE = "kube-system"


def ebs_csi_configuration(tags: Mapping[str, str] | None = None) -> dict[str, object]:
    """The add-on's configuration: the controller on the system nodes.

    The node DaemonSet keeps the add-on default (it tolerates every taint), since it must run on the
    GPU nodes that mount the model volumes.
    Source: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/charts/aws-ebs-csi-driver/values.yaml
    (controller.nodeSelector, node.tolerateAllTaints); the add-on's schema:
    `aws eks describe-addon-configuration --addon-name aws-ebs-csi-driver`.
    `controller.extraVolumeTags` (stack key `tags`, only when set) tags every volume the driver creates
    (https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/tagging.md).
    """
    controller: dict[str, object] = {"nodeSelector": labels.system_node_selector()}
    if tags:
        controller["extraVolumeTags"] = dict(tags)
    return {"controller": controller}


def kms_policy(key_arns: Sequence[str]) -> dict[str, object] | None:
    """What the driver needs to restore snapshots encrypted with customer-managed keys, scoped to those keys.

    Source: kubernetes-sigs/aws-ebs-csi-driver @ v1.64.0 docs/install.md:69-84 ("Encrypted EBS Volumes via
    KMS": kms:Decrypt, kms:GenerateDataKeyWithoutPlaintext, kms:CreateGrant; restrict the resource to the keys
    the driver needs). The AWS managed key aws/ebs needs none of this. The key's own policy must also let the
    account's IAM policies grant it (the default key policy does):
    https://docs.aws.amazon.com/kms/latest/developerguide/key-policy-default.html
    """
    keys = sorted(set(key_arns))
    if not keys:
        return None
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow",
        "Action": ["kms:CreateGrant", "kms:Decrypt", "kms:GenerateDataKeyWithoutPlaintext"],
        "Resource": keys,
    }]}


def snapshot_controller_configuration() -> dict[str, object]:
    """The snapshot controller on the system nodes.

    Source: https://docs.aws.amazon.com/eks/latest/userguide/csi-snapshot-controller.html; the schema:
    `aws eks describe-addon-configuration --addon-name snapshot-controller` (nodeSelector).
    """
    return {"nodeSelector": labels.system_node_selector()}


# Registration only (its arguments come from the pure functions above, tested directly); reached only by
# running the Pulumi program in-process, which mutmut's fork cannot: tests/components/test_serving_rendered.py.
# pragma: no mutate start
class EbsSnapshotStorage(pulumi.ComponentResource):
    """The EBS CSI driver (its controller with a Pod Identity role) and the CSI snapshot controller.

    `kms_key_arns`: customer-managed keys of the model snapshots; the driver's role may use them (`kms_policy`).

    The snapshot controller add-on installs the `snapshot.storage.k8s.io/v1` CRDs that the model volumes'
    VolumeSnapshot / VolumeSnapshotContent need, and binds pre-provisioned contents to their snapshots.

    Requires: Cluster (system node group, eks-pod-identity-agent).
    Conflicts: a self-managed EBS CSI driver or snapshot controller (Helm) in the same cluster.
    Sources:
    - https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html
    - https://docs.aws.amazon.com/eks/latest/userguide/csi-snapshot-controller.html
    - Add-on Pod Identity associations: https://docs.aws.amazon.com/eks/latest/userguide/add-ons-iam.html
    """

    ebs_csi: aws.eks.Addon
    snapshot_controller: aws.eks.Addon

    def __init__(
        self,
        name: str,
        config: AddonsConfig,
        *,
        cluster_name: pulumi.Input[str],
        kms_key_arns: Sequence[str] = (),
        tags: Mapping[str, str] | None = None,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:addons:EbsSnapshotStorage", name, None, opts)
        role, grants, _ = pod_identity(
            f"{name}-ebs-csi-identity", parent=self, cluster_name=cluster_name, namespace=ADDON_NAMESPACE,
            service_account=EBS_CSI_SERVICE_ACCOUNT, policy=kms_policy(kms_key_arns),
            managed_policies=[EBS_CSI_POLICY], associate=False)
        self.ebs_csi = aws.eks.Addon(
            f"{name}-ebs-csi",
            cluster_name=cluster_name,
            addon_name=EBS_CSI_ADDON,
            addon_version=config.ebs_csi_driver.version,
            configuration_values=json.dumps(ebs_csi_configuration(tags), sort_keys=True),
            pod_identity_associations=[aws.eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=EBS_CSI_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[*grants, *depends_on]),
        )
        self.snapshot_controller = aws.eks.Addon(
            f"{name}-snapshot-controller",
            cluster_name=cluster_name,
            addon_name=SNAPSHOT_CONTROLLER_ADDON,
            addon_version=config.snapshot_controller.version,
            configuration_values=json.dumps(snapshot_controller_configuration(), sort_keys=True),
            resolve_conflicts_on_create="OVERWRITE",
            resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions(parent=self, depends_on=list(depends_on)),
        )
        self.register_outputs({"ebsCsiVersion": config.ebs_csi_driver.version,
                               "snapshotControllerVersion": config.snapshot_controller.version})
# pragma: no mutate end

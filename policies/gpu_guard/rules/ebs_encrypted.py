"""ebs-encrypted: EBS StorageClasses and node root volumes are encrypted.

Model weights and node disks (container images, logs, scratch) sit on EBS; unencrypted volumes
and snapshots are readable by anyone who can copy them. Each place a volume is defined must say so:
the EBS CSI driver's `encrypted` parameter defaults to "false", and a managed node group without a
launch template gets a default root volume whose encryption this stack cannot set.

Sources:
- EKS Best Practices, data encryption: https://docs.aws.amazon.com/eks/latest/best-practices/data-encryption-and-secrets-management.html
- EBS CSI StorageClass parameters (`encrypted`, default "false"):
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/docs/parameters.md
- Launch template block device mappings: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateEbsBlockDeviceRequest.html
- Karpenter EC2NodeClass blockDeviceMappings (AL2/AL2023/Bottlerocket defaults are encrypted; Custom has none):
  https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
- Managed node group `diskSize` without a launch template: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
"""

from __future__ import annotations

from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import LAUNCH_TEMPLATE, NODE_GROUP, as_list, get
from .ebs_access_mode_supported import EBS_PROVISIONERS, STORAGE_CLASS

# Karpenter AMI families that ship encrypted default block device mappings.
# Source: https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
KARPENTER_ENCRYPTED_DEFAULT_FAMILIES = ("al2", "al2023", "bottlerocket")

# The managed node group root volume size EKS uses when `diskSize` is left out (Linux and Bottlerocket).
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html (diskSize)
EKS_DEFAULT_DISK_GIB = 20

_LT_FIX = ('blockDeviceMappings: [{deviceName: <root device>, ebs: {volumeType: gp3, volumeSize: 100, '
           'encrypted: "true"}}]')


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _storage_class(args: Any, report: ReportViolation) -> None:
    provisioner = str(get(args.props, "provisioner", default=""))
    if provisioner not in EBS_PROVISIONERS:
        return
    name = get(args.props, "metadata", "name", default=args.name)
    encrypted = get(args.props, "parameters", "encrypted")
    if encrypted == "true":
        return
    hint = (" (StorageClass parameters are strings: write \"true\", not a boolean)" if isinstance(encrypted, bool)
            else " (the driver's default is \"false\")")
    state = "unset" if encrypted is None else repr(encrypted)
    report(f"EBS StorageClass '{name}' ({provisioner}) has parameters.encrypted {state}; every EBS volume it "
           f"provisions must be encrypted{hint}. Fix: parameters: {{encrypted: \"true\"}} (optionally kmsKeyId).",
           args.urn)


def _launch_template(args: Any, report: ReportViolation) -> None:
    mappings = as_list(get(args.props, "blockDeviceMappings"))
    where = f"Launch template '{args.name}'"
    if not mappings:
        report(f"{where} sets no blockDeviceMappings, so the root volume's encryption depends on the AMI snapshot and "
               f"the account default, not on this stack. Fix: {_LT_FIX}.", args.urn)
        return
    for mapping in mappings:
        ebs = get(mapping, "ebs")
        if ebs is None:
            continue  # instance store / no device
        encrypted = get(ebs, "encrypted")
        if not _is_true(encrypted):
            device = get(mapping, "deviceName", default="?")
            state = "unset" if encrypted is None else repr(encrypted)
            report(f"{where}: block device {device} has ebs.encrypted {state}; node volumes must be encrypted. "
                   f"Fix: ebs.encrypted: \"true\" ({_LT_FIX}).", args.urn)


def _node_class(args: Any, report: ReportViolation) -> None:
    name = get(args.props, "metadata", "name", default=args.name)
    where = f"EC2NodeClass '{name}'"
    mappings = as_list(get(args.props, "spec", "blockDeviceMappings"))
    if not mappings:
        families = [str(get(t, "alias", default="")).split("@", 1)[0]
                    for t in as_list(get(args.props, "spec", "amiSelectorTerms"))]
        family = str(get(args.props, "spec", "amiFamily", default="")).lower()
        if any(f in KARPENTER_ENCRYPTED_DEFAULT_FAMILIES for f in families) or (
                family in KARPENTER_ENCRYPTED_DEFAULT_FAMILIES):
            return
        report(f"{where} sets no blockDeviceMappings and amiFamily {family or 'unset'} has no Karpenter default "
               "mapping, so the root volume comes unencrypted-or-not from the AMI. Fix: spec.blockDeviceMappings: "
               "[{deviceName: /dev/sda1, rootVolume: true, ebs: {volumeSize: 100Gi, volumeType: gp3, encrypted: "
               "true}}].", args.urn)
        return
    for mapping in mappings:
        ebs = get(mapping, "ebs")
        if ebs is None:
            continue
        encrypted = get(ebs, "encrypted")
        if encrypted is not True and str(encrypted).lower() != "true":
            device = get(mapping, "deviceName", default="?")
            state = "unset" if encrypted is None else repr(encrypted)
            report(f"{where}: blockDeviceMappings {device} has ebs.encrypted {state}; node volumes must be "
                   "encrypted. Fix: ebs.encrypted: true.", args.urn)


def _node_group(args: Any, report: ReportViolation) -> None:
    if get(args.props, "launchTemplate") is not None:
        return  # the launch template is judged on its own
    disk = get(args.props, "diskSize", default=EKS_DEFAULT_DISK_GIB)
    report(f"Managed node group '{args.name}' has no launch template, so EKS gives it a default {disk} GiB root volume "
           "whose encryption the stack cannot set or guarantee. Fix: use a launch template with an encrypted gp3 root "
           f"volume ({_LT_FIX}).", args.urn)


def validate(args: Any, report_violation: ReportViolation) -> None:
    rtype = args.resource_type
    if rtype == STORAGE_CLASS:
        _storage_class(args, report_violation)
    elif rtype == LAUNCH_TEMPLATE:
        _launch_template(args, report_violation)
    elif rtype == NODE_GROUP:
        _node_group(args, report_violation)
    elif rtype.startswith("kubernetes:karpenter.k8s.aws/") and rtype.endswith(":EC2NodeClass"):
        _node_class(args, report_violation)


POLICY = resource_policy(
    "ebs-encrypted",
    "EBS StorageClasses, launch-template and EC2NodeClass block devices are encrypted, and managed node groups use a "
    "launch template that says so.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)

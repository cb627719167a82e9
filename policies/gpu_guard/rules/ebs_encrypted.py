"""ebs-encrypted: EBS StorageClasses and node root volumes are encrypted.

Model weights and node disks (container images, logs, scratch) sit on EBS; unencrypted volumes
and snapshots are readable by anyone who can copy them. Each place a volume is defined must say so:
the EBS CSI driver's `encrypted` parameter defaults to "false", and a managed node group without a
launch template gets a default root volume whose encryption this stack cannot set.

Cannot see, cannot block (docs/own-stack.md, "What it cannot judge without our labels"). A node volume
whose `encrypted` the stack leaves unset (a managed node group without a launch template, a launch template
or EC2NodeClass without block device mappings, a mapping without `encrypted`) is encrypted when the
account's EBS encryption by default is on in the region: an account setting (ec2:GetEbsEncryptionByDefault)
that no preview shows. Such a volume goes to the advisory twin `ebs-encrypted-unseen`, which names what lets
the pack judge: `encrypted: "true"` in the stack, or the policy config property
`accountEbsEncryptionByDefault` stating the account's setting. Stated true: nothing to report. Stated
false: nothing in the stack or the account encrypts the volume, and `ebs-encrypted` says so (a fact given).
What the stack states itself (`encrypted: false`, a StorageClass without `encrypted`, whose driver default
is "false") is judged by `ebs-encrypted` as always.

Sources:
- EKS Best Practices, data encryption: https://docs.aws.amazon.com/eks/latest/best-practices/data-encryption-and-secrets-management.html
- EBS CSI StorageClass parameters (`encrypted`, default "false"):
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/docs/parameters.md
- Launch template block device mappings: https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_LaunchTemplateEbsBlockDeviceRequest.html
- Karpenter EC2NodeClass blockDeviceMappings (AL2/AL2023/Bottlerocket defaults are encrypted; Custom has none):
  https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
- Managed node group `diskSize` without a launch template: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html
- EBS encryption by default is a per-account, per-Region setting; new volumes follow it:
  https://docs.aws.amazon.com/ebs/latest/userguide/encryption-by-default.html and
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_GetEbsEncryptionByDefault.html
"""

from __future__ import annotations

from typing import Any

from pulumi_policy import PolicyConfigSchema

from ..base import UNSEEN_MARK, ReportViolation, resource_policy_with_unseen
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


ACCOUNT_DEFAULT = "accountEbsEncryptionByDefault"
CONFIG_SCHEMA = PolicyConfigSchema(properties={
    ACCOUNT_DEFAULT: {
        "type": "boolean",
        "description": "The account's EBS encryption by default in the stack's region (aws ec2 "
                       "get-ebs-encryption-by-default): what a node volume whose encryption the stack leaves "
                       "unset gets.",
    },
})
UNSEEN = "ebs-encrypted-unseen"


def _is_true(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def account_default(args: Any) -> bool | None:
    """The stack's stated account default (policy config `accountEbsEncryptionByDefault`); None when not stated."""
    value = (args.get_config() or {}).get(ACCOUNT_DEFAULT)
    return value if isinstance(value, bool) else None


def _unset(args: Any, report: ReportViolation, where: str, fix: str) -> None:
    """A volume whose `encrypted` the stack leaves to the account's default: `where` says which and why."""
    stated = account_default(args)
    if stated is True:
        return
    if stated is False:
        report(f"{where}, and the policy config says the account's EBS encryption by default is off "
               f"({ACCOUNT_DEFAULT}: false), so nothing in the stack or the account encrypts it. Fix: {fix}, or turn "
               "on EBS encryption by default in the account.", args.urn)
        return
    report(f"{UNSEEN_MARK}{where}: it is encrypted only if the account's EBS encryption by default is on in this "
           "region (an account setting, ec2:GetEbsEncryptionByDefault), which a preview cannot see. To let the pack "
           f"judge it: {fix}, or state the account's setting in the policy config of ebs-encrypted and {UNSEEN} "
           f"({ACCOUNT_DEFAULT}: true or false).", args.urn)


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
        _unset(args, report, f"{where} sets no blockDeviceMappings, so the root volume's encryption comes from the "
                             "AMI snapshot and the account default", _LT_FIX)
        return
    for mapping in mappings:
        ebs = get(mapping, "ebs")
        if ebs is None:
            continue  # instance store / no device
        encrypted = get(ebs, "encrypted")
        device = get(mapping, "deviceName", default="?")
        if encrypted is None:
            _unset(args, report, f"{where}: block device {device} has ebs.encrypted unset",
                   f"ebs.encrypted: \"true\" ({_LT_FIX})")
        elif not _is_true(encrypted):
            report(f"{where}: block device {device} has ebs.encrypted {encrypted!r}; node volumes must be encrypted. "
                   f"Fix: ebs.encrypted: \"true\" ({_LT_FIX}).", args.urn)


_NODE_CLASS_FIX = ("spec.blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {volumeSize: 100Gi, "
                   "volumeType: gp3, encrypted: true}}]")


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
        _unset(args, report, f"{where} sets no blockDeviceMappings and amiFamily {family or 'unset'} has no Karpenter "
                             "default mapping, so the root volume's encryption comes from the AMI and the account "
                             "default", _NODE_CLASS_FIX)
        return
    for mapping in mappings:
        ebs = get(mapping, "ebs")
        if ebs is None:
            continue
        encrypted = get(ebs, "encrypted")
        device = get(mapping, "deviceName", default="?")
        if encrypted is None:
            _unset(args, report, f"{where}: blockDeviceMappings {device} has ebs.encrypted unset",
                   "ebs.encrypted: true")
        elif not _is_true(encrypted):
            report(f"{where}: blockDeviceMappings {device} has ebs.encrypted {encrypted!r}; node volumes must be "
                   "encrypted. Fix: ebs.encrypted: true.", args.urn)


def _node_group(args: Any, report: ReportViolation) -> None:
    if get(args.props, "launchTemplate") is not None:
        return  # the launch template is judged on its own
    disk = get(args.props, "diskSize", default=EKS_DEFAULT_DISK_GIB)
    _unset(args, report, f"Managed node group '{args.name}' has no launch template, so EKS gives it a default {disk} "
                         "GiB root volume", f"use a launch template with an encrypted gp3 root volume ({_LT_FIX})")


def validate(args: Any, report: ReportViolation) -> None:
    """Every finding; those on what the stack leaves to the account's default carry UNSEEN_MARK."""
    rtype = args.resource_type
    if rtype == STORAGE_CLASS:
        _storage_class(args, report)
    elif rtype == LAUNCH_TEMPLATE:
        _launch_template(args, report)
    elif rtype == NODE_GROUP:
        _node_group(args, report)
    elif rtype.startswith("kubernetes:karpenter.k8s.aws/") and rtype.endswith(":EC2NodeClass"):
        _node_class(args, report)


POLICY = resource_policy_with_unseen(
    "ebs-encrypted",
    "EBS StorageClasses, launch-template and EC2NodeClass block devices and managed node group root volumes are "
    "encrypted: by the stack, or by the account's EBS encryption by default where the policy config states it.",
    validate,
    unseen_description="Advisory twin of ebs-encrypted: a node volume whose encryption the stack leaves to the "
                       "account's EBS encryption by default, which a preview cannot see; it names what lets the pack "
                       "judge.",
    config_schema=CONFIG_SCHEMA,
)

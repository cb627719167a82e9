"""`ebs-encrypted` and `imdsv2-required` on an EC2NodeClass, case by case with their whole messages.

Karpenter's defaults decide what an omitted field means: with no blockDeviceMappings, the AL2, AL2023 and
Bottlerocket families get an encrypted gp3 root volume, any other family (Custom: Ubuntu by AMI id) takes
whatever the AMI and the account's EBS encryption by default say (a mapping without `encrypted` too): the
pack cannot see that, so `ebs-encrypted-unseen` says it at advisory level; with no metadataOptions (or an
omitted field in them), httpTokens is required and the hop limit 1.
Source: https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
Source: https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.gpu_guard.base import all_policies, companions_of
from tests.policies.harness import run_policy, run_with_caveats

POLICIES = {p.name: p for p in all_policies()}
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
IMDS_FIX = ("Fix: remove spec.metadataOptions (Karpenter defaults to httpTokens: required, hop limit 1) or set "
            "httpTokens: required, httpPutResponseHopLimit: 1.")


def _messages(policy: str, spec: dict[str, Any]) -> list[str]:
    resource = {"type": NODE_CLASS, "name": "gpu", "props": {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"}, "spec": spec}}
    return [v.message for v in run_policy(POLICIES[policy], [resource], None).violations]


UNSEEN = (": it is encrypted only if the account's EBS encryption by default is on in this region (an account "
          "setting, ec2:GetEbsEncryptionByDefault), which a preview cannot see. To let the pack judge it: ")
CONFIG_HINT = (", or state the account's setting in the policy config of ebs-encrypted and ebs-encrypted-unseen "
               "(accountEbsEncryptionByDefault: true or false).")
NODE_CLASS_FIX = ("spec.blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {volumeSize: 100Gi, "
                  "volumeType: gp3, encrypted: true}}]")


def _verdicts(spec: dict[str, Any], config: dict[str, Any] | None = None) -> list[str]:
    resource = {"type": NODE_CLASS, "name": "gpu", "props": {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"}, "spec": spec}}
    outcome = run_with_caveats(POLICIES["ebs-encrypted"], companions_of("ebs-encrypted"), [resource], config)
    return [f"{v.level} {v.policy}: {v.message}" for v in outcome.violations]


@pytest.mark.parametrize(("spec", "messages"), [
    ({"amiSelectorTerms": [{"alias": "bottlerocket@v1.68.0"}]}, []),
    ({"amiSelectorTerms": [{"alias": "al2023@latest"}]}, []),
    ({"amiFamily": "AL2", "amiSelectorTerms": [{"id": "ami-1"}]}, []),
    ({"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-1"}]}, [
        "advisory ebs-encrypted-unseen: EC2NodeClass 'gpu' sets no blockDeviceMappings and amiFamily custom has no "
        "Karpenter default mapping, so the root volume's encryption comes from the AMI and the account default"
        f"{UNSEEN}{NODE_CLASS_FIX}{CONFIG_HINT}"]),
    ({"amiSelectorTerms": [{"id": "ami-1"}]}, [
        "advisory ebs-encrypted-unseen: EC2NodeClass 'gpu' sets no blockDeviceMappings and amiFamily unset has no "
        "Karpenter default mapping, so the root volume's encryption comes from the AMI and the account default"
        f"{UNSEEN}{NODE_CLASS_FIX}{CONFIG_HINT}"]),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": True}}]}, []),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": "true"}}]}, []),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1"}]}, []),  # no ebs block: nothing to encrypt
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": False}}]}, [
        "mandatory ebs-encrypted: EC2NodeClass 'gpu': blockDeviceMappings /dev/sda1 has ebs.encrypted False; node "
        "volumes must be encrypted. Fix: ebs.encrypted: true."]),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": True}},
                              {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "10Gi"}}]}, [
        "advisory ebs-encrypted-unseen: EC2NodeClass 'gpu': blockDeviceMappings /dev/xvdb has ebs.encrypted unset"
        f"{UNSEEN}ebs.encrypted: true{CONFIG_HINT}"]),
    ({"blockDeviceMappings": [{"ebs": {"encrypted": "no"}}]}, [
        "mandatory ebs-encrypted: EC2NodeClass 'gpu': blockDeviceMappings ? has ebs.encrypted 'no'; node volumes "
        "must be encrypted. Fix: ebs.encrypted: true."]),
])
def test_node_class_volumes_are_encrypted_by_mapping_or_by_karpenters_default(
        spec: dict[str, Any], messages: list[str]) -> None:
    assert _verdicts(spec) == messages


@pytest.mark.parametrize(("stated", "messages"), [
    (True, []),
    (False, ["mandatory ebs-encrypted: EC2NodeClass 'gpu': blockDeviceMappings /dev/xvdb has ebs.encrypted unset, "
             "and the policy config says the account's EBS encryption by default is off "
             "(accountEbsEncryptionByDefault: false), so nothing in the stack or the account encrypts it. Fix: "
             "ebs.encrypted: true, or turn on EBS encryption by default in the account."]),
    ("yes", ["advisory ebs-encrypted-unseen: EC2NodeClass 'gpu': blockDeviceMappings /dev/xvdb has ebs.encrypted "
             f"unset{UNSEEN}ebs.encrypted: true{CONFIG_HINT}"]),  # not a boolean: not a statement
])
def test_a_volume_left_to_the_account_default_is_judged_by_the_stated_default(stated: Any, messages: list[str]) -> None:
    spec = {"blockDeviceMappings": [{"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "10Gi"}}]}
    assert _verdicts(spec, {"accountEbsEncryptionByDefault": stated}) == messages


@pytest.mark.parametrize(("options", "messages"), [
    (None, []),
    ({}, []),
    ({"httpTokens": None, "httpPutResponseHopLimit": None}, []),  # explicit nulls are omitted fields
    ({"httpTokens": "required", "httpPutResponseHopLimit": 1}, []),
    ({"httpPutResponseHopLimit": 2}, []),
    ({"httpPutResponseHopLimit": 3}, [
        "EC2NodeClass 'gpu': spec.metadataOptions.httpPutResponseHopLimit is 3, above 2 (at most 2). " + IMDS_FIX]),
    ({"httpTokens": "optional"}, [
        "EC2NodeClass 'gpu': spec.metadataOptions.httpTokens is 'optional'; IMDSv2 requires 'required'. " + IMDS_FIX]),
    ({"httpEndpoint": "disabled", "httpTokens": "optional", "httpPutResponseHopLimit": 9}, []),  # no IMDS at all
    ({"httpEndpoint": "enabled", "httpTokens": "optional", "httpPutResponseHopLimit": 5}, [
        "EC2NodeClass 'gpu': spec.metadataOptions.httpTokens is 'optional'; IMDSv2 requires 'required'. " + IMDS_FIX,
        "EC2NodeClass 'gpu': spec.metadataOptions.httpPutResponseHopLimit is 5, above 2 (at most 2). " + IMDS_FIX]),
])
def test_node_class_metadata_options_require_imdsv2_with_a_short_hop(
        options: dict[str, Any] | None, messages: list[str]) -> None:
    spec = {} if options is None else {"metadataOptions": options}
    assert _messages("imdsv2-required", spec) == messages

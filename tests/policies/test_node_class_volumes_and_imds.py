"""`ebs-encrypted` and `imdsv2-required` on an EC2NodeClass, case by case with their whole messages.

Karpenter's defaults decide what an omitted field means: with no blockDeviceMappings, the AL2, AL2023 and
Bottlerocket families get an encrypted gp3 root volume, any other family (Custom: Ubuntu by AMI id) takes
whatever the AMI says; with no metadataOptions (or an omitted field in them), httpTokens is required and the
hop limit 1.
Source: https://karpenter.sh/docs/concepts/nodeclasses/#specblockdevicemappings
Source: https://karpenter.sh/docs/concepts/nodeclasses/#specmetadataoptions
"""

from __future__ import annotations

from typing import Any

import pytest

from policies.gpu_guard.base import all_policies
from tests.policies.harness import run_policy

POLICIES = {p.name: p for p in all_policies()}
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
EBS_FIX = ("Fix: spec.blockDeviceMappings: [{deviceName: /dev/sda1, rootVolume: true, ebs: {volumeSize: 100Gi, "
           "volumeType: gp3, encrypted: true}}].")
IMDS_FIX = ("Fix: remove spec.metadataOptions (Karpenter defaults to httpTokens: required, hop limit 1) or set "
            "httpTokens: required, httpPutResponseHopLimit: 1.")


def _messages(policy: str, spec: dict[str, Any]) -> list[str]:
    resource = {"type": NODE_CLASS, "name": "gpu", "props": {
        "apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass", "metadata": {"name": "gpu"}, "spec": spec}}
    return [v.message for v in run_policy(POLICIES[policy], [resource], None).violations]


@pytest.mark.parametrize(("spec", "messages"), [
    ({"amiSelectorTerms": [{"alias": "bottlerocket@v1.68.0"}]}, []),
    ({"amiSelectorTerms": [{"alias": "al2023@latest"}]}, []),
    ({"amiFamily": "AL2", "amiSelectorTerms": [{"id": "ami-1"}]}, []),
    ({"amiFamily": "Custom", "amiSelectorTerms": [{"id": "ami-1"}]}, [
        "EC2NodeClass 'gpu' sets no blockDeviceMappings and amiFamily custom has no Karpenter default mapping, so "
        f"the root volume comes unencrypted-or-not from the AMI. {EBS_FIX}"]),
    ({"amiSelectorTerms": [{"id": "ami-1"}]}, [
        "EC2NodeClass 'gpu' sets no blockDeviceMappings and amiFamily unset has no Karpenter default mapping, so "
        f"the root volume comes unencrypted-or-not from the AMI. {EBS_FIX}"]),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": True}}]}, []),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": "true"}}]}, []),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1"}]}, []),  # no ebs block: nothing to encrypt
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": False}}]}, [
        "EC2NodeClass 'gpu': blockDeviceMappings /dev/sda1 has ebs.encrypted False; node volumes must be encrypted. "
        "Fix: ebs.encrypted: true."]),
    ({"blockDeviceMappings": [{"deviceName": "/dev/sda1", "ebs": {"encrypted": True}},
                              {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "10Gi"}}]}, [
        "EC2NodeClass 'gpu': blockDeviceMappings /dev/xvdb has ebs.encrypted unset; node volumes must be encrypted. "
        "Fix: ebs.encrypted: true."]),
    ({"blockDeviceMappings": [{"ebs": {"encrypted": "no"}}]}, [
        "EC2NodeClass 'gpu': blockDeviceMappings ? has ebs.encrypted 'no'; node volumes must be encrypted. "
        "Fix: ebs.encrypted: true."]),
])
def test_node_class_volumes_are_encrypted_by_mapping_or_by_karpenters_default(
        spec: dict[str, Any], messages: list[str]) -> None:
    assert _messages("ebs-encrypted", spec) == messages


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

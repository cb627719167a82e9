"""What a self-managed node registers with, read back from its launch template's user data (node_labels.py).

The texts are pulumi-eks's own: its userdata.test.ts snapshots (tests/tools/fixtures, pulumi/pulumi-eks 7bf0c1b1), and
what tools/engine/mocks/eks_userdata.py writes for a GPU group in each user-data type. An ASG pool takes them.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from policies.gpu_guard.inventory import build_inventory
from policies.gpu_guard.node_labels import registered_by
from policies.gpu_guard.views import Taint
from tools.engine.mocks.eks_userdata import create_user_data

SNAP = Path(__file__).parents[1] / "tools" / "fixtures" / "pulumi_eks_userdata.test.ts.snap"
SNAPSHOTS = dict(re.findall(r'^exports\[`(.*?) 1`\] = `\n"(.*?)"\n`;$', SNAP.read_text(), flags=re.S | re.M))
CLUSTER = {"name": "gpu", "apiServerEndpoint": "https://ABC.gr7.us-west-2.eks.amazonaws.com",
           "certificateAuthority": "Q0E=", "serviceCidr": "10.100.0.0/16"}
GPU_TAINT = {"nvidia.com/gpu": {"value": "true", "effect": "NoSchedule"}}


def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


@pytest.mark.parametrize(("snapshot", "labels", "taints"), [
    ("createUserData linux should support empty taint values", {"ondemand": "true"},
     (Taint("mySpecialNodes", "", "NoSchedule"),)),
    ("createUserData linux should return the correct user data for a basic NodeGroup v2", {"ondemand": "true"}, ()),
    ("createUserData linux should return the correct user data for a basic ManagedNodeGroup", {}, ()),
    ("createUserData nodeadm should support empty taint values", {}, (Taint("mySpecialNodes", "", "NoSchedule"),)),
    ("createUserData nodeadm should return the correct user data for a basic NodeGroup v2", {"ondemand": "true"}, ()),
    ("createUserData bottlerocket should return the correct user data for a basic NodeGroup v2", {"ondemand": "true"},
     (Taint("os", "bottlerocket", "NoSchedule"),)),
    ("createUserData bottlerocket should support empty taint values", {"ondemand": "true"},
     (Taint("mySpecialNodes", "", "NoSchedule"),)),
])
def test_pulumi_eks_s_own_user_data_is_read_back(snapshot: str, labels: dict[str, str],
                                                 taints: tuple[Taint, ...]) -> None:
    assert registered_by(_b64(SNAPSHOTS[snapshot])) == (labels, taints)


@pytest.mark.parametrize("os_", ["AL2", "AL2023", "Bottlerocket"])
@pytest.mark.parametrize("kind", ["managed", "self-managed-v2"])
def test_the_gpu_taint_and_labels_of_every_user_data_type_are_read(os_: str, kind: str) -> None:
    args: dict[str, Any] = {"nodeGroupType": kind, "stackName": "gpu", "labels": {"role": "gpu", "tier": "a10g"},
                            "taints": GPU_TAINT}
    text = create_user_data(os_, CLUSTER, args)
    assert registered_by(_b64(text)) == ({"role": "gpu", "tier": "a10g"}, (Taint("nvidia.com/gpu", "true",
                                                                                 "NoSchedule"),))
    assert registered_by(_b64(create_user_data(os_, CLUSTER, {"nodeGroupType": kind, "stackName": "gpu"}))) == ({},
                                                                                                               ())


def test_a_nodeadm_kubelet_config_s_register_with_taints_is_read() -> None:
    text = ('MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="B"\n\n--B\nContent-Type: '
            "application/node.eks.aws\n\n---\napiVersion: node.eks.aws/v1alpha1\nkind: NodeConfig\nspec:\n  kubelet:\n"
            "    config:\n      registerWithTaints:\n        - key: nvidia.com/gpu\n          effect: NoExecute\n\n"
            "--B--\n")
    assert registered_by(_b64(text)) == ({}, (Taint("nvidia.com/gpu", "", "NoExecute"),))


def test_bottlerocket_lists_several_taints_under_one_key() -> None:
    text = '[settings.kubernetes.node-taints]\n"nvidia.com/gpu" = ["true:NoSchedule", "true:NoExecute"]\n'
    assert registered_by(_b64(text)) == ({}, (Taint("nvidia.com/gpu", "true", "NoSchedule"),
                                              Taint("nvidia.com/gpu", "true", "NoExecute")))


@pytest.mark.parametrize("value", [None, "", 3, "not base64 and not a script", _b64("\x00binary")])
def test_what_is_not_known_or_not_user_data_says_nothing(value: Any) -> None:
    assert registered_by(value) is None


def _resource(rtype: str, name: str, props: dict[str, Any], **deps: list[Any]) -> SimpleNamespace:
    return SimpleNamespace(resource_type=rtype, name=name, props=props, urn=f"urn:pulumi:test::p::{rtype}::{name}",
                           property_dependencies=deps)


def test_a_self_managed_group_takes_what_its_template_s_user_data_registers() -> None:
    user_data = _b64(create_user_data("AL2023", CLUSTER, {"nodeGroupType": "self-managed-v2", "stackName": "gpu",
                                                          "labels": {"role": "gpu"}, "taints": GPU_TAINT}))
    template = _resource("aws:ec2/launchTemplate:LaunchTemplate", "gpu-launchTemplate",
                         {"name": "gpu-launchTemplate-1a2b3c4", "instanceType": "g5.xlarge", "userData": user_data})
    group = _resource("aws:autoscaling/group:Group", "gpu", {"minSize": 0, "launchTemplate": {
        "name": "gpu-launchTemplate-1a2b3c4", "version": "1"}}, launchTemplate=[template])
    (pool,) = build_inventory([template, group]).pools
    assert (pool.kind, pool.labels, pool.instance_types) == ("self-managed", {"role": "gpu"}, ("g5.xlarge",))
    assert pool.taints == (Taint("nvidia.com/gpu", "true", "NoSchedule"),) and pool.has_gpu_taint

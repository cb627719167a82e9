"""components/karpenter's pure functions, whole-value, without running the Pulumi program.

The program-level tests (test_karpenter.py) run the program under the engine mocks, whose gRPC threads do not
survive mutmut's fork; these tests are what the mutation run of components/karpenter/ selects. Each asserts
the whole value a function returns, against the pinned upstream template where one exists.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

import pytest

from components.config import GpuPool, KarpenterConfig, KarpenterPoolConfig
from components.karpenter import controller, iam, interruption, pool
from tests.components.test_karpenter import template, upstream_statements

SCOPE = iam.Scope(partition="aws-cn", region="cn-north-1", account="111122223333", cluster="gpu-x")


def _pool(**changes: Any) -> KarpenterPoolConfig:
    entry = {"name": "p", "os": "bottlerocket", "driverVersion": "580", "imageVersion": "v1.68.0",
             "instanceTypes": ["g6.xlarge", "g5.xlarge"], **changes}
    return KarpenterPoolConfig.model_validate(entry)


def _gpu_pool(os: str = "bottlerocket") -> GpuPool:
    return GpuPool(name="p", kind="karpenter", os=os, driver_version="580", kubelet_version="1.35",
                   instance_types=("g6.xlarge",), use_precompiled=False, path=("karpenter", "pools", 0),
                   driver_path=("karpenter", "pools", 0, "driverVersion"), image_version="v1.68.0")


# --- iam ---------------------------------------------------------------------------------------------------


def test_scope_builds_every_arn_in_its_partition_region_and_account():
    assert SCOPE.ec2("subnet/*") == "arn:aws-cn:ec2:cn-north-1:*:subnet/*"
    assert SCOPE.ec2("image/*", account=False) == "arn:aws-cn:ec2:cn-north-1::image/*"
    assert SCOPE.iam("instance-profile/*") == "arn:aws-cn:iam::111122223333:instance-profile/*"
    assert SCOPE.cluster_arn == "arn:aws-cn:eks:cn-north-1:111122223333:cluster/gpu-x"
    assert SCOPE.owned == "kubernetes.io/cluster/gpu-x"


def test_pod_identity_trust_policy_is_exactly_the_documented_document():
    assert json.loads(iam.pod_identity_trust_policy()) == {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
                       "Action": ["sts:AssumeRole", "sts:TagSession"]}],
    }




def test_every_granted_statement_is_upstreams_statement_exactly():
    node_role, queue = "arn:aws-cn:iam::111122223333:role/n", "arn:aws-cn:sqs:cn-north-1:111122223333:q"
    documents = (iam.node_lifecycle_policy(SCOPE), iam.integration_policy(SCOPE, node_role, queue),
                 iam.resource_discovery_policy(SCOPE))
    assert {d["Version"] for d in documents} == {"2012-10-17"}
    ours = {s["Sid"]: s for d in documents for s in d["Statement"]}
    theirs = upstream_statements(SCOPE, node_role, queue)

    def norm(statement: dict[str, Any]) -> dict[str, Any]:
        out = dict(statement)
        for key in ("Action", "Resource"):
            value = out[key]
            out[key] = sorted(value) if isinstance(value, list) else [value]
        return out
    assert {sid: norm(s) for sid, s in ours.items()} == {sid: norm(theirs[sid]) for sid in ours}
    withheld = {a for sid, s in theirs.items() if sid not in ours for a in norm(s)["Action"]}
    assert withheld == set(iam.WITHHELD_ACTIONS)


# --- controller --------------------------------------------------------------------------------------------


def test_helm_values_are_exactly_these():
    config = KarpenterConfig.model_validate({"version": "1.14.1", "controllerReplicas": 3})
    assert controller.helm_values(config, "gpu-x", "gpu-x-karpenter", "cn-north-1") == {
        "replicas": 3,
        "nodeSelector": {"kubernetes.io/os": "linux", "gpu-platform.io/role": "system"},
        "settings": {"clusterName": "gpu-x", "interruptionQueue": "gpu-x-karpenter"},
        "controller": {"resources": {"requests": {"cpu": "1", "memory": "1Gi"},
                                     "limits": {"cpu": "1", "memory": "1Gi"}},
                       "env": [{"name": "AWS_REGION", "value": "cn-north-1"}]},
    }


def test_spot_service_linked_role_arn_and_options():
    arn = controller.spot_service_linked_role_arn("aws-cn", "111122223333")
    assert arn == "arn:aws-cn:iam::111122223333:role/aws-service-role/spot.amazonaws.com/AWSServiceRoleForEC2Spot"
    assert controller.spot_role_options("none", arn, None) is None  # type: ignore[arg-type]
    parent: Any = object()  # the controller component: both modes keep the role under it
    created = controller.spot_role_options("create", arn, parent)
    adopted = controller.spot_role_options("adopt", arn, parent)
    assert created is not None and adopted is not None
    assert created.parent is parent and adopted.parent is parent
    assert (created.retain_on_delete, created.import_, created.ignore_changes) == (True, None, None)
    assert (adopted.retain_on_delete, adopted.import_, adopted.ignore_changes) == (
        True, arn, ["description", "tags", "tagsAll"])


@pytest.mark.parametrize(("pools", "runs"), [
    ([], False), ([{"capacityTypes": ["on-demand"]}], False), ([{"capacityTypes": ["spot"]}], True),
    ([{"capacityTypes": ["on-demand"]}, {"name": "q", "capacityTypes": ["on-demand", "spot"]}], True),
])
def test_runs_spot_when_any_pool_may_launch_spot(pools, runs):
    entries = [{"name": "p", "os": "bottlerocket", "driverVersion": "580", "imageVersion": "v1.68.0",
                "instanceTypes": ["g6.xlarge"], **p} for p in pools]
    config = KarpenterConfig.model_validate({"version": "1.14.1", "pools": entries})
    assert config.runs_spot is runs
    assert config.spot_service_linked_role == "create"


# --- interruption ------------------------------------------------------------------------------------------


def test_queue_policy_is_the_upstream_one_with_an_allow_sid():
    arn = "arn:aws:sqs:us-west-2:111122223333:q"
    ours = json.loads(interruption.queue_policy(arn))
    theirs = template()["Resources"]["KarpenterInterruptionQueuePolicy"]["Properties"]["PolicyDocument"]
    assert ours["Version"] == "2012-10-17" and ours["Id"] == theirs["Id"] == "EC2InterruptionPolicy"
    allow, deny = ours["Statement"]
    up_allow, up_deny = theirs["Statement"]
    assert allow == {"Sid": "AllowEventBridge", "Effect": "Allow", "Principal": up_allow["Principal"],
                     "Action": up_allow["Action"], "Resource": arn}
    assert deny == {"Sid": "DenyHTTP", "Effect": "Deny", "Principal": "*", "Action": "sqs:*", "Resource": arn,
                    "Condition": {"Bool": {"aws:SecureTransport": "false"}}}
    assert (up_deny["Sid"], up_deny["Action"], up_deny["Principal"]) == ("DenyHTTP", "sqs:*", "*")


def test_event_pattern_and_queue_name():
    event = interruption.InterruptionEvent("spot", "aws.ec2", "EC2 Spot Instance Interruption Warning")
    assert json.loads(interruption.event_pattern(event)) == {
        "source": ["aws.ec2"], "detail-type": ["EC2 Spot Instance Interruption Warning"]}
    assert interruption.queue_name("gpu-dev") == "gpu-dev-karpenter"
    assert interruption.queue_name("c" * 100) == "c" * 70 + "-karpenter"
    assert len(interruption.queue_name("c" * 100)) == 80  # the SQS limit


def test_every_json_document_is_written_with_sorted_keys():
    """Sorted keys keep the rendered policies and patterns byte-stable, so a preview shows no spurious diff."""
    event = interruption.InterruptionEvent("spot", "aws.ec2", "EC2 Spot Instance Interruption Warning")
    for text in (iam.pod_identity_trust_policy(), interruption.event_pattern(event),
                 interruption.queue_policy("arn:aws:sqs:us-west-2:111122223333:q")):
        assert text == json.dumps(json.loads(text), sort_keys=True)


# --- pool --------------------------------------------------------------------------------------------------


def test_block_device_mappings_per_os():
    def volume(device: str, size: str) -> dict[str, Any]:
        return {"deviceName": device, "ebs": {"volumeSize": size, "volumeType": "gp3", "encrypted": True,
                                              "deleteOnTermination": True}}
    assert pool.block_device_mappings("bottlerocket", 120) == [volume("/dev/xvda", "4Gi"),
                                                               volume("/dev/xvdb", "120Gi")]
    assert pool.block_device_mappings("al2023", 120) == [volume("/dev/xvda", "120Gi")]
    assert pool.block_device_mappings("ubuntu-24.04", 120) == [volume("/dev/sda1", "120Gi")]


def test_metadata_options_are_imdsv2_hop_limit_one():
    assert pool.metadata_options() == {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                                       "httpPutResponseHopLimit": 1, "httpTokens": "required"}


def test_capacity_types_follow_karpenters_preference_with_the_fallback_added_once():
    assert pool.capacity_types(_pool(capacityTypes=["spot"], onDemandFallback=True)) == ["spot", "on-demand"]
    assert pool.capacity_types(_pool(capacityTypes=["on-demand", "spot"])) == ["spot", "on-demand"]
    assert pool.capacity_types(_pool(capacityTypes=["spot"])) == ["spot"]
    assert pool.capacity_types(_pool()) == ["on-demand"]
    assert pool.CAPACITY_PREFERENCE == ("spot", "on-demand")


def test_nodepool_spec_is_exactly_this():
    config = _pool(capacityTypes=["spot"], onDemandFallback=True, maxGpus=6, expireAfter="48h",
                   consolidateAfter="7m", terminationGracePeriod="2h")
    spec = pool.nodepool_spec(config, _gpu_pool(), arch="arm64")
    assert spec == {
        "weight": 100,
        "template": {
            "metadata": {"labels": {
                "gpu-platform.io/pool": "p", "gpu-platform.io/os": "bottlerocket", "gpu-platform.io/driver": "580",
                "gpu-platform.io/driver-source": "image", "nvidia.com/gpu.deploy.driver": "false",
                "nvidia.com/gpu.deploy.container-toolkit": "false", "nvidia.com/gpu.deploy.device-plugin": "false"}},
            "spec": {
                "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": "p"},
                "requirements": [
                    {"key": "node.kubernetes.io/instance-type", "operator": "In",
                     "values": ["g6.xlarge", "g5.xlarge"]},
                    {"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["spot", "on-demand"]},
                    {"key": "kubernetes.io/arch", "operator": "In", "values": ["arm64"]},
                    {"key": "kubernetes.io/os", "operator": "In", "values": ["linux"]},
                ],
                "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
                "expireAfter": "48h",
                "terminationGracePeriod": "2h",
            },
        },
        "limits": {"nvidia.com/gpu": "6"},
        "disruption": {"consolidationPolicy": "WhenEmptyOrUnderutilized", "consolidateAfter": "7m",
                       "budgets": [{"nodes": "1"}]},
    }
    assert _pool().termination_grace_period == "24h"


@pytest.mark.parametrize("branch", ["lts", "pb"])
def test_bottlerocket_branch_settings_are_the_toml_ghostdog_reads(branch):
    text = pool.bottlerocket_branch_settings(branch)
    assert tomllib.loads(text) == {"settings": {"kernel": {"drivers": {"nvidia": {"branch": branch}}}}}
    assert text.endswith("\n")

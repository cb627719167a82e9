"""Every rule of components/config.py, with one failing input each (and the edge it turns on).

Each case changes one key of a stack configuration that is valid under every rule (`VALID`) and
expects exactly one problem: the key's path, the rule's wording, and the nearest valid choice or fix
where the rule computes one. Numeric limits are tested on the limit and one past it.
"""

from __future__ import annotations

import copy
import json
from datetime import date
from typing import Any

import pulumi
import pytest

from components.config import (
    ConfigError,
    ConfigIssue,
    Problem,
    load_stack_config,
    matrix_advisories,
    parse_stack_config,
    promql,
)

ACM = "arn:aws:acm:us-west-2:111122223333:certificate/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"
WAF = "arn:aws:wafv2:us-west-2:111122223333:regional/webacl/gpu-dev/0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"

VALID: dict[str, Any] = {
    "cluster": {
        "name": "gpu-dev", "kubernetesVersion": "1.35", "vpcCidr": "10.0.0.0/16", "availabilityZones": 2,
        "endpointPublicAccessCidrs": ["203.0.113.0/24"],
        "opsReadOnlyPrincipalArn": "arn:aws:iam::111122223333:role/eks-mcp-readonly",
        "adminPrincipalArns": ["arn:aws:iam::111122223333:role/platform-admin"],
    },
    "systemNodeGroup": {"name": "system", "instanceTypes": ["m7i.large"], "minSize": 2, "desiredSize": 2,
                        "maxSize": 3, "diskSizeGiB": 50},
    "gpuOperator": {"version": "v26.7.0", "driverVersion": "580.173.02"},
    "gpuNodeGroups": [{"name": "a10g", "instanceTypes": ["g5.xlarge"], "os": "ubuntu-24.04",
                       "minSize": 0, "desiredSize": 1, "maxSize": 2, "diskSizeGiB": 100}],
    "karpenter": {"version": "1.14.1", "pools": [{
        "name": "gpu-spot", "os": "bottlerocket", "driverVersion": "580", "instanceTypes": ["g6.xlarge"],
        "capacityTypes": ["spot"], "onDemandFallback": True, "maxGpus": 8, "expireAfter": "720h",
        "consolidateAfter": "10m", "diskSizeGiB": 100, "imageVersion": "v1.26.0",
    }]},
    "inferenceServices": [{
        "name": "triton", "image": "nvcr.io/nvidia/tritonserver:25.01-py3", "cudaVersion": "12.8",
        "gpusPerReplica": 1, "port": 8000, "metricsPort": 8002, "nodePools": ["a10g", "gpu-spot"],
        "minReplicas": 0, "maxReplicas": 2,
        "autoscaling": {"query": "sum(rate(nv_inference_request_success[1m]))", "threshold": "100",
                        "activationThreshold": "1",
                        # What wakes it from zero (scaled-workload-wakes): the query reads Triton's own series.
                        "wakeSchedule": {"start": "0 7 * * 1-5", "end": "0 19 * * 1-5"}},
        "ingress": {"host": "inference.example.com", "certificateArn": ACM, "scheme": "internet-facing",
                    "wafAclArn": WAF},
        # A 1 GiB snapshot: read well inside the default startupSeconds at any rate (components/inference/budget.py),
        # and held by every sizeGiB from its lower bound up.
        "modelVolume": {"snapshotId": "snap-0123456789abcdef0", "sizeGiB": 100, "snapshotSizeGiB": 1,
                        "mountPath": "/models"},
    }],
    "addons": {"ebsCsiDriver": {"version": "v1.64.0-eksbuild.1"}, "keda": {"version": "2.20.2"}},
}


def _set(values: dict[str, Any], path: str, value: Any) -> dict[str, Any]:
    out = copy.deepcopy(values)
    target: Any = out
    parts = [int(p) if p.isdigit() else p for p in path.split(".")]
    for part in parts[:-1]:
        target = target[part]
    target[parts[-1]] = value
    return out


def _problems(values: dict[str, Any]) -> list[Problem]:
    config, problems = parse_stack_config(values)
    assert (config is None) == bool(problems)
    return problems


def _only_problem(path: str, value: Any) -> Problem:
    problems = _problems(_set(VALID, path, value))
    assert len(problems) == 1, [p.render("Pulumi.dev.yaml") for p in problems]
    return problems[0]


def test_the_valid_stack_passes_every_rule():
    assert _problems(VALID) == []


# (key, bad value, the rule's words, the nearest valid choice, the fix)
FIELD_RULES: list[tuple[str, Any, str, tuple[str, ...], str | None]] = [
    ('cluster.name', 'gpu dev!',
     "an EKS cluster name is 1-100 letters, digits, '-' or '_' and starts with a letter or digit",
     ('gpu-dev',), None),
    ('cluster.name', '-gpu',
     "an EKS cluster name is 1-100 letters, digits, '-' or '_' and starts with a letter or digit",
     ('gpu',), None),
    ('cluster.kubernetesVersion', 'v1.35.2',
     'a Kubernetes version is <major>.<minor> in quotes, such as "1.35"',
     ('1.35',), None),
    ('cluster.kubernetesVersion', '1.3',  # parses as a minor version, but the rule refuses it: no suggestion
     'a Kubernetes version is <major>.<minor> in quotes, such as "1.35"',
     (), None),
    ('cluster.kubernetesVersion', 'latest',
     'a Kubernetes version is <major>.<minor> in quotes, such as "1.35"',
     (), None),
    ('cluster.vpcCidr', '10.0.0.0/15',
     'the VPC CIDR must be between /16 and /24 (it is cut into 16 subnets)',
     ('10.0.0.0/16',), None),
    ('cluster.vpcCidr', '10.0.0.0/25',
     'the VPC CIDR must be between /16 and /24 (it is cut into 16 subnets)',
     ('10.0.0.0/24',), None),
    ('cluster.vpcCidr', '54.0.0.0/16',
     'the VPC CIDR must be an RFC 1918 private range',
     ('10.0.0.0/16',), None),
    ('cluster.vpcCidr', '10.0.0.1/16',
     'not an IPv4 network in CIDR notation (10.0.0.1/16 has host bits set)',
     ('10.0.0.0/16',), None),
    ('cluster.vpcCidr', 'ten/16',
     "not an IPv4 network in CIDR notation (Expected 4 octets in 'ten')",
     (), None),
    ('cluster.endpointPublicAccessCidrs', ['0.0.0.0/0'],
     'the public API endpoint must not be open to the whole internet (EKS best practices: restrict '
     'public access CIDRs)',
     (), 'list your office/VPN egress ranges, or use [] for a private-only endpoint'),
    ('cluster.endpointPublicAccessCidrs', ['203.0.113.7/24'],
     'not an IPv4 network in CIDR notation (203.0.113.7/24 has host bits set)',
     ('203.0.113.0/24',), None),
    ('cluster.opsReadOnlyPrincipalArn', 'arn:aws:sts::111122223333:assumed-role/ops/session',
     'an access entry principal is an IAM role or user ARN, arn:aws:iam::<12-digit account>:role/<name>',
     ('arn:aws:iam::111122223333:role/ops',), None),
    ('cluster.adminPrincipalArns', ['arn:aws:iam::1111:role/admin'],
     'an access entry principal is an IAM role or user ARN, arn:aws:iam::<12-digit account>:role/<name>',
     (), None),
    ('systemNodeGroup.name', 'System_Nodes',
     "a pool name is 1-32 lowercase letters, digits or '-', starting and ending with a letter or "
     'digit (it becomes a node label value and part of AWS resource names)',
     ('system-nodes',), None),
    ('systemNodeGroup.instanceTypes', ['m7i_large'],
     'an EC2 instance type is <family>.<size>, such as g6.xlarge',
     ('m7i.large',), None),
    ('systemNodeGroup.instanceTypes', ['large'],
     'an EC2 instance type is <family>.<size>, such as g6.xlarge',
     (), None),
    ('gpuOperator.version', '26.7.0',
     'a GPU Operator version is the Helm chart version, v<YY>.<MM>.<patch> such as v26.7.0',
     ('v26.7.0',), None),
    ('gpuOperator.version', 'v26.7',
     'a GPU Operator version is the Helm chart version, v<YY>.<MM>.<patch> such as v26.7.0',
     (), None),
    ('gpuOperator.driverVersion', 'R580',
     'write the driver version without the R prefix',
     ('580',), None),
    ('gpuOperator.driverVersion', '580.173.02.1',
     "driver version '580.173.02.1' is not an NVIDIA driver version; expected "
     '<branch>.<minor>[.<patch>] such as 580.173.02, or a branch such as 580',
     (), None),
    ('gpuOperator.driverVersion', 'v580.173.02',
     "driver version 'v580.173.02' is not an NVIDIA driver version; expected "
     '<branch>.<minor>[.<patch>] such as 580.173.02, or a branch such as 580',
     ('580.173.02',), None),
    ('karpenter.version', 'v1.14.1',
     'a chart version is <major>.<minor>.<patch> without a leading v, such as 1.14.1',
     ('1.14.1',), None),
    ('karpenter.version', '1.14',
     'a chart version is <major>.<minor>.<patch> without a leading v, such as 1.14.1',
     (), None),
    ('karpenter.pools.0.expireAfter', '30d',
     'a Karpenter duration is digits with s, m or h (720h, 10m, 1h30m) or Never',
     ('720h',), None),
    ('karpenter.pools.0.expireAfter', 'never',
     'a Karpenter duration is digits with s, m or h (720h, 10m, 1h30m) or Never',
     ('Never',), None),
    ('karpenter.pools.0.consolidateAfter', '600',
     'a Karpenter duration is digits with s, m or h (720h, 10m, 1h30m) or Never',
     ('600s',), None),
    ('karpenter.pools.0.consolidateAfter', 'soon',
     'a Karpenter duration is digits with s, m or h (720h, 10m, 1h30m) or Never',
     (), None),
    ('karpenter.pools.0.capacityTypes', ['spot', 'spot'],
     'each entry may appear only once',
     ('["spot"]',), None),
    ('inferenceServices.0.name', '9triton',
     "a service name is a DNS-1035 label: 1-40 lowercase letters, digits or '-', starting with a letter",
     ('svc-9triton',), None),
    ('inferenceServices.0.name', 'Triton_Server',
     "a service name is a DNS-1035 label: 1-40 lowercase letters, digits or '-', starting with a letter",
     ('triton-server',), None),
    ('inferenceServices.0.image', 'nvcr.io/nvidia/tritonserver',
     "pin the image: a reference without a tag or digest pulls whatever 'latest' is",
     ('nvcr.io/nvidia/tritonserver:<tag>',), None),
    ('inferenceServices.0.image', 'nvcr.io/nvidia/tritonserver:latest',
     "pin the image to a release tag or digest instead of 'latest'",
     (), None),
    ('inferenceServices.0.image', 'Not An Image',
     'not a container image reference; expected registry/repository:tag',
     (), None),
    ('inferenceServices.0.cudaVersion', 'cuda12',
     "CUDA version 'cuda12' is not a CUDA release; expected <major>.<minor>[.<update>] such as 12.8 or 12.2.2",
     (), None),
    ('inferenceServices.0.nodePools', ['a10g', 'a10g'],
     'each entry may appear only once',
     ('["a10g"]',), None),
    ('inferenceServices.0.autoscaling.threshold', '100rps',
     'a KEDA threshold is a number written as a string, such as "100"',
     ('100',), None),
    ('inferenceServices.0.autoscaling.activationThreshold', 'one',
     'a KEDA threshold is a number written as a string, such as "100"',
     (), None),
    ('inferenceServices.0.ingress.host', 'Inference.Example.com.',
     'an ingress host is a lowercase DNS name such as inference.example.com',
     ('inference.example.com',), None),
    ('inferenceServices.0.ingress.host', 'localhost',
     'an ingress host is a lowercase DNS name such as inference.example.com',
     (), None),
    ('inferenceServices.0.ingress.certificateArn', 'arn:aws:acm:us-west-2:111122223333:certificate/abc',
     'an ACM certificate ARN looks like arn:aws:acm:<region>:<12-digit account>:certificate/<uuid>',
     (), 'copy the CertificateArn from `aws acm list-certificates`'),
    ('inferenceServices.0.ingress.wafAclArn', WAF.replace(':regional/', ':global/'),
     'a regional WAFv2 web ACL ARN looks like arn:aws:wafv2:<region>:<12-digit account>:regional/webacl/<name>/<uuid>',
     (), 'copy the ARN from `aws wafv2 list-web-acls --scope REGIONAL`'),
    ('inferenceServices.0.modelVolume.snapshotId', 'SNAP-0123456789ABCDEF0',
     'an EBS snapshot id is snap- followed by 8 or 17 lowercase hex digits',
     ('snap-0123456789abcdef0',), 'copy the SnapshotId from `aws ec2 describe-snapshots --owner-ids self`'),
    ('inferenceServices.0.modelVolume.snapshotId', 'snap-0123',
     'an EBS snapshot id is snap- followed by 8 or 17 lowercase hex digits',
     (), 'copy the SnapshotId from `aws ec2 describe-snapshots --owner-ids self`'),
    ('inferenceServices.0.modelVolume.mountPath', 'models',
     'a mount path is an absolute path below /, such as /models',
     ('/models',), None),
    ('inferenceServices.0.modelVolume.mountPath', '/',
     'a mount path is an absolute path below /, such as /models',
     ('/models',), None),
    ('inferenceServices.0.modelVolume.mountPath', '/models//v1',
     'a mount path is an absolute path below /, such as /models',
     ('/models',), None),
]


@pytest.mark.parametrize(("path", "value", "rule", "nearest", "fix"), FIELD_RULES,
                         ids=[f"{p}={v!r}" for p, v, _, _, _ in FIELD_RULES])
def test_field_rule_rejects_a_bad_value_naming_the_key_and_the_nearest_choice(path, value, rule, nearest, fix):
    problem = _only_problem(path, value)
    key_path = tuple(int(p) if p.isdigit() else p for p in path.split("."))
    assert problem.path[:len(key_path)] == key_path
    assert (problem.rule, problem.nearest, problem.fix) == (rule, nearest, fix)


@pytest.mark.parametrize(("path", "value"), [
    ("cluster.vpcCidr", "10.0.0.0/16"), ("cluster.vpcCidr", "10.0.0.0/24"), ("cluster.vpcCidr", "172.16.0.0/20"),
    ("cluster.vpcCidr", "192.168.0.0/24"), ("cluster.endpointPublicAccessCidrs", ["0.0.0.0/1"]),
    ("cluster.endpointPublicAccessCidrs", []), ("cluster.name", "a"), ("cluster.name", "A" * 100),
    ("systemNodeGroup.name", "s"), ("systemNodeGroup.name", "a" * 32), ("inferenceServices.0.name", "t" * 40),
    ("karpenter.pools.0.expireAfter", "Never"), ("karpenter.pools.0.consolidateAfter", "1h30m"),
    ("inferenceServices.0.image", "nvcr.io/nvidia/tritonserver@sha256:" + "a" * 64),
    ("inferenceServices.0.image", "registry:5000/team/model:1.0"), ("inferenceServices.0.cudaVersion", "12.2.2"),
    ("inferenceServices.0.autoscaling.threshold", "0.5"), ("inferenceServices.0.modelVolume.mountPath", "/m"),
    ("inferenceServices.0.modelVolume.snapshotId", "snap-01234567"),
    ("cluster.opsReadOnlyPrincipalArn", "arn:aws:iam::111122223333:user/ops"),
])
def test_field_rule_accepts_the_edge_of_what_is_valid(path, value):
    assert _problems(_set(VALID, path, value)) == []


@pytest.mark.parametrize(("path", "limit", "past"), [
    ("cluster.availabilityZones", 2, 1), ("cluster.availabilityZones", 6, 7),
    ("systemNodeGroup.minSize", 1, 0), ("systemNodeGroup.maxSize", 100, 101),
    ("systemNodeGroup.diskSizeGiB", 20, 19), ("systemNodeGroup.diskSizeGiB", 16384, 16385),
    ("gpuNodeGroups.0.minSize", 0, -1), ("gpuNodeGroups.0.maxSize", 1000, 1001),
    ("gpuNodeGroups.0.diskSizeGiB", 30, 29), ("karpenter.pools.0.maxGpus", 1, 0),
    ("karpenter.pools.0.maxGpus", 10000, 10001), ("karpenter.pools.0.diskSizeGiB", 30, 29),
    ("inferenceServices.0.gpusPerReplica", 16, 17), ("inferenceServices.0.gpusPerReplica", 1, 0),
    ("inferenceServices.0.port", 1, 0), ("inferenceServices.0.metricsPort", 65535, 65536),
    ("inferenceServices.0.maxReplicas", 1000, 1001), ("inferenceServices.0.minReplicas", 0, -1),
    ("inferenceServices.0.modelVolume.sizeGiB", 1, 0), ("inferenceServices.0.modelVolume.sizeGiB", 16384, 16385),
])
def test_numeric_limit_is_accepted_on_the_limit_and_rejected_one_past_it(path, limit, past):
    values = _set(VALID, path, limit)
    if path == "systemNodeGroup.maxSize":
        values = _set(values, "systemNodeGroup.maxSize", limit)
    if path == "inferenceServices.0.minReplicas":
        values = _set(values, "inferenceServices.0.maxReplicas", 2)
    assert _problems(values) == []
    problem = _only_problem(path, past)
    assert problem.path == tuple(int(p) if p.isdigit() else p for p in path.split("."))
    assert problem.value == past


SIZES = [
    ("systemNodeGroup", {"minSize": 3, "desiredSize": 2, "maxSize": 4}, "(minSize is 3)", "3"),
    ("systemNodeGroup", {"minSize": 1, "desiredSize": 5, "maxSize": 4}, "(maxSize is 4)", "4"),
    ("gpuNodeGroups.0", {"minSize": 2, "desiredSize": 1, "maxSize": 4}, "(minSize is 2)", "2"),
    ("gpuNodeGroups.0", {"minSize": 0, "desiredSize": 3, "maxSize": 2}, "(maxSize is 2)", "2"),
]


@pytest.mark.parametrize(("where", "sizes", "rule", "nearest"), SIZES, ids=[f"{w}-{r}" for w, _, r, _ in SIZES])
def test_desired_size_must_sit_between_min_and_max(where, sizes, rule, nearest):
    values = copy.deepcopy(VALID)
    for key, size in sizes.items():
        values = _set(values, f"{where}.{key}", size)
    (problem,) = _problems(values)
    assert problem.path[-1] == "desiredSize"
    assert f"minSize <= desiredSize <= maxSize must hold {rule}" in problem.rule
    assert problem.nearest == (nearest,)


def test_desired_size_may_equal_min_and_max():
    values = _set(_set(_set(VALID, "systemNodeGroup.minSize", 2), "systemNodeGroup.desiredSize", 2),
                  "systemNodeGroup.maxSize", 2)
    assert _problems(values) == []


def _karpenter_pool(**changes: Any) -> dict[str, Any]:
    pool = {**VALID["karpenter"]["pools"][0], **changes}
    return _set(VALID, "karpenter.pools.0", pool)


def test_on_demand_fallback_needs_spot_only_capacity():
    (problem,) = _problems(_karpenter_pool(capacityTypes=["spot", "on-demand"]))
    assert problem.path[-1] == "onDemandFallback"
    assert "only makes sense when capacityTypes is [spot]" in problem.rule
    assert problem.nearest == ("false",)
    assert _problems(_karpenter_pool(capacityTypes=["spot", "on-demand"], onDemandFallback=False)) == []


@pytest.mark.parametrize("os", ["bottlerocket", "al2023"])
def test_a_baked_image_pool_takes_a_branch_not_a_version(os):
    (problem,) = _problems(_karpenter_pool(os=os, driverVersion="580.95.05"))
    assert problem.path[-1] == "driverVersion"
    assert f"a {os} image bakes a driver branch" in problem.rule
    assert problem.nearest == ("580",)


@pytest.mark.parametrize("os", ["ubuntu-22.04", "ubuntu-24.04"])
def test_an_ubuntu_karpenter_pool_takes_a_full_driver_version(os):
    (problem,) = _problems(_karpenter_pool(os=os, driverVersion="580", onDemandFallback=False, imageVersion=None))
    assert problem.path[-1] == "driverVersion"
    assert "an Ubuntu pool's driver is installed by the operator; give the full driver version" in problem.rule
    assert problem.fix and "gpu-platform matrix drivers" in problem.fix


@pytest.mark.parametrize(("os", "example"), [("bottlerocket", "v1.26.0"), ("al2023", "v20251120")])
def test_a_baked_image_pool_pins_its_image_release(os, example):
    (problem,) = _problems(_karpenter_pool(os=os, imageVersion=None))
    assert problem.path[-1] == "imageVersion"
    assert f"pin the {os} image release: without it the alias is {os}@latest" in problem.rule
    assert problem.nearest == (example,)
    (bad,) = _problems(_karpenter_pool(os=os, imageVersion="latest"))
    assert "an image release is v followed by its version" in bad.rule
    assert bad.nearest == (example,)
    assert _problems(_karpenter_pool(os=os, imageVersion="v2")) == []


def test_an_ubuntu_pool_takes_no_image_release():
    (problem,) = _problems(_karpenter_pool(os="ubuntu-24.04", driverVersion="580.173.02", onDemandFallback=False))
    assert problem.path[-1] == "imageVersion"
    assert "imageVersion pins a Bottlerocket or AL2023 alias; Ubuntu pools do not use one" in problem.rule
    assert problem.fix == "remove imageVersion"


def test_metrics_port_must_differ_from_the_port():
    (problem,) = _problems(_set(VALID, "inferenceServices.0.metricsPort", 8000))
    assert (problem.path[-1], problem.rule, problem.nearest) == ("metricsPort", "metricsPort must differ from port",
                                                                 ("8002",))


def test_min_replicas_may_not_exceed_max_replicas():
    (problem,) = _problems(_set(VALID, "inferenceServices.0.minReplicas", 3))
    assert problem.path[-1] == "minReplicas"
    assert "minReplicas <= maxReplicas must hold (maxReplicas is 2)" in problem.rule
    assert problem.nearest == ("2",)
    assert _problems(_set(VALID, "inferenceServices.0.minReplicas", 2)) == []


def test_a_gpu_pool_may_not_take_the_system_node_group_name():
    values = _set(_set(VALID, "gpuNodeGroups.0.name", "system"), "inferenceServices.0.nodePools", ["gpu-spot"])
    (problem,) = _problems(values)
    assert problem.path == ("gpuNodeGroups", 0, "name")
    assert "GPU pool names must differ from the system node group name" in problem.rule
    assert problem.nearest == ("system-gpu",)


def test_pool_names_are_unique_across_node_groups_and_karpenter_pools():
    values = _set(_set(VALID, "karpenter.pools.0.name", "a10g"), "inferenceServices.0.nodePools", ["a10g"])
    (problem,) = _problems(values)
    assert problem.path == ("karpenter", "pools", 0, "name")
    assert "pool names must be unique across gpuNodeGroups and karpenter.pools; gpuNodeGroups[0].name" in problem.rule
    assert problem.nearest == ("a10g-2",)


def test_service_names_are_unique():
    values = copy.deepcopy(VALID)
    values["inferenceServices"].append(copy.deepcopy(values["inferenceServices"][0]))
    (problem,) = _problems(values)
    assert problem.path == ("inferenceServices", 1, "name")
    assert problem.rule == "service names must be unique"
    assert problem.nearest == ("triton-2",)


def test_node_pools_name_only_defined_pools():
    (problem,) = _problems(_set(VALID, "inferenceServices.0.nodePools", ["a10g", "gpu-spt"]))
    assert problem.path == ("inferenceServices", 0, "nodePools", 1)
    assert "nodePools may only name pools defined in gpuNodeGroups or karpenter.pools" in problem.rule
    assert problem.nearest == ("gpu-spot",)


def test_an_ubuntu_pool_needs_the_gpu_operator():
    values = copy.deepcopy(VALID)
    del values["gpuOperator"]
    (problem,) = _problems(values)
    assert problem.path == ("gpuNodeGroups", 0, "name")
    assert "Ubuntu GPU pools get their driver from the GPU Operator" in problem.rule
    assert problem.fix and "gpu-platform:gpuOperator" in problem.fix


def test_inference_services_need_a_gpu_pool():
    values = copy.deepcopy(VALID)
    del values["gpuNodeGroups"], values["karpenter"]
    values["inferenceServices"][0]["nodePools"] = []
    problems = _problems(values)
    assert [p.rule for p in problems] == ["inference services need at least one GPU pool"]
    assert problems[0].fix == "add a gpuNodeGroups entry or a karpenter pool"


def test_an_adopted_cluster_takes_no_vpc_cidr():
    (problem,) = _problems(_set(VALID, "cluster.existing", True))
    assert problem.path == ("cluster", "vpcCidr")
    assert "existing: true adopts the cluster's own VPC; vpcCidr would be ignored" in problem.rule
    values = _set(VALID, "cluster.existing", True)
    del values["cluster"]["vpcCidr"]
    assert _problems(values) == []


def test_config_issue_carries_value_path_nearest_and_fix():
    issue = ConfigIssue("rule", value=1, path=("a",), nearest=["b"], fix="c")
    assert (str(issue), issue.rule, issue.value, issue.path, issue.nearest, issue.fix) == (
        "rule", "rule", 1, ("a",), ("b",), "c")


def test_an_ami_id_is_pinned_in_its_canonical_form():
    (upper,) = _problems(_set(VALID, "gpuNodeGroups.0.imageId", "AMI-0123456789ABCDEF0"))
    assert upper.path == ("gpuNodeGroups", 0, "imageId")
    assert upper.rule == "an AMI id is ami- followed by 8 or 17 lowercase hex digits"
    assert upper.nearest == ("ami-0123456789abcdef0",)
    assert upper.fix == "run `.venv/bin/gpu-platform matrix images --stack <stack>` for the parameter to read it from"
    (short,) = _problems(_set(VALID, "gpuNodeGroups.0.imageId", "ami-123"))
    assert short.nearest == ()
    assert _problems(_set(VALID, "gpuNodeGroups.0.imageId", "ami-01234567")) == []
    assert _problems(_set(VALID, "gpuNodeGroups.0.imageId", "ami-0123456789abcdef0")) == []


GENERIC_RULES: list[tuple[str, Any, str, tuple[str, ...], str | None]] = [
    ("karpenter.pools.0.capacityTypes", ["Spot"], "must be one of on-demand, spot", ("spot",), None),
    ("karpenter.pools.0.os", "ubuntu", "must be one of ubuntu-22.04, ubuntu-24.04, ubuntu-26.04, bottlerocket, al2023",
     ("ubuntu-24.04",), None),
    ("inferenceServices.0.ingress.scheme", "Internal", "must be one of internet-facing, internal", ("internal",),
     None),
    ("gpuNodeGroups.0.os", "ubuntu-20.04", "must be one of ubuntu-22.04, ubuntu-24.04, ubuntu-26.04", ("ubuntu-24.04",),
     None),
    ("gpuNodeGroups.0.capacityType", "Spot", "must be one of on-demand, spot", ("spot",), None),
    ("systemNodeGroup.amiType", "AL2_x86_64", "must be one of AL2023_x86_64_STANDARD", ("AL2023_x86_64_STANDARD",),
     None),
    ("cluster.availabilityZones", "2", "must be an integer", ("2",), "write the number without quotes"),
    ("cluster.existing", "yes", "must be true or false", (), None),
    ("karpenter.pools.0.instanceTypes", [], "at least 1 item", (), "give at least one entry"),
]


@pytest.mark.parametrize(("path", "value", "rule", "nearest", "fix"), GENERIC_RULES,
                         ids=[f"{p}={v!r}" for p, v, _, _, _ in GENERIC_RULES])
def test_type_choice_and_length_rules_name_the_key_and_the_nearest_choice(path, value, rule, nearest, fix):
    problem = _only_problem(path, value)
    key_path = tuple(int(p) if p.isdigit() else p for p in path.split("."))
    assert problem.path[:len(key_path)] == key_path
    assert rule in problem.rule
    assert problem.nearest == nearest
    assert problem.fix == fix


@pytest.mark.parametrize(("where", "typo", "meant"), [
    ("cluster", "kubernetesVerison", "kubernetesVersion"),
    ("", "clutser", "cluster"),
])
def test_an_unknown_key_is_refused_with_the_key_it_was_probably_meant_to_be(where, typo, meant):
    values = copy.deepcopy(VALID)
    (values[where] if where else values)[typo] = "1.35"
    (problem,) = _problems(values)
    assert problem.path[-1] == typo
    assert f"unknown key '{'gpu-platform:' if not where else ''}{typo}'" == problem.rule
    assert problem.nearest == (meant,)


# --------------------------------------------------------------------------------------------------
# Rules that consult the compatibility matrix: each blames one key (load_stack_config with check_matrix)

MATRIX_TODAY = date(2026, 11, 29)


def _matrix_rejection(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file="Pulumi.dev.yaml", check_matrix=True, today=MATRIX_TODAY)
    return str(caught.value)


def test_the_valid_stack_passes_the_matrix_with_no_advisory():
    config = load_stack_config(VALID, stack_file="Pulumi.dev.yaml", check_matrix=True, today=MATRIX_TODAY)
    assert matrix_advisories(config, stack_file="Pulumi.dev.yaml", today=MATRIX_TODAY) == []


@pytest.mark.parametrize(("path", "value", "blamed"), [
    ("systemNodeGroup.instanceTypes", ["g5.xlarge"],
     'systemNodeGroup.instanceTypes[0] = "g5.xlarge": the system node group is untainted and must not use GPU '
     "instances (GPU nodes carry the nvidia.com/gpu taint and belong in a GPU pool); nearest valid choice: m7i.large"),
    ("gpuOperator.version", "v26.4.9",
     'gpuOperator.version = "v26.4.9": not a GPU Operator release the compatibility matrix knows; nearest valid '
     "choice: "),
    ("gpuOperator.version", "v99.1.0",  # newer than the matrix: to add, never a downgrade (issue 46)
     'gpuOperator.version = "v99.1.0": GPU Operator v99.1.0 is newer than the matrix (its newest release is '
     "v26.7.0;"),
    ("gpuNodeGroups.0.instanceTypes", ["g5.huge"],
     'gpuNodeGroups[0].instanceTypes[0] = "g5.huge": instance type g5.huge is not a size of the g5 family'),
    ("gpuNodeGroups.0.kubeletVersion", "1.30",
     'gpuNodeGroups[0].kubeletVersion = "1.30": kubelet 1.30 is 5 minor versions older than the control plane 1.35'),
    ("gpuOperator.version", "v24.9.0",
     'gpuOperator.version = "v24.9.0": GPU Operator v24.9.0 supports Kubernetes 1.25-1.28 on Amazon EKS (none of '
     "them an Amazon EKS version in the matrix), not 1.35"),
    ("gpuNodeGroups.0.os", "ubuntu-26.04",
     'gpuOperator.driverVersion = "580.173.02": driver 580.173.02 has no published image '
     "nvcr.io/nvidia/driver:580.173.02-ubuntu26.04 (NVIDIA builds 580.173.02 only for ubuntu22.04, ubuntu24.04, not "
     "ubuntu26.04; the container would sit in ImagePullBackOff; R580 was never built for ubuntu26.04); also GPU "
     "Operator v26.7.0 does not support driver branch R580 (driver 580.173.02) on ubuntu-26.04; it supports R595, "
     "R610 there. NVIDIA never built R580 for ubuntu-26.04; its driver images start at R595; nearest valid choice: "
     "595.91.07"),  # R610 is past its end of life (2026-08): not suggested (issue 39)
    ("gpuOperator.driverVersion", "535.309.01",
     'gpuOperator.driverVersion = "535.309.01": driver 535.309.01 has no published image '
     "nvcr.io/nvidia/driver:535.309.01-ubuntu24.04"),
    ("cluster.kubernetesVersion", "1.33",
     'cluster.kubernetesVersion = "1.33": EKS 1.33 left standard support on 2026-07-29 and is in extended support'),
])
def test_a_matrix_finding_blames_the_key_that_causes_it(path, value, blamed):
    assert f"Pulumi.dev.yaml: {blamed}" in _matrix_rejection(_set(VALID, path, value))


def test_an_ubuntu_26_04_pool_on_r595_passes_and_only_the_operator_support_statement_is_advisory():
    """Issue 32: R595 on Ubuntu 26.04 under EKS 1.35 passes; an operator release that predates NVIDIA's 26.04
    support statement (v26.3.3) is an advisory blamed on gpuOperator.version, suggesting v26.7.0 (which passes)."""
    r595 = _set(_set(VALID, "gpuNodeGroups.0.os", "ubuntu-26.04"), "gpuOperator.driverVersion", "595.91.07")
    config = load_stack_config(r595, stack_file="Pulumi.dev.yaml", check_matrix=True, today=MATRIX_TODAY)
    assert matrix_advisories(config, stack_file="Pulumi.dev.yaml", today=MATRIX_TODAY) == []
    older = _set(r595, "gpuOperator.version", "v26.3.3")
    config = load_stack_config(older, stack_file="Pulumi.dev.yaml", check_matrix=True, today=MATRIX_TODAY)
    (advisory,) = matrix_advisories(config, stack_file="Pulumi.dev.yaml", today=MATRIX_TODAY)
    assert advisory.startswith(
        'Pulumi.dev.yaml: gpuOperator.version = "v26.3.3": GPU Operator v26.3.3 does not list ubuntu-26.04 as a '
        "supported OS (it lists ubuntu-22.04, ubuntu-24.04; NVIDIA lists ubuntu-26.04 from v26.7.0 on)."
    )
    assert advisory.endswith("; nearest valid choice: v26.7.0")


def test_an_ubuntu_26_04_pool_under_eks_1_34_has_no_canonical_image():
    pool = _set(_set(VALID, "gpuNodeGroups.0.os", "ubuntu-26.04"), "gpuOperator.driverVersion", "595.91.07")
    message = _matrix_rejection(_set(pool, "cluster.kubernetesVersion", "1.34"))
    assert 'gpuNodeGroups[0].kubeletVersion = "1.34": no ubuntu-26.04 EKS node image is published for Kubernetes ' \
        "1.34" in message
    assert "upgrade the control plane to 1.35, or use ubuntu-24.04 (1.34)" in message


# --------------------------------------------------------------------------------------------------
# How a stack's raw `gpu-platform:` values are read and a problem is printed

def _raw(values: dict[str, Any]) -> dict[str, Any]:
    """As Pulumi hands config over: namespaced keys, objects and lists as JSON strings."""
    return {f"gpu-platform:{key}": json.dumps(value) for key, value in values.items()}


def _load_error(raw: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(raw, stack_file="Pulumi.dev.yaml", check_matrix=False, today=MATRIX_TODAY)
    return str(caught.value)


def test_raw_values_are_decoded_and_other_namespaces_ignored():
    raw = {**_raw(VALID), "aws:region": "us-west-2", "kubernetes:context": "{}"}
    config = load_stack_config(raw, stack_file="Pulumi.dev.yaml", check_matrix=False, today=MATRIX_TODAY)
    assert config.cluster.name == "gpu-dev"
    assert [p.name for p in config.gpu_pools()] == ["a10g", "gpu-spot"]


# A schema problem says which later checks it kept from running (issue 56).
HELD = " (this held back the service and matrix checks, which run once the stack file's keys are valid)"


def test_a_missing_required_section_names_the_key_and_the_fix():
    raw = _raw(VALID)
    del raw["gpu-platform:cluster"]
    assert _load_error(raw) == ("Pulumi.dev.yaml: cluster = (missing): required key is missing; fix: add "
                                "gpu-platform:cluster (The EKS cluster and its network.)" + HELD)


def test_a_value_that_is_not_json_stays_a_string_and_is_refused_as_such():
    assert _load_error({**_raw(VALID), "gpu-platform:cluster": "{not json"}) == (
        'Pulumi.dev.yaml: cluster = "{not json": must be a mapping of keys' + HELD)


def test_a_mapping_value_is_printed_as_sorted_json():
    cluster = {**VALID["cluster"], "availabilityZones": {"b": 1, "a": 2}}
    raw = {**_raw(VALID), "gpu-platform:cluster": json.dumps(cluster)}
    assert _load_error(raw) == (
        'Pulumi.dev.yaml: cluster.availabilityZones = {"a": 2, "b": 1}: must be an integer' + HELD)


def test_a_long_value_is_cut_at_160_characters():
    name = "x" * 200 + "!"
    raw = {**_raw(VALID), "gpu-platform:cluster": json.dumps({**VALID["cluster"], "name": name})}
    message = _load_error(raw)
    shown = json.dumps(name)[:157] + "..."
    assert message.startswith(f"Pulumi.dev.yaml: cluster.name = {shown}: an EKS cluster name is 1-100 letters")
    assert len(shown) == 160


def test_several_problems_are_listed_under_one_header():
    cluster = {**VALID["cluster"], "name": "-x", "vpcCidr": "1.2.3.0/8"}
    raw = {**_raw(VALID), "gpu-platform:cluster": json.dumps(cluster)}
    message = _load_error(raw)
    lines = message.splitlines()
    assert lines[0] == "Pulumi.dev.yaml: the stack configuration has 2 problems; nothing was created:"
    assert [line.split(": ")[1] for line in lines[1:3]] == ['cluster.name = "-x"', 'cluster.vpcCidr = "1.2.3.0/8"']
    assert all(line.startswith("  - Pulumi.dev.yaml: ") for line in lines[1:3])
    assert lines[3:] == ["  (these held back the service and matrix checks, which run once the stack file's keys are "
                         "valid)"]


# --------------------------------------------------------------------------------------------------
# GPU pools with every default resolved (what the components and the matrix checks work on)

def _pools(values: dict[str, Any]) -> list[tuple[Any, ...]]:
    config, problems = parse_stack_config(values)
    assert config is not None, problems
    return [(p.name, p.kind, p.os, p.driver_version, p.kubelet_version, p.instance_types, p.use_precompiled,
             p.path, p.driver_path, p.driver_source) for p in config.gpu_pools()]


def test_gpu_pools_resolve_the_operator_driver_the_control_plane_kubelet_and_the_baked_branch():
    assert _pools(VALID) == [
        ("a10g", "managed-node-group", "ubuntu-24.04", "580.173.02", "1.35", ("g5.xlarge",), False,
         ("gpuNodeGroups", 0), ("gpuOperator", "driverVersion"), "operator"),
        ("gpu-spot", "karpenter", "bottlerocket", "580", "1.35", ("g6.xlarge",), False,
         ("karpenter", "pools", 0), ("karpenter", "pools", 0, "driverVersion"), "image"),
    ]


def test_a_node_groups_own_driver_kubelet_precompiled_and_self_management_win():
    group = {**VALID["gpuNodeGroups"][0], "driverVersion": "580", "usePrecompiled": True, "kubeletVersion": "1.34",
             "selfManaged": True}
    values = _set(_set(VALID, "gpuNodeGroups.0", group), "gpuOperator.usePrecompiled", False)
    (a10g, _) = _pools(values)
    assert a10g == ("a10g", "self-managed", "ubuntu-24.04", "580", "1.34", ("g5.xlarge",), True,
                    ("gpuNodeGroups", 0), ("gpuNodeGroups", 0, "driverVersion"), "operator")


def test_the_operators_precompiled_setting_reaches_groups_that_do_not_set_it():
    values = _set(_set(VALID, "gpuOperator.usePrecompiled", True), "gpuOperator.driverVersion", "580")
    (a10g, _) = _pools(values)
    assert a10g[3] == "580" and a10g[6] is True


def test_without_an_operator_an_ubuntu_pool_has_no_driver_and_is_refused():
    values = copy.deepcopy(VALID)
    del values["gpuOperator"]
    config, problems = parse_stack_config(values)
    assert config is None
    assert [p.rule[:40] for p in problems] == ["Ubuntu GPU pools get their driver from t"]


# --------------------------------------------------------------------------------------------------
# Problems pydantic finds, in the project's words: rule, nearest choice and fix

PYDANTIC_PROBLEMS: list[tuple[str, Any, str, tuple[str, ...], str | None]] = [
    ("cluster.availabilityZones", 1, "must be >= 2", ("2",), None),
    ("cluster.availabilityZones", 7, "must be <= 6", ("6",), None),
    ("cluster.kubernetesVersion", 1.3, "must be a string", ('"1.3"',),
     "quote it in YAML (an unquoted 1.30 reads as the number 1.3)"),
    ("cluster.availabilityZones", "two", "must be an integer", (), None),
    ("cluster.availabilityZones", " 3 ", "must be an integer", ("3",), "write the number without quotes"),
    ("inferenceServices.0.port", 8000.5, "must be an integer", (), None),
    ("gpuNodeGroups.0.minSize", True, "must be an integer", (), None),
    ("cluster.existing", "True ", "must be true or false", ("true",), "write true or false without quotes"),
    ("cluster.existing", "yes", "must be true or false", (), None),
    ("cluster.singleNatGateway", 1, "must be true or false", (), None),
    ("gpuNodeGroups.0.instanceTypes", "g5.xlarge", "must be a list", (), None),
    ("inferenceServices.0.autoscaling.query", "",
     "the autoscaling query is empty; KEDA needs a PromQL expression that returns one number",
     ('sum(rate(nv_inference_request_success{service="<name>"}[1m]))',), None),
    ("inferenceServices.0.autoscaling.query", "sum(rate(x[1m])",
     "not a PromQL expression Prometheus can parse (unclosed '(')", (),
     "try the query in Prometheus's expression browser first"),
    ("addons.ebsCsiDriver.version", "1.64.0", "an EKS add-on version is v<version>-eksbuild.<n>, such as "
     "v1.64.0-eksbuild.1", ("v1.64.0-eksbuild.1",),
     "list them with `aws eks describe-addon-versions --addon-name <name> --kubernetes-version <cluster version>`"),
]


@pytest.mark.parametrize(("path", "value", "rule", "nearest", "fix"), PYDANTIC_PROBLEMS,
                         ids=[f"{p}={v!r}" for p, v, _, _, _ in PYDANTIC_PROBLEMS])
def test_a_type_or_bound_problem_is_worded_with_its_nearest_choice_and_fix(path, value, rule, nearest, fix):
    problem = _only_problem(path, value)
    assert (problem.path, problem.value, problem.rule, problem.nearest, problem.fix) == (
        tuple(int(p) if p.isdigit() else p for p in path.split(".")), value, rule, nearest, fix)


def test_a_missing_nested_key_names_its_path_and_its_description():
    values = copy.deepcopy(VALID)
    del values["cluster"]["name"]
    (problem,) = _problems(values)
    assert (problem.path, problem.rule, problem.nearest, problem.fix) == (
        ("cluster", "name"), "required key is missing", (),
        "add cluster.name (EKS cluster name; also tags the subnets for Karpenter discovery.)")


@pytest.mark.parametrize(("where", "allowed"), [
    (("cluster",), "name, kubernetesVersion, existing, vpcCidr, availabilityZones"),
    (("inferenceServices", 0, "ingress"), "host, certificateArn, scheme, wafAclArn"),
])
def test_an_unknown_key_with_no_near_name_lists_the_allowed_keys(where, allowed):
    values = copy.deepcopy(VALID)
    target: Any = values
    for part in where:
        target = target[part]
    target["zzz"] = 1
    (problem,) = _problems(values)
    assert (problem.path, problem.value, problem.rule, problem.nearest) == ((*where, "zzz"), 1, "unknown key 'zzz'", ())
    assert problem.fix is not None and problem.fix.startswith(f"allowed keys: {allowed}")


@pytest.mark.parametrize(("path", "value", "nearest", "at", "shown"), [
    ("cluster.name", "!" + "a" * 120, ("a" * 100,), (), None),  # cut to the 100 characters EKS allows
    ("cluster.name", "!!!", ("gpu-cluster",), (), None),
    ("cluster.name", "Gpu Dev", ("Gpu-Dev",), (), None),  # upper case is allowed in a cluster name
    ("systemNodeGroup.name", "!!!", ("gpu",), (), None),
    ("systemNodeGroup.name", "A" * 40, ("a" * 32,), (), None),
    ("inferenceServices.0.name", "!!!", ("inference",), (), None),
    ("inferenceServices.0.name", "9" + "a" * 45, ("svc-9" + "a" * 35,), (), None),
    ("gpuOperator.version", "V26.7.0", ("v26.7.0",), (), None),
    ("karpenter.version", "V1.14.1", ("1.14.1",), (), None),
    ("gpuOperator.driverVersion", "r580.173.02", ("580.173.02",), (), None),
    ("inferenceServices.0.nodePools", ["a10g", "gpu-spot", "a10g"], ('["a10g", "gpu-spot"]',), (2,), "a10g"),
    ("karpenter.pools.0.capacityTypes", ["spot", "on-demand", "spot"], ('["spot", "on-demand"]',), (2,), "spot"),
])
def test_the_nearest_valid_choice_is_computed_from_the_bad_value(path, value, nearest, at, shown):
    problem = _only_problem(path, value)
    assert problem.path == (*(int(p) if p.isdigit() else p for p in path.split(".")), *at)
    assert problem.nearest == nearest
    assert problem.value == (value if shown is None else shown)


# --------------------------------------------------------------------------------------------------
# Service keys only the matrix or the stack's region can judge (before the matrix, on any stack)

def _in_region(values: dict[str, Any], region: str | None) -> dict[str, Any]:
    return {**_raw(values), **({"aws:region": region} if region else {})}


def _service_error(values: dict[str, Any], region: str | None = "us-west-2") -> str:
    return _load_error(_in_region(values, region))


def _service_ok(values: dict[str, Any], region: str | None = "us-west-2") -> None:
    load_stack_config(_in_region(values, region), stack_file="Pulumi.dev.yaml", check_matrix=False, today=MATRIX_TODAY)


def test_an_image_of_unknown_cuda_needs_cuda_version():
    values = _set(VALID, "inferenceServices.0.image", "registry.example.com/team/model:1.0")
    del values["inferenceServices"][0]["cudaVersion"]
    assert _service_error(values) == (
        "Pulumi.dev.yaml: inferenceServices[0].cudaVersion = null: the CUDA runtime of "
        "registry.example.com/team/model:1.0 is unknown (the matrix knows nvidia/cuda, NGC release and "
        "vllm/vllm-openai release tags); the gpu-platform.io/cuda label needs it to judge the service against each "
        "pool's driver; fix: set cudaVersion to the CUDA version the image is built on")
    _service_ok(_set(values, "inferenceServices.0.cudaVersion", "12.4"))  # declared: the image need not be known
    _service_ok(_set(VALID, "inferenceServices.0.cudaVersion", None))  # a known NGC tag tells it


def test_a_cuda_version_the_image_tag_contradicts_is_refused_naming_the_tag_s_version():
    assert _service_error(_set(VALID, "inferenceServices.0.cudaVersion", "12.6")) == (
        'Pulumi.dev.yaml: inferenceServices[0].cudaVersion = "12.6": the image tag says CUDA 12.8.0 '
        "(https://docs.nvidia.com/deeplearning/triton-inference-server/release-notes/rel-25-01.html); nearest valid "
        "choice: 12.8.0")
    _service_ok(_set(VALID, "inferenceServices.0.cudaVersion", "12.8.0"))


@pytest.mark.parametrize(("key", "what", "arn"), [
    ("certificateArn", "certificate", ACM.replace("us-west-2", "us-east-1")),
    ("wafAclArn", "wafAcl", WAF.replace("us-west-2", "eu-west-1")),
])
def test_an_ingress_takes_a_certificate_and_web_acl_of_its_own_region(key: str, what: str, arn: str):
    values = _set(VALID, f"inferenceServices.0.ingress.{key}", arn)
    other = arn.split(":")[3]
    assert _service_error(values) == (
        f'Pulumi.dev.yaml: inferenceServices[0].ingress.{key} = "{arn}": the ALB is in us-west-2 (aws:region) and can '
        f"only use a {what} of its own region, not {other}; fix: create or import it in us-west-2 and use that ARN")
    _service_ok(values, region=None)  # no aws:region in the stack: nothing to compare with
    _service_ok(VALID)


def test_a_service_without_ingress_is_not_judged_by_region():
    values = copy.deepcopy(VALID)
    del values["inferenceServices"][0]["ingress"]
    _service_ok(values, region="eu-central-1")


def test_inside_a_program_the_region_and_keys_come_from_the_pulumi_config():
    """`pulumi up` hands the stack's config to the program's runtime: `aws:region` is read there too."""
    waf = WAF.replace("us-west-2", "eu-west-1")
    values = _raw(_set(VALID, "inferenceServices.0.ingress.wafAclArn", waf))
    pulumi.runtime.set_all_config({**values, "aws:region": "us-west-2"}, [])
    try:
        with pytest.raises(ConfigError) as caught:
            load_stack_config(pulumi.Config("gpu-platform"), stack_file="Pulumi.dev.yaml", check_matrix=False,
                              today=MATRIX_TODAY)
        assert str(caught.value).startswith(
            f'Pulumi.dev.yaml: inferenceServices[0].ingress.wafAclArn = "{waf}": the ALB is in us-west-2 (aws:region)')
        pulumi.runtime.set_all_config(values, [])  # no aws:region: nothing to compare with
        config = load_stack_config(pulumi.Config("gpu-platform"), stack_file="Pulumi.dev.yaml", check_matrix=False,
                                   today=MATRIX_TODAY)
        assert config.inference_services[0].ingress is not None
    finally:
        pulumi.runtime.set_all_config({}, [])


@pytest.mark.parametrize(("max_gpus", "blamed"), [
    (2, "g6.48xlarge"),  # two types too big: the message names the biggest
    (4, "g6.48xlarge"),  # a g6.12xlarge's 4 GPUs fit a limit of 4
    (7, "g6.48xlarge"),
])
def test_max_gpus_below_an_instance_type_names_the_biggest_and_its_gpu_count(max_gpus: int, blamed: str):
    values = _set(_set(VALID, "karpenter.pools.0.instanceTypes", ["g6.xlarge", "g6.12xlarge", "g6.48xlarge"]),
                  "karpenter.pools.0.maxGpus", max_gpus)
    assert _matrix_rejection(values) == (
        f"Pulumi.dev.yaml: karpenter.pools[0].maxGpus = {max_gpus}: the NodePool's nvidia.com/gpu limit is below the "
        f"8 GPUs of one {blamed}, so Karpenter can never launch it (a node that would cross spec.limits is not "
        f"created); nearest valid choice: 8; fix: raise maxGpus or remove {blamed} from instanceTypes")
    load_stack_config(_set(values, "karpenter.pools.0.maxGpus", 8), stack_file="Pulumi.dev.yaml",
                      check_matrix=True, today=MATRIX_TODAY)


# The whole structural check of autoscaling.query, query by query (Prometheus's grammar:
# https://prometheus.io/docs/prometheus/latest/querying/basics/ and .../querying/operators/; label matchers as in
# promql/parser/generated_parser.y: `{}` and one trailing comma are allowed).
@pytest.mark.parametrize("query", [
    "sum(rate(nv_inference_request_success[1m]))", "sum by (model) (rate(x[5m]))", "sum(x) by (a)",
    "rate(x[5m]) offset 5m", "x and y", "-x", "x + -1", "x - - y", "x * 2 / 3 % 4 ^ 5", "x > 0", "x < 0",
    "x >= 0", "x <= 0", "x != 0", "x == 0", "max_over_time(x[30m:1m])", "x[30m:]", "x[1h30m]", "x @ 1700000000",
    "time()", "vector(1)", 'x{a="b"}[5m]', "1e3", "0x1F", "Inf", "NaN", ".5", "x{a='b'}", "x{a=`b`}",
    "x + (y)", "x / (+y)", 'x{a="b"} + y{c="d"}', 'x + {a="b"}', "x[5m] + 1",
    'x{a="b",}', "x{}", 'x{a=~"b", c!="d",}', 'x{a!~"b"}',
])
def test_promql_a_well_formed_query_passes(query: str):
    promql.check(query)


@pytest.mark.parametrize(("query", "message"), [
    ("", "empty query"),
    ("   ", "empty query"),
    ("x $ y", "unexpected character '$' at character 3"),
    ('x{a="b}', "unterminated string starting at character 5"),
    ("x{a='b}", "unterminated string starting at character 5"),
    ("x{a=`b}", "unterminated string starting at character 5"),
    ("(x", "unclosed '('"),
    ("x)", "unbalanced ')'"),
    ("{x]", "unbalanced ']'"),
    ("()", "empty parentheses"),
    ("x + ", "the query ends with an operator"),
    ("x ^", "the query ends with an operator"),
    ("* x", "operator '*' has no left-hand side"),
    ("x + * y", "operator '*' has no left-hand side"),
    ("(* x)", "operator '*' has no left-hand side"),
    ("f(x, * y)", "operator '*' has no left-hand side"),
    ("x = y", "'=' outside a label matcher"),
    ("x =~ y", "'=~' outside a label matcher"),
    ("x !~ y", "'!~' outside a label matcher"),
    ("(x +)", "an operator before ')' has no right-hand side"),
    ("x[5]", "range [5] is not a duration such as [5m] or a subquery such as [30m:1m]"),
    ("x[5m:1]", "range [5m:1] is not a duration such as [5m] or a subquery such as [30m:1m]"),
    ("x[5m:1m:1m]", "range [5m:1m:1m] is not a duration such as [5m] or a subquery such as [30m:1m]"),
    ("x[]", "range [] is not a duration such as [5m] or a subquery such as [30m:1m]"),
    ("x{a}", 'label matcher \'a\' is not label="value" (operators = != =~ !~)'),
    ("x{,}", 'label matcher \'(nothing)\' is not label="value" (operators = != =~ !~)'),
    ('x{a="b",,}', 'label matcher \'(nothing)\' is not label="value" (operators = != =~ !~)'),
    ('x{a=="b"}', 'label matcher \'a == "b"\' is not label="value" (operators = != =~ !~)'),
    ('x{a<"b"}', 'label matcher \'a < "b"\' is not label="value" (operators = != =~ !~)'),
    ('x{a="b" c="d"}', 'label matcher \'a = "b" c = "d"\' is not label="value" (operators = != =~ !~)'),
])
def test_promql_a_broken_query_is_refused_naming_what_breaks_it(query: str, message: str):
    with pytest.raises(ValueError) as caught:
        promql.check(query)
    assert str(caught.value) == message


# One rendered line per kind of schema error: unknown keys (with the nearest or the allowed ones), missing keys
# (with the field's description), choices, bounds, list lengths and the type slips YAML invites.
@pytest.mark.parametrize(("path", "value", "line"), [
    ("colour", 1, "colour = 1: unknown key 'gpu-platform:colour'; nearest valid choice: cluster"),
    ("cluster.nmae", "x", 'cluster.nmae = "x": unknown key \'nmae\'; nearest valid choice: name'),
    ("cluster.zzz", "x", 'cluster.zzz = "x": unknown key \'zzz\'; fix: allowed keys: name, kubernetesVersion, '
     "existing, vpcCidr, availabilityZones, singleNatGateway, endpointPublicAccessCidrs, opsReadOnlyPrincipalArn, "
     "adminPrincipalArns, deployerPrincipalArns, previewPrincipalArns, deletionProtection, supportType"),
    ("gpuNodeGroups.0.os", "ubuntu-20.04", 'gpuNodeGroups[0].os = "ubuntu-20.04": must be one of ubuntu-22.04, '
     "ubuntu-24.04, ubuntu-26.04; nearest valid choice: ubuntu-24.04"),
    ("karpenter.pools.0.capacityTypes", ["spott"], 'karpenter.pools[0].capacityTypes[0] = "spott": must be one of '
     "on-demand, spot; nearest valid choice: spot"),
    ("systemNodeGroup.minSize", -1, "systemNodeGroup.minSize = -1: must be >= 1; nearest valid choice: 1"),
    ("systemNodeGroup.diskSizeGiB", 100000,
     "systemNodeGroup.diskSizeGiB = 100000: must be <= 16384; nearest valid choice: 16384"),
    ("systemNodeGroup.instanceTypes", [], "systemNodeGroup.instanceTypes = []: list should have at least 1 item "
     "after validation, not 0; fix: give at least one entry"),
    ("cluster.kubernetesVersion", 1.3, 'cluster.kubernetesVersion = 1.3: must be a string; nearest valid choice: '
     '"1.3"; fix: quote it in YAML (an unquoted 1.30 reads as the number 1.3)'),
    ("systemNodeGroup.maxSize", "3", 'systemNodeGroup.maxSize = "3": must be an integer; nearest valid choice: 3; '
     "fix: write the number without quotes"),
    ("systemNodeGroup.maxSize", 2.5, "systemNodeGroup.maxSize = 2.5: must be an integer"),
    ("karpenter.pools.0.onDemandFallback", "true", 'karpenter.pools[0].onDemandFallback = "true": must be true or '
     "false; nearest valid choice: true; fix: write true or false without quotes"),
    ("karpenter.pools.0.onDemandFallback", "yes", 'karpenter.pools[0].onDemandFallback = "yes": must be true or false'),
    ("systemNodeGroup.instanceTypes", "m7i.large", 'systemNodeGroup.instanceTypes = "m7i.large": must be a list'),
    ("cluster", "gpu-dev", 'cluster = "gpu-dev": must be a mapping of keys'),
])
def test_each_kind_of_schema_error_renders_one_whole_line(path: str, value: Any, line: str):
    values = copy.deepcopy(VALID)
    if "." in path:
        values = _set(VALID, path, value)
    else:
        values[path] = value
    assert [p.render("Pulumi.dev.yaml") for p in _problems(values)] == [f"Pulumi.dev.yaml: {line}"]


def test_a_missing_nested_key_names_its_full_path_and_description():
    values = copy.deepcopy(VALID)
    del values["cluster"]["name"]
    assert [p.render("Pulumi.dev.yaml") for p in _problems(values)] == [
        "Pulumi.dev.yaml: cluster.name = (missing): required key is missing; fix: add cluster.name (EKS cluster "
        "name; also tags the subnets for Karpenter discovery.)"]


ADMIN = "arn:aws:iam::111122223333:role/platform-admin"
CI_ROLE = "arn:aws:iam::111122223333:role/ci"


@pytest.mark.parametrize(("path", "value", "line"), [
    ("cluster.deployerPrincipalArns", [ADMIN], f'cluster.adminPrincipalArns[0] = "{ADMIN}": a principal gets one '
     "access entry; cluster.deployerPrincipalArns[0] already lists it; fix: remove it from cluster.adminPrincipalArns"),
    ("cluster.previewPrincipalArns", [CI_ROLE, CI_ROLE], f'cluster.previewPrincipalArns[1] = "{CI_ROLE}": a '
     "principal gets one access entry; cluster.previewPrincipalArns[0] already lists it; fix: remove it from "
     "cluster.previewPrincipalArns"),
    ("cluster.opsReadOnlyPrincipalArn", ADMIN, f'cluster.adminPrincipalArns[0] = "{ADMIN}": a principal gets one '
     "access entry; cluster.opsReadOnlyPrincipalArn already lists it; fix: remove it from cluster.adminPrincipalArns"),
    ("cluster.previewPrincipalArns", [ADMIN], f'cluster.previewPrincipalArns[0] = "{ADMIN}": a principal gets one '
     "access entry; cluster.adminPrincipalArns[0] already lists it; fix: remove it from cluster.previewPrincipalArns"),
    ("systemNodeGroup.desiredSize", 1, "systemNodeGroup.desiredSize = 1: minSize <= desiredSize <= maxSize must "
     "hold (minSize is 2); nearest valid choice: 2"),
    ("systemNodeGroup.desiredSize", 4, "systemNodeGroup.desiredSize = 4: minSize <= desiredSize <= maxSize must "
     "hold (maxSize is 3); nearest valid choice: 3"),
    ("addons.ebsCsiDriver.version", "V1.64.0", 'addons.ebsCsiDriver.version = "V1.64.0": an EKS add-on version is '
     "v<version>-eksbuild.<n>, such as v1.64.0-eksbuild.1; nearest valid choice: v1.64.0-eksbuild.1; fix: list them "
     "with `aws eks describe-addon-versions --addon-name <name> --kubernetes-version <cluster version>`"),
    ("addons.ebsCsiDriver.version", "latest", 'addons.ebsCsiDriver.version = "latest": an EKS add-on version is '
     "v<version>-eksbuild.<n>, such as v1.64.0-eksbuild.1; fix: list them with `aws eks describe-addon-versions "
     "--addon-name <name> --kubernetes-version <cluster version>`"),
])
def test_principals_sizes_and_addon_versions_render_one_whole_line(path: str, value: Any, line: str):
    assert [p.render("Pulumi.dev.yaml") for p in _problems(_set(VALID, path, value))] == [f"Pulumi.dev.yaml: {line}"]


@pytest.mark.parametrize(("path", "value"), [
    ("systemNodeGroup.desiredSize", 3), ("systemNodeGroup.desiredSize", 2),  # on maxSize, on minSize
    ("cluster.previewPrincipalArns", [CI_ROLE]),
])
def test_sizes_on_their_bounds_and_distinct_principals_pass(path: str, value: Any):
    assert _problems(_set(VALID, path, value)) == []

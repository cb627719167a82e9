"""Every rule of components/config.py, with one failing input each (and the edge it turns on).

Each case changes one key of a stack configuration that is valid under every rule (`VALID`) and
expects exactly one problem: the key's path, the rule's wording, and the nearest valid choice or fix
where the rule computes one. Numeric limits are tested on the limit and one past it.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from components.config import ConfigIssue, Problem, parse_stack_config

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
                        "activationThreshold": "1"},
        "ingress": {"host": "inference.example.com", "certificateArn": ACM, "scheme": "internet-facing",
                    "wafAclArn": WAF},
        "modelVolume": {"snapshotId": "snap-0123456789abcdef0", "sizeGiB": 100, "mountPath": "/models"},
    }],
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


# (key, bad value, words of the rule, nearest valid choice or None when the rule offers none)
FIELD_RULES: list[tuple[str, Any, str, tuple[str, ...] | None]] = [
    ("cluster.name", "gpu dev!", "an EKS cluster name is 1-100 letters", ("gpu-dev",)),
    ("cluster.name", "-gpu", "an EKS cluster name is 1-100 letters", ("gpu",)),
    ("cluster.kubernetesVersion", "v1.35.2", "a Kubernetes version is <major>.<minor> in quotes", ("1.35",)),
    ("cluster.kubernetesVersion", "latest", "a Kubernetes version is <major>.<minor> in quotes", ()),
    ("cluster.vpcCidr", "10.0.0.0/15", "the VPC CIDR must be between /16 and /24", ("10.0.0.0/16",)),
    ("cluster.vpcCidr", "10.0.0.0/25", "the VPC CIDR must be between /16 and /24", ("10.0.0.0/24",)),
    ("cluster.vpcCidr", "54.0.0.0/16", "the VPC CIDR must be an RFC 1918 private range", ("10.0.0.0/16",)),
    ("cluster.vpcCidr", "10.0.0.1/16", "not an IPv4 network in CIDR notation", ("10.0.0.0/16",)),
    ("cluster.vpcCidr", "ten/16", "not an IPv4 network in CIDR notation", ()),
    ("cluster.endpointPublicAccessCidrs", ["0.0.0.0/0"], "must not be open to the whole internet", None),
    ("cluster.endpointPublicAccessCidrs", ["203.0.113.7/24"], "not an IPv4 network in CIDR notation",
     ("203.0.113.0/24",)),
    ("cluster.opsReadOnlyPrincipalArn", "arn:aws:sts::111122223333:assumed-role/ops/session",
     "an access entry principal is an IAM role or user ARN", ("arn:aws:iam::111122223333:role/ops",)),
    ("cluster.adminPrincipalArns", ["arn:aws:iam::1111:role/admin"],
     "an access entry principal is an IAM role or user ARN", ()),
    ("systemNodeGroup.name", "System_Nodes", "a pool name is 1-32 lowercase letters", ("system-nodes",)),
    ("systemNodeGroup.instanceTypes", ["m7i_large"], "an EC2 instance type is <family>.<size>", ("m7i.large",)),
    ("systemNodeGroup.instanceTypes", ["large"], "an EC2 instance type is <family>.<size>", ()),
    ("gpuOperator.version", "26.7.0", "a GPU Operator version is the Helm chart version", ("v26.7.0",)),
    ("gpuOperator.version", "v26.7", "a GPU Operator version is the Helm chart version", ()),
    ("gpuOperator.driverVersion", "R580", "write the driver version without the R prefix", ("580",)),
    ("gpuOperator.driverVersion", "580.173.02.1", "is not an NVIDIA driver version", ()),
    ("gpuOperator.driverVersion", "v580.173.02", "is not an NVIDIA driver version", ("580.173.02",)),
    ("karpenter.version", "v1.14.1", "a chart version is <major>.<minor>.<patch> without a leading v", ("1.14.1",)),
    ("karpenter.version", "1.14", "a chart version is <major>.<minor>.<patch> without a leading v", ()),
    ("karpenter.pools.0.expireAfter", "30d", "a Karpenter duration is digits with s, m or h", ("720h",)),
    ("karpenter.pools.0.expireAfter", "never", "a Karpenter duration is digits with s, m or h", ("Never",)),
    ("karpenter.pools.0.consolidateAfter", "600", "a Karpenter duration is digits with s, m or h", ("600s",)),
    ("karpenter.pools.0.consolidateAfter", "soon", "a Karpenter duration is digits with s, m or h", ()),
    ("karpenter.pools.0.capacityTypes", ["spot", "spot"], "each entry may appear only once", ('["spot"]',)),
    ("inferenceServices.0.name", "9triton", "a service name is a DNS-1035 label", ("svc-9triton",)),
    ("inferenceServices.0.name", "Triton_Server", "a service name is a DNS-1035 label", ("triton-server",)),
    ("inferenceServices.0.image", "nvcr.io/nvidia/tritonserver", "pin the image",
     ("nvcr.io/nvidia/tritonserver:<tag>",)),
    ("inferenceServices.0.image", "nvcr.io/nvidia/tritonserver:latest", "instead of 'latest'", ()),
    ("inferenceServices.0.image", "Not An Image", "not a container image reference", ()),
    ("inferenceServices.0.cudaVersion", "cuda12", "is not a CUDA release", ()),
    ("inferenceServices.0.nodePools", ["a10g", "a10g"], "each entry may appear only once", ('["a10g"]',)),
    ("inferenceServices.0.autoscaling.threshold", "100rps", "a KEDA threshold is a number written as a string",
     ("100",)),
    ("inferenceServices.0.autoscaling.activationThreshold", "one",
     "a KEDA threshold is a number written as a string", ()),
    ("inferenceServices.0.ingress.host", "Inference.Example.com.", "an ingress host is a lowercase DNS name",
     ("inference.example.com",)),
    ("inferenceServices.0.ingress.host", "localhost", "an ingress host is a lowercase DNS name", ()),
    ("inferenceServices.0.ingress.certificateArn", "arn:aws:acm:us-west-2:111122223333:certificate/abc",
     "an ACM certificate ARN looks like", None),
    ("inferenceServices.0.ingress.wafAclArn", WAF.replace(":regional/", ":global/"),
     "a regional WAFv2 web ACL ARN looks like", None),
    ("inferenceServices.0.modelVolume.snapshotId", "SNAP-0123456789ABCDEF0", "an EBS snapshot id is snap-",
     ("snap-0123456789abcdef0",)),
    ("inferenceServices.0.modelVolume.snapshotId", "snap-0123", "an EBS snapshot id is snap-", ()),
    ("inferenceServices.0.modelVolume.mountPath", "models", "a mount path is an absolute path below /",
     ("/models",)),
    ("inferenceServices.0.modelVolume.mountPath", "/", "a mount path is an absolute path below /", ("/models",)),
    ("inferenceServices.0.modelVolume.mountPath", "/models//v1", "a mount path is an absolute path below /",
     ("/models",)),
]


@pytest.mark.parametrize(("path", "value", "rule", "nearest"), FIELD_RULES,
                         ids=[f"{p}={v!r}" for p, v, _, _ in FIELD_RULES])
def test_field_rule_rejects_a_bad_value_naming_the_key_and_the_nearest_choice(path, value, rule, nearest):
    problem = _only_problem(path, value)
    key_path = tuple(int(p) if p.isdigit() else p for p in path.split("."))
    assert problem.path[:len(key_path)] == key_path
    assert rule in problem.rule
    if nearest is None:
        assert problem.fix, "a rule without a nearest choice names the fix"
    else:
        assert problem.nearest == nearest


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
    ("inferenceServices.0.modelVolume.sizeGiB", 1, 0), ("inferenceServices.0.modelVolume.sizeGiB", 65536, 65537),
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
    assert problem.fix and "tools.matrix drivers" in problem.fix


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


GENERIC_RULES: list[tuple[str, Any, str, tuple[str, ...], str | None]] = [
    ("gpuNodeGroups.0.os", "ubuntu-20.04", "must be one of ubuntu-22.04, ubuntu-24.04", ("ubuntu-24.04",), None),
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
    assert problem.path == tuple(int(p) if p.isdigit() else p for p in path.split("."))
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

"""build_inventory, field by field: every view (Pool, Workload, HelmRelease, DriverSpec) compared whole.

The rules read these fields; a field read from the wrong property, or a default that leaks as the
text "None", would change what a rule sees. Each test builds the views from raw resources and compares
the complete dataclass, so no field goes unchecked. Property names: the Pulumi AWS provider
(aws:eks/nodeGroup:NodeGroup, aws:autoscaling/group:Group), Karpenter v1 (NodePool, EC2NodeClass),
the GPU Operator (ClusterPolicy Helm values `driver.*`, NVIDIADriver) and Kubernetes pod templates.
Cluster-autoscaler node-template tags (`.../label/<key>`, `.../taint/<key>` = `<value>:<effect>`):
https://github.com/kubernetes/autoscaler/blob/master/cluster-autoscaler/cloudprovider/aws/README.md
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from policies.gpu_guard.inventory import (
    ASG_LABEL_TAG,
    ASG_TAINT_TAG,
    KUBELET_VERSION_TAG,
    Container,
    Deferred,
    DriverSpec,
    HelmRelease,
    Pool,
    Taint,
    Workload,
    build_inventory,
)

TYPE = "node.kubernetes.io/instance-type"
FAMILY = "karpenter.k8s.aws/instance-family"
LINUX = {"kubernetes.io/os": frozenset({"linux"})}


def _res(rtype: str, name: str, props: Any, **deps: list[Any]) -> SimpleNamespace:
    r = SimpleNamespace(resource_type=rtype, name=name, props=props, urn=f"urn:pulumi:t::p::{rtype}::{name}")
    if deps:
        r.property_dependencies = deps
    return r


# --- managed node groups -----------------------------------------------------------------------------

def test_a_managed_node_group_reads_every_field():
    props = {
        "nodeGroupName": "a10g-ng", "instanceTypes": ["g5.12xlarge"], "labels": {"gpu-platform.io/pool": "a10g"},
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"},
                   {"key": "dedicated", "effect": "NoExecute"},  # no value; effect already in Kubernetes spelling
                   {"key": "drain", "value": "soon"}],  # no effect
        "amiType": "AL2023_x86_64_NVIDIA", "capacityType": "SPOT", "scalingConfig": {"minSize": 1},
        "version": "1.33",
    }
    r = _res("aws:eks/nodeGroup:NodeGroup", "gpu-a10g", props)
    (pool,) = build_inventory([r]).pools
    assert pool == Pool(
        urn=r.urn, name="a10g", kind="managed-node-group", labels={"gpu-platform.io/pool": "a10g"},
        label_domain={"gpu-platform.io/pool": frozenset({"a10g"}), TYPE: frozenset({"g5.12xlarge"}),
                      FAMILY: frozenset({"g5"}), **LINUX,
                      "eks.amazonaws.com/nodegroup": frozenset({"a10g-ng"}),
                      "eks.amazonaws.com/capacityType": frozenset({"SPOT"})},
        taints=(Taint("nvidia.com/gpu", "true", "NoSchedule"), Taint("dedicated", "", "NoExecute"),
                Taint("drain", "soon", "")),
        instance_types=("g5.12xlarge",), min_size=1, ami_type="AL2023_x86_64_NVIDIA", kubelet="1.33",
        os_hint="al2023",
    )
    assert pool.props is props and pool.resource is r
    assert pool.depends_on("launchTemplate") == []  # a resource the engine gave no dependencies


def test_a_bare_node_group_falls_back_to_its_resource_name_on_demand_and_no_ami_type():
    r = _res("aws:eks/nodeGroup:NodeGroup", "cpu-ng", {"instanceTypes": ["m7i.large"]})
    (pool,) = build_inventory([r]).pools
    assert pool == Pool(
        urn=r.urn, name="cpu-ng", kind="managed-node-group", labels={},
        label_domain={TYPE: frozenset({"m7i.large"}), FAMILY: frozenset({"m7i"}), **LINUX,
                      "eks.amazonaws.com/nodegroup": frozenset({"cpu-ng"}),
                      "eks.amazonaws.com/capacityType": frozenset({"ON_DEMAND"})},
        taints=(), instance_types=("m7i.large",), min_size=None, ami_type=None, kubelet=None, os_hint=None,
    )


def test_an_ami_type_without_a_baked_driver_gives_no_os_hint():
    r = _res("aws:eks/nodeGroup:NodeGroup", "gpu", {"instanceTypes": ["g5.xlarge"], "amiType": "AL2_x86_64_GPU"})
    (pool,) = build_inventory([r]).pools
    assert (pool.ami_type, pool.os_hint) == ("AL2_x86_64_GPU", None)


def test_an_unknown_node_group_name_waits_only_when_a_selector_reads_it():
    props = unknown_checking_proxy({"nodeGroupName": UNKNOWN_STRING_VALUE, "instanceTypes": ["g5.xlarge"]})
    (pool,) = build_inventory([_res("aws:eks/nodeGroup:NodeGroup", "gpu", props)]).pools
    group_name = pool.label_domain["eks.amazonaws.com/nodegroup"]
    assert isinstance(group_name, Deferred)
    with pytest.raises(UnknownValueError):
        group_name.value()
    assert pool.name == "gpu"


def test_an_unknown_cluster_version_waits_only_where_a_rule_reads_it():
    """Issue 45: a cluster that sets no `version` (its version unknown in a first preview) used to abort the whole
    inventory; now the pools are read and only the control-plane version waits, naming the value and the cluster."""
    cluster = _res("aws:eks/cluster:Cluster", "gpu",
                   unknown_checking_proxy({"name": "gpu", "version": UNKNOWN_STRING_VALUE}))
    group = _res("aws:eks/nodeGroup:NodeGroup", "a10g", {"instanceTypes": ["g5.xlarge"], "version": "1.35"})
    inv = build_inventory([cluster, group])
    assert [p.name for p in inv.pools] == ["a10g"]
    with pytest.raises(UnknownValueError) as err:
        _ = inv.control_plane_version
    assert err.value.message.startswith("string value at .version can't be known during preview "
                                        "(aws:eks/cluster:Cluster 'gpu': a cluster that sets no `version`")
    assert "pin `version`" in err.value.message


def test_an_unknown_value_of_one_view_leaves_only_its_collection_unread():
    """A node group whose taints are not known: reading the pools waits, naming the value and the group; the
    releases and workloads, which need nothing of it, are read."""
    group = _res("aws:eks/nodeGroup:NodeGroup", "a10g",
                 unknown_checking_proxy({"instanceTypes": ["g5.xlarge"], "taints": UNKNOWN_STRING_VALUE}))
    release = _res("kubernetes:helm.sh/v3:Release", "keda", {"chart": "keda", "version": "2.20.2", "values": {}})
    inv = build_inventory([group, release])
    assert [r.name for r in inv.releases] == ["keda"]
    assert inv.workloads == [] and inv.control_plane_version is None
    with pytest.raises(UnknownValueError) as err:
        _ = inv.pools
    assert err.value.message == ("string value at .taints can't be known during preview "
                                 "(aws:eks/nodeGroup:NodeGroup 'a10g')")


def test_unknown_operator_values_defer_only_the_gpu_present_label():
    """Whether GPU Feature Discovery labels the GPU nodes depends on the release's values; while they are unknown,
    a selector on `nvidia.com/gpu.present` waits, and the pools are still read."""
    group = _res("aws:eks/nodeGroup:NodeGroup", "a10g", {"instanceTypes": ["g5.xlarge"]})
    release = _res("kubernetes:helm.sh/v3:Release", "gpu-operator", unknown_checking_proxy(
        {"chart": "gpu-operator", "version": "v26.7.0", "values": {"gfd": {"enabled": UNKNOWN_STRING_VALUE}}}))
    inv = build_inventory([group, release])
    (pool,) = inv.pools
    assert isinstance(pool.label_domain["nvidia.com/gpu.present"], Deferred)


# --- self-managed groups -----------------------------------------------------------------------------

def test_a_self_managed_group_reads_tags_template_and_overrides():
    template = _res("aws:ec2/launchTemplate:LaunchTemplate", "gpu-lt", {"instanceType": "g6.xlarge"})
    props = {
        "tags": [{"key": KUBELET_VERSION_TAG, "value": "1.32"},
                 {"key": ASG_LABEL_TAG + "gpu-platform.io/os", "value": "ubuntu-24.04"},
                 {"key": ASG_LABEL_TAG + "empty"},  # a tag without a value: the label's value is empty
                 {"key": ASG_TAINT_TAG + "nvidia.com/gpu", "value": "true:NoSchedule"},
                 {"key": ASG_TAINT_TAG + "bare", "value": "gpu"},  # no effect given
                 {"key": "Name", "value": "gpu-asg"}],
        "launchTemplate": {"id": "lt-0123"},  # never followed: the dependency names the template
        "mixedInstancesPolicy": {"launchTemplate": {"overrides": [
            {"instanceType": "g6.2xlarge"}, {"instanceRequirements": {"vcpuCount": {"min": 4}}},
            {"instanceType": "g6.xlarge"}]}},
        "minSize": 2,
    }
    r = _res("aws:autoscaling/group:Group", "gpu-asg", props, launchTemplate=[template])
    (pool,) = build_inventory([template, r]).pools
    labels = {"gpu-platform.io/os": "ubuntu-24.04", "empty": ""}
    assert pool == Pool(
        urn=r.urn, name="gpu-asg", kind="self-managed", labels=labels,
        label_domain={"gpu-platform.io/os": frozenset({"ubuntu-24.04"}), "empty": frozenset({""}),
                      TYPE: frozenset({"g6.xlarge", "g6.2xlarge"}), FAMILY: frozenset({"g6"}), **LINUX},
        taints=(Taint("nvidia.com/gpu", "true", "NoSchedule"), Taint("bare", "gpu", "")),
        instance_types=("g6.xlarge", "g6.2xlarge"), min_size=2, kubelet="1.32",
        desired_size=2,  # no desiredCapacity: an Auto Scaling group starts at minSize
    )
    assert pool.props is props and pool.resource is r
    assert pool.depends_on("launchTemplate") == [template]


def test_a_self_managed_template_without_an_instance_type_adds_none():
    template = _res("aws:ec2/launchTemplate:LaunchTemplate", "lt", {"imageId": "ami-1"})
    props = {"tags": [{"key": ASG_LABEL_TAG + "gpu-platform.io/pool", "value": "p"}],
             "mixedInstancesPolicy": {"launchTemplate": {"overrides": [{"instanceType": "p5.48xlarge"}]}}}
    (pool,) = build_inventory([template, _res("aws:autoscaling/group:Group", "asg", props,
                                              launchTemplate=[template])]).pools
    assert (pool.name, pool.instance_types) == ("p", ("p5.48xlarge",))


# --- Karpenter ---------------------------------------------------------------------------------------

def test_a_nodepool_reads_every_field_and_its_node_class_by_metadata_name():
    node_class = _res("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "class-res",
                      {"metadata": {"name": "bottlerocket-gpu"}, "spec": {"amiFamily": "Bottlerocket"}})
    props = {"metadata": {"name": "gpu-spot"}, "spec": {"template": {
        "metadata": {"labels": {"gpu-platform.io/pool": "spot"}},
        "spec": {"nodeClassRef": {"name": "bottlerocket-gpu"},
                 "taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}],
                 "requirements": [{"key": TYPE, "operator": "In", "values": ["g6.xlarge", "g5.xlarge"]},
                                  {"key": "topology.kubernetes.io/zone", "operator": "Exists"}]}}}}
    r = _res("kubernetes:karpenter.sh/v1:NodePool", "pool-res", props)
    (pool,) = build_inventory([r, node_class]).pools
    assert pool == Pool(
        urn=r.urn, name="spot", kind="karpenter-nodepool", labels={"gpu-platform.io/pool": "spot"},
        label_domain={"gpu-platform.io/pool": frozenset({"spot"}), **LINUX,
                      TYPE: frozenset({"g6.xlarge", "g5.xlarge"}), "topology.kubernetes.io/zone": None,
                      "topology.kubernetes.io/region": None, "topology.k8s.aws/zone-id": None,
                      "kubernetes.io/arch": frozenset({"amd64"}),
                      "karpenter.sh/capacity-type": frozenset({"on-demand"}),
                      **{f"karpenter.k8s.aws/{s}": None for s in (
                          "instance-category", "instance-generation", "instance-size", "instance-cpu",
                          "instance-cpu-manufacturer", "instance-memory", "instance-hypervisor",
                          "instance-network-bandwidth", "instance-ebs-bandwidth",
                          "instance-encryption-in-transit-supported", "instance-gpu-manufacturer",
                          "instance-gpu-count", "instance-gpu-memory")},
                      "karpenter.k8s.aws/instance-family": frozenset({"g6", "g5"}),
                      "karpenter.k8s.aws/instance-gpu-name": frozenset({"l4", "a10g"}),
                      "karpenter.sh/nodepool": frozenset({"gpu-spot"})},
        taints=(Taint("nvidia.com/gpu", "", "NoSchedule"),), instance_types=("g6.xlarge", "g5.xlarge"),
        min_size=0, node_class="bottlerocket-gpu", os_hint="bottlerocket",
    )
    assert pool.props is props and pool.resource is None
    assert pool.depends_on("spec") == []


def test_a_nodepool_without_a_name_takes_the_resource_name_and_a_node_class_without_one_too():
    node_class = _res("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "al2023-class",
                      {"spec": {"amiSelectorTerms": [{"id": "ami-1"}, {"alias": "al2023@latest"}]}})
    r = _res("kubernetes:karpenter.sh/v1:NodePool", "gpu-pool", {"spec": {"template": {"spec": {
        "nodeClassRef": {"name": "al2023-class"}, "taints": [{"key": "k", "value": "v"}]}}}})
    (pool,) = build_inventory([node_class, r]).pools
    assert (pool.name, pool.label_domain["karpenter.sh/nodepool"], pool.os_hint) == (
        "gpu-pool", frozenset({"gpu-pool"}), "al2023")
    assert pool.taints == (Taint("k", "v", ""),)


# --- launch templates by name ------------------------------------------------------------------------

def test_a_launch_template_is_found_by_its_resource_name_and_by_its_name_input():
    by_resource = _res("aws:ec2/launchTemplate:LaunchTemplate", "lt-res", {"instanceType": "g6.xlarge"})
    by_input = _res("aws:ec2/launchTemplate:LaunchTemplate", "other", {"name": "gpu-lt", "instanceType": "g5.xlarge"})
    groups = [_res("aws:eks/nodeGroup:NodeGroup", "a", {"launchTemplate": {"name": "lt-res"}}),
              _res("aws:eks/nodeGroup:NodeGroup", "b", {"launchTemplate": {"name": "gpu-lt"}})]
    inv = build_inventory([by_resource, by_input, *groups])
    assert [p.instance_types for p in inv.pools] == [("g6.xlarge",), ("g5.xlarge",)]


# --- Helm releases, NVIDIADriver objects, the operator's drivers --------------------------------------

def test_a_release_reads_chart_version_namespace_and_values_and_empty_strings_read_as_missing():
    values = {"driver": {"version": "580.173.02"}}
    full = _res("kubernetes:helm.sh/v3:Release", "op", {"chart": "oci://ghcr.io/nvidia/gpu-operator",
                                                        "version": "v26.7.0", "namespace": "gpu-operator",
                                                        "values": values})
    bare = _res("kubernetes:helm.sh/v4:Chart", "bare", {"version": "", "namespace": ""})
    inv = build_inventory([full, bare])
    assert inv.releases == [HelmRelease(full.urn, "op", "gpu-operator", "v26.7.0", "gpu-operator", values),
                            HelmRelease(bare.urn, "bare", "", None, None, {})]


def test_an_nvidiadriver_object_reads_name_version_selector_and_precompiled():
    named = _res("kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "res-a", {
        "metadata": {"name": "a10g-driver"},
        "spec": {"version": "580.173.02", "nodeSelector": {"gpu-platform.io/pool": "a10g"}, "usePrecompiled": True}})
    bare = _res("kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "res-b", {"spec": {}})
    inv = build_inventory([named, bare])
    assert inv.nvidia_drivers == [
        DriverSpec(named.urn, "a10g-driver", "580.173.02", {"gpu-platform.io/pool": "a10g"}, True, "nvidiadriver"),
        DriverSpec(bare.urn, "res-b", "", {}, False, "nvidiadriver"),
    ]


_OBJECT = {"metadata": {"name": "l40s-driver"}, "spec": {"version": "580.173.02"}}


def _drivers(values: dict[str, Any]) -> tuple[str, list[DriverSpec]]:
    release = _res("kubernetes:helm.sh/v3:Release", "gpu-operator", {"chart": "gpu-operator", "values": values})
    obj = _res("kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "l40s", _OBJECT)
    return release.urn, build_inventory([release, obj]).operator_drivers(default_version="595.91.07")


def test_without_the_crd_the_operator_installs_only_its_default_driver():
    urn, drivers = _drivers({"driver": {"nvidiaDriverCRD": {"nodeSelector": {"gpu-platform.io/pool": "x"}}}})
    assert drivers == [DriverSpec(urn, "chart-default", "595.91.07", {}, False, "helm-values")]


def test_with_the_crd_the_objects_count_and_the_default_cr_is_deployed_unless_turned_off():
    urn, drivers = _drivers({"driver": {"version": "580.173.02", "usePrecompiled": True, "nvidiaDriverCRD": {
        "enabled": True, "nodeSelector": {"gpu-platform.io/pool": "a10g"}}}})
    assert [d.name for d in drivers] == ["l40s-driver", "default"]
    assert drivers[1] == DriverSpec(urn, "default", "580.173.02", {"gpu-platform.io/pool": "a10g"}, True,
                                    "helm-values")
    _, drivers = _drivers({"driver": {"nvidiaDriverCRD": {"enabled": True, "deployDefaultCR": False}}})
    assert [d.name for d in drivers] == ["l40s-driver"]


# --- workloads ---------------------------------------------------------------------------------------

def test_a_workload_reads_containers_init_containers_requests_and_its_metadata():
    props = {"metadata": {"name": "trainer"}, "spec": {"template": {
        "metadata": {"labels": {"gpu-platform.io/cuda": "12.8"}},
        "spec": {"initContainers": [{"name": "warmup", "image": "nvidia/cuda:12.8.0-base-ubuntu24.04",
                                     "resources": {"requests": {"nvidia.com/gpu": 2}}}],
                 "containers": [{"resources": {"limits": {"cpu": "1"}}}],  # no name, no image, no GPU
                 "nodeSelector": {"gpu-platform.io/pool": "a10g"},
                 "tolerations": [{"operator": "Exists"}]}}}}
    r = _res("kubernetes:apps/v1:Deployment", "trainer-res", props)
    (workload,) = build_inventory([r]).workloads
    assert workload == Workload(
        urn=r.urn, name="trainer", kind="Deployment", labels={"gpu-platform.io/cuda": "12.8"},
        node_selector={"gpu-platform.io/pool": "a10g"}, required_terms=None, tolerations=({"operator": "Exists"},),
        containers=(Container("", "", 0), Container("warmup", "nvidia/cuda:12.8.0-base-ubuntu24.04", 2)),
    )
    assert workload.gpus == 2


def test_a_pod_without_a_name_takes_the_resource_name():
    r = _res("kubernetes:core/v1:Pod", "probe", {"spec": {"containers": [{"name": "c", "image": "i"}]}})
    (workload,) = build_inventory([r]).workloads
    assert (workload.urn, workload.name, workload.kind, workload.containers) == (
        r.urn, "probe", "Pod", (Container("c", "i", 0),))


"""The components under the recording mocks: the inputs that matter for security, scheduling and drivers."""

from __future__ import annotations

import base64
import copy
from functools import cache
from typing import Any

import pytest
import yaml

from components import labels
from components.cluster import subnet_cidrs
from components.config import ConfigError, GpuPool
from components.smoke_test import probe_requirements, smoke_test_cuda
from policies.gpu_guard import inventory
from policies.gpu_guard.matrix import load_matrix, worst_level
from policies.gpu_guard.versions import parse_driver_version
from tests import conformance
from tests.components.harness import REPO, Run, resolved_exports, run, run_rejected, stack_values
from tests.shared import upstream

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NVIDIA_DRIVER = "kubernetes:nvidia.com/v1alpha1:NVIDIADriver"
SSM_INVOKE = "aws:ssm/getParameter:getParameter"


@cache
def dev() -> Run:
    return run(stack_values("dev"))


@cache
def prod() -> Run:
    return run(stack_values("prod"), stack="prod")


def field_report_values() -> dict[str, Any]:
    return {
        "cluster": {"name": "field-report", "kubernetesVersion": "1.34", "availabilityZones": 2},
        "gpuOperator": {"version": "v26.3.1", "driverVersion": "535.309.01", "smokeTest": True},
        "gpuNodeGroups": [{"name": "a10g", "instanceTypes": ["g5.xlarge"], "os": "ubuntu-22.04",
                           "kubeletVersion": "1.32", "desiredSize": 1}],
    }


@cache
def field_report() -> Run:
    return run(field_report_values())


def two_drivers_values() -> dict[str, Any]:
    values = copy.deepcopy(stack_values("prod"))
    values["karpenter"]["pools"][0]["driverVersion"] = "595.91.07"
    return values


@cache
def two_drivers() -> Run:
    return run(two_drivers_values(), stack="prod")


def self_managed_values() -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["gpuNodeGroups"][0]["selfManaged"] = True
    return values


@cache
def self_managed() -> Run:
    return run(self_managed_values())


def gpu_template(result: Run, pool: str) -> dict[str, Any]:
    return result.one(LAUNCH_TEMPLATE, f"-{pool}-").inputs


def user_data(result: Run, pool: str) -> str:
    return base64.b64decode(gpu_template(result, pool)["userData"]).decode()


# --- Cluster -------------------------------------------------------------------------------------


def test_subnet_cidrs_are_disjoint_private_and_public_blocks():
    private, public = subnet_cidrs("10.40.0.0/16", 3)
    assert private == ["10.40.0.0/20", "10.40.16.0/20", "10.40.32.0/20"]
    assert public == ["10.40.128.0/20", "10.40.144.0/20", "10.40.160.0/20"]


def test_secrets_key_rotates():
    key = dev().one("aws:kms/key:Key").inputs
    assert key["enableKeyRotation"] is True


def test_subnets_are_tagged_for_load_balancers_and_karpenter_in_every_zone():
    subnets = dev().of_type("aws:ec2/subnet:Subnet")
    public = [s.inputs for s in subnets if "-public-" in s.name]
    private = [s.inputs for s in subnets if "-private-" in s.name]
    assert len(public) == len(private) == 2
    assert all(s["tags"]["kubernetes.io/role/elb"] == "1" for s in public)
    assert all(s["tags"]["kubernetes.io/role/internal-elb"] == "1" for s in private)
    assert all(s["tags"]["karpenter.sh/discovery"] == "gpu-dev" for s in private)
    assert len({s["availabilityZoneId"] for s in private}) == 2
    assert all(s["mapPublicIpOnLaunch"] is False for s in public)


def test_dev_shares_one_nat_gateway_and_prod_has_one_per_zone():
    assert len(dev().of_type("aws:ec2/natGateway:NatGateway")) == 1
    assert len(prod().of_type("aws:ec2/natGateway:NatGateway")) == 3


def test_pod_identity_agent_and_coredns_add_ons_wait_for_the_system_nodes():
    result = dev()
    addons = {a.inputs["addonName"]: a for a in result.of_type("aws:eks/addon:Addon")}
    # The EBS CSI driver and snapshot controller serve dev's inference service (tests/components/test_inference.py).
    assert set(addons) == {"coredns", "eks-pod-identity-agent", "aws-ebs-csi-driver", "snapshot-controller"}
    # Depending on a component means depending on its children: the system node group itself.
    system_nodes = result.one(NODE_GROUP, "system")
    assert all(system_nodes.urn in addon.dependencies for addon in addons.values())


def test_node_role_has_exactly_the_documented_node_policies():
    result = dev()
    node_role = result.one("aws:iam/role:Role", "gpu-dev-node-role")
    assert "ec2.amazonaws.com" in node_role.inputs["assumeRolePolicy"]
    attached = sorted(a.inputs["policyArn"].rsplit("/", 1)[-1] for a in
                      result.of_type("aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                      if a.name.startswith("gpu-dev-node-"))
    assert attached == ["AmazonEC2ContainerRegistryPullOnly", "AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy"]


def test_dev_creates_the_preview_roles_and_the_karpenter_node_entries_and_leaves_its_creator_to_eks():
    # The deploy role (the offline caller, cluster.deployerPrincipalArns) creates the cluster: EKS's creator entry.
    entries = [(e.inputs["type"], e.inputs["principalArn"]) for e in dev().of_type("aws:eks/accessEntry:AccessEntry")]
    assert [t for t, _ in entries] == ["STANDARD", "EC2_LINUX"]
    assert entries[0][1] == stack_values("dev")["cluster"]["previewPrincipalArns"][0]
    assert "accessEntries" not in dev().one("eks:index:Cluster").inputs


def test_existing_cluster_is_adopted_without_vpc_control_plane_or_add_on():
    values = copy.deepcopy(stack_values("dev"))
    values["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35", "existing": True}
    del values["inferenceServices"]  # its model volume would add the EBS CSI add-ons (a serving add-on)
    result = run(values)
    types = {r.type for r in result.registered}
    for absent in ("aws:ec2/vpc:Vpc", "aws:ec2/subnet:Subnet", "eks:index:Cluster", "aws:eks/addon:Addon",
                   "aws:kms/key:Key", "aws:ec2/natGateway:NatGateway"):
        assert absent not in types
    assert ("aws:eks/getCluster:getCluster", {"name": "shared-gpu"}) in [
        (token, {k: v for k, v in args.items() if k == "name"}) for token, args in result.invokes]
    system = result.one(NODE_GROUP, "system").inputs
    assert system["clusterName"] == "shared-gpu"
    assert all(s.startswith("subnet-") for s in system["subnetIds"])


# --- SystemNodeGroup -----------------------------------------------------------------------------


def test_system_node_group_is_untainted_labelled_al2023_across_private_subnets():
    result = dev()
    group = result.one(NODE_GROUP, "system").inputs
    assert group["amiType"] == "AL2023_x86_64_STANDARD"
    assert group["labels"] == {"gpu-platform.io/role": "system"}
    assert "taints" not in group
    assert len(group["subnetIds"]) == 2
    assert group["version"] == "1.35"


def test_every_launch_template_requires_imdsv2_with_hop_limit_1_and_encrypts_a_gp3_root():
    for result in (dev(), prod(), self_managed()):
        for template in result.of_type(LAUNCH_TEMPLATE):
            metadata = template.inputs["metadataOptions"]
            assert (metadata["httpTokens"], metadata["httpPutResponseHopLimit"], metadata["httpEndpoint"]) == (
                "required", 1, "enabled")
            (disk,) = template.inputs["blockDeviceMappings"]
            assert disk["ebs"]["encrypted"] == "true" and disk["ebs"]["volumeType"] == "gp3"


def test_system_root_volume_is_the_al2023_root_device():
    template = dev().one(LAUNCH_TEMPLATE, "system").inputs
    assert template["blockDeviceMappings"][0]["deviceName"] == "/dev/xvda"
    assert template["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 50


# --- GpuManagedNodeGroup -------------------------------------------------------------------------


def test_gpu_node_group_is_tainted_and_carries_the_label_contract():
    group = dev().one(NODE_GROUP, "l4-spot").inputs
    assert group["taints"] == [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]
    assert group["labels"] == {
        "gpu-platform.io/pool": "l4-spot",
        "gpu-platform.io/os": "ubuntu-24.04",
        "gpu-platform.io/driver": "580.173.02",
        "gpu-platform.io/driver-source": "operator",
    }
    assert group["capacityType"] == "SPOT"
    assert group["scalingConfig"] == {"minSize": 0, "desiredSize": 1, "maxSize": 2}


def test_gpu_node_group_uses_a_custom_ami_without_a_version():
    group = dev().one(NODE_GROUP, "l4-spot").inputs
    assert group["amiType"] == "CUSTOM"
    assert "version" not in group and "releaseVersion" not in group
    assert group["tags"]["gpu-platform.io/kubelet-version"] == "1.35"


def test_ubuntu_24_04_image_comes_from_the_ebs_gp3_parameter():
    result = dev()
    names = [args["name"] for token, args in result.invokes if token == SSM_INVOKE]
    assert names == ["/aws/service/canonical/ubuntu/eks/24.04/1.35/stable/current/amd64/hvm/ebs-gp3/ami-id"]
    assert gpu_template(result, "l4-spot")["imageId"].startswith("ami-")


def test_ubuntu_22_04_image_comes_from_the_ebs_gp2_parameter_at_the_kubelet_version():
    names = [args["name"] for token, args in field_report().invokes if token == SSM_INVOKE]
    assert names == ["/aws/service/canonical/ubuntu/eks/22.04/1.32/stable/current/amd64/hvm/ebs-gp2/ami-id"]


def test_gpu_root_volume_is_the_ubuntu_root_device_sized_from_config():
    disk = prod().one(LAUNCH_TEMPLATE, "a10g-baseline").inputs["blockDeviceMappings"][0]
    assert disk["deviceName"] == "/dev/sda1"
    assert disk["ebs"]["volumeSize"] == 200


def test_user_data_bootstraps_the_node_with_labels_and_taint():
    result = dev()
    script = user_data(result, "l4-spot")
    cluster = result.one("eks:index:Cluster")
    assert script.startswith("#!/bin/bash\n")
    assert "/etc/eks/bootstrap.sh gpu-dev" in script
    assert "--b64-cluster-ca " in script and "--apiserver-endpoint https://" in script
    assert "gpu-platform.io/pool=l4-spot" in script and "gpu-platform.io/driver=580.173.02" in script
    assert "eks.amazonaws.com/nodegroup=l4-spot" in script and "eks.amazonaws.com/capacityType=SPOT" in script
    assert "--register-with-taints=nvidia.com/gpu=true:NoSchedule" in script
    assert cluster.inputs["name"] == "gpu-dev"


def test_prod_has_an_on_demand_baseline_and_a_karpenter_spot_burst_pool():
    groups = {g.inputs["nodeGroupName"]: g.inputs for g in prod().of_type(NODE_GROUP)}
    assert sorted(groups) == ["a10g-baseline", "system"]
    assert groups["a10g-baseline"]["capacityType"] == "ON_DEMAND"
    assert groups["a10g-baseline"]["scalingConfig"]["minSize"] == 2
    assert groups["system"]["scalingConfig"]["minSize"] == 3
    pools = {p.inputs["metadata"]["name"]: p.inputs["spec"]
             for p in prod().of_type("kubernetes:karpenter.sh/v1:NodePool")}
    assert {name: spec["template"]["spec"]["requirements"][1]["values"] for name, spec in pools.items()} == {
        "l4-spot-burst": ["spot", "on-demand"]}


def test_self_managed_variant_uses_an_asg_with_its_own_role_and_an_ec2_linux_access_entry():
    result = self_managed()
    assert [g.inputs["nodeGroupName"] for g in result.of_type(NODE_GROUP)] == ["system"]
    entry = result.one("aws:eks/accessEntry:AccessEntry", "l4-spot").inputs
    assert entry["type"] == "EC2_LINUX"
    own_role = result.one("aws:iam/role:Role", "l4-spot-node-role")
    assert entry["principalArn"].endswith(own_role.name + "-" + entry["principalArn"].rsplit("-", 1)[-1])
    template = gpu_template(result, "l4-spot")
    assert template["iamInstanceProfile"]["arn"].startswith("arn:aws:iam::")
    assert template["vpcSecurityGroupIds"] and template["vpcSecurityGroupIds"][0].startswith("sg-")
    assert "eks.amazonaws.com/nodegroup" not in user_data(result, "l4-spot")


def test_self_managed_asg_carries_labels_and_taints_as_cluster_autoscaler_tags():
    group = self_managed().one("aws:autoscaling/group:Group").inputs
    tags = {t["key"]: t["value"] for t in group["tags"]}
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpu-platform.io/pool"] == "l4-spot"
    assert tags["k8s.io/cluster-autoscaler/node-template/label/gpu-platform.io/driver"] == "580.173.02"
    assert tags["k8s.io/cluster-autoscaler/node-template/taint/nvidia.com/gpu"] == "true:NoSchedule"
    assert tags["kubernetes.io/cluster/gpu-dev"] == "owned"
    overrides = group["mixedInstancesPolicy"]["launchTemplate"]["overrides"]
    assert [o["instanceType"] for o in overrides] == ["g6.xlarge", "g5.xlarge"]
    assert group["mixedInstancesPolicy"]["instancesDistribution"]["onDemandPercentageAboveBaseCapacity"] == 0


# --- GpuOperatorRelease --------------------------------------------------------------------------


def test_operator_namespace_enforces_privileged_pod_security():
    namespace = dev().one("kubernetes:core/v1:Namespace", "gpu-operator-namespace").inputs
    assert namespace["metadata"]["name"] == "gpu-operator"
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "privileged"


def test_operator_release_pins_chart_repository_version_and_driver():
    release = dev().one(HELM_RELEASE, "gpu-operator").inputs
    assert release["chart"] == "gpu-operator"
    assert release["repositoryOpts"] == {"repo": "https://helm.ngc.nvidia.com/nvidia"}
    assert release["version"] == "v26.7.0"
    assert release["namespace"] == "gpu-operator"
    values = release["values"]
    assert values["driver"]["version"] == "580.173.02" and values["driver"]["usePrecompiled"] is False
    assert values["driver"]["nvidiaDriverCRD"] == {"enabled": False, "deployDefaultCR": True}
    assert dev().of_type(NVIDIA_DRIVER) == []


def test_operator_and_nfd_run_on_system_nodes_and_operands_tolerate_the_gpu_taint():
    values = dev().one(HELM_RELEASE, "gpu-operator").inputs["values"]
    system = {"gpu-platform.io/role": "system"}
    assert values["operator"]["nodeSelector"].items() >= system.items()
    assert values["node-feature-discovery"]["master"]["nodeSelector"] == system
    assert values["node-feature-discovery"]["gc"]["nodeSelector"] == system
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in values["daemonsets"][
        "tolerations"]
    assert values["dcgmExporter"] == {"enabled": True, "serviceMonitor": {"enabled": True}}  # dev scrapes DCGM


def _key_paths(values: Any, prefix: str = "") -> list[str]:
    if not isinstance(values, dict):
        return []
    paths = []
    for key, value in values.items():
        here = f"{prefix}.{key}" if prefix else key
        paths.append(here)
        if key not in ("nodeSelector",):
            paths += _key_paths(value, here)
    return paths


def _has_path(tree: Any, path: str) -> bool:
    for part in path.split("."):
        if not isinstance(tree, dict) or part not in tree:
            return False
        tree = tree[part]
    return True


# Keys of the node-feature-discovery subchart (chart 0.19.0): they live in its own values.yaml.
# Source: https://github.com/kubernetes-sigs/node-feature-discovery/blob/master/deployment/helm/node-feature-discovery/values.yaml
NFD_SUBCHART_KEYS = {"node-feature-discovery.master", "node-feature-discovery.master.nodeSelector",
                     "node-feature-discovery.gc", "node-feature-discovery.gc.nodeSelector"}


@pytest.mark.parametrize("result", [dev, two_drivers], ids=["one-driver", "per-pool-drivers"])
def test_every_operator_values_key_exists_in_the_upstream_chart(result: Any):
    chart_values = yaml.safe_load(upstream("charts", "gpu-operator", "values.yaml").read_text())
    values = result().one(HELM_RELEASE, "gpu-operator").inputs["values"]
    missing = [p for p in _key_paths(values) if not _has_path(chart_values, p) and p not in NFD_SUBCHART_KEYS]
    assert missing == []
    release = result().one(HELM_RELEASE, "gpu-operator")
    assert conformance.release_findings({"inputs": release.inputs, "name": release.name}, upstream()) == []


def test_one_nvidiadriver_per_pool_when_pools_need_different_drivers():
    result = two_drivers()
    values = result.one(HELM_RELEASE, "gpu-operator").inputs["values"]
    assert values["driver"]["nvidiaDriverCRD"] == {"enabled": True, "deployDefaultCR": False}
    drivers = {d.inputs["spec"]["nodeSelector"]["gpu-platform.io/pool"]: d.inputs
               for d in result.of_type(NVIDIA_DRIVER)}
    assert {pool: d["spec"]["version"] for pool, d in drivers.items()} == {
        "a10g-baseline": "580.173.02", "l4-spot-burst": "595.91.07"}
    assert all(d["spec"]["default"] is False for d in drivers.values())
    release = result.one(HELM_RELEASE, "gpu-operator")
    assert all(release.urn in d.dependencies for d in result.of_type(NVIDIA_DRIVER))


def test_nvidiadriver_objects_validate_against_the_upstream_crd():
    drivers = two_drivers().of_type(NVIDIA_DRIVER)
    assert len(drivers) == 2
    for driver in drivers:
        obj = {k: v for k, v in driver.inputs.items() if k in ("apiVersion", "kind", "metadata", "spec")}
        assert conformance.validate_object(obj, "1.35", upstream()) == []


def test_baked_driver_pools_get_no_operator_driver_toolkit_or_device_plugin():
    assert labels.operator_exclusion_labels("bottlerocket") == {
        "nvidia.com/gpu.deploy.driver": "false",
        "nvidia.com/gpu.deploy.container-toolkit": "false",
        "nvidia.com/gpu.deploy.device-plugin": "false",
    }
    baked = labels.gpu_pool_labels("gpu-spot", "al2023", "580")
    assert baked["gpu-platform.io/driver-source"] == "image"
    assert baked["nvidia.com/gpu.deploy.driver"] == "false"
    assert labels.operator_exclusion_labels("ubuntu-24.04") == {}


def test_label_contract_matches_what_the_policy_pack_reads():
    assert (labels.POOL_LABEL, labels.OS_LABEL, labels.DRIVER_LABEL, labels.DRIVER_SOURCE_LABEL,
            labels.CUDA_LABEL) == (inventory.POOL_LABEL, inventory.OS_LABEL, inventory.DRIVER_LABEL,
                                   inventory.DRIVER_SOURCE_LABEL, inventory.CUDA_LABEL)
    assert labels.GPU_TAINT.key == inventory.GPU_TAINT_KEY


# --- CUDA smoke test -----------------------------------------------------------------------------


def test_smoke_test_job_runs_the_repo_probe_on_the_pool_with_a_cuda_the_driver_runs():
    result = dev()
    job = result.one("kubernetes:batch/v1:Job").inputs
    pod = job["spec"]["template"]
    spec = pod["spec"]
    (container,) = spec["containers"]
    assert container["command"] == ["python", "/opt/probe/probe.py", "check", "--pool", "l4-spot",
                                    "--driver", "580.173.02", "--cuda", "13.0"]
    assert container["resources"]["requests"]["nvidia.com/gpu"] == "1"
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"} in container["env"]
    assert spec["nodeSelector"] == {"gpu-platform.io/pool": "l4-spot"}
    assert {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"} in spec[
        "tolerations"]
    assert pod["metadata"]["labels"]["gpu-platform.io/cuda"] == "13.0.2"
    assert worst_level(load_matrix().cuda_driver("13.0.2", "580.173.02", forward_compat_image=False,
                                                 admitted_branches=None, data_center_gpu=True)) == "ok"


def test_smoke_test_mounts_the_probe_file_of_the_repo_and_its_pinned_wheels():
    config_map = dev().one("kubernetes:core/v1:ConfigMap", "probe").inputs
    assert config_map["data"]["probe.py"] == (REPO / "components/probe/probe.py").read_text()
    assert config_map["data"]["requirements.txt"] == (
        REPO / "components/probe/requirements/cuda-13.0.txt").read_text()
    (init,) = dev().one("kubernetes:batch/v1:Job").inputs["spec"]["template"]["spec"]["initContainers"]
    assert init["command"][-2:] == ["-r", "/opt/probe/requirements.txt"]
    assert "--target" in init["command"] and "--no-deps" in init["command"]


def test_smoke_test_pod_gets_only_dns_and_https_egress_and_bounded_cpu():
    result = dev()
    policy = result.one("kubernetes:networking.k8s.io/v1:NetworkPolicy", "smoke").inputs["spec"]
    pod = result.one("kubernetes:batch/v1:Job").inputs["spec"]["template"]
    assert policy["podSelector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert policy["policyTypes"] == ["Ingress", "Egress"] and "ingress" not in policy
    assert {(p["protocol"], p["port"]) for p in policy["egress"][0]["ports"]} == {("UDP", 53), ("TCP", 53),
                                                                                  ("TCP", 443)}
    for container in (*pod["spec"]["containers"], *pod["spec"]["initContainers"]):
        assert container["resources"]["limits"]["cpu"] == "1" and container["imagePullPolicy"] == "Always"


def test_smoke_test_cuda_and_wheels_follow_the_pool_driver():
    job = field_report().one("kubernetes:batch/v1:Job").inputs
    assert job["spec"]["template"]["spec"]["containers"][0]["command"][-4:] == [
        "--driver", "535.309.01", "--cuda", "12.2"]
    config_map = field_report().one("kubernetes:core/v1:ConfigMap", "probe").inputs
    assert "nvidia-cuda-nvrtc-cu12==12.2.140" in config_map["data"]["requirements.txt"]


def _published_drivers() -> list[str]:
    return sorted({v for row in load_matrix().data.driver_images for v in row.versions},
                  key=parse_driver_version)


@pytest.mark.parametrize("driver", _published_drivers())
def test_every_cuda_the_smoke_test_can_pick_has_pinned_probe_wheels(driver: str):
    pool = GpuPool(name="p", kind="managed-node-group", os="ubuntu-22.04", driver_version=driver,
                   kubelet_version="1.35", instance_types=("p5.48xlarge",), use_precompiled=False,
                   path=("gpuNodeGroups", 0), driver_path=("gpuOperator", "driverVersion"))
    try:
        cuda = smoke_test_cuda(pool)
    except ValueError:
        return  # older than every CUDA release in the matrix: the component refuses the pool
    pins = probe_requirements(cuda).read_text()
    major, minor = cuda.split(".")[:2]
    suffix = "-cu12" if major == "12" else ""
    assert f"nvidia-cuda-nvrtc{suffix}=={major}.{minor}." in pins
    assert f"nvidia-cuda-runtime{suffix}=={major}.{minor}." in pins


def test_smoke_test_is_off_in_prod():
    assert prod().of_type("kubernetes:batch/v1:Job") == []


@pytest.mark.parametrize("result", [dev, prod, field_report, self_managed],
                         ids=["dev", "prod", "field-report", "self-managed"])
def test_rendered_kubernetes_objects_pass_the_conformance_harness(result: Any):
    objects = [r for r in result().registered if r.type.startswith("kubernetes:") and r.custom
               and r.type != HELM_RELEASE]
    assert objects
    for r in objects:
        obj = dict(r.inputs)
        obj.setdefault("apiVersion", r.type.split(":")[1].replace("core/", ""))
        obj.setdefault("kind", r.type.rsplit(":", 1)[-1])
        assert conformance.validate_object(obj, "1.35", upstream()) == [], r.name


# --- the program ---------------------------------------------------------------------------------


def test_field_report_combination_builds():
    groups = field_report().of_type(NODE_GROUP)
    gpu = next(g.inputs for g in groups if g.inputs["nodeGroupName"] == "a10g")
    assert gpu["labels"]["gpu-platform.io/os"] == "ubuntu-22.04"
    assert gpu["tags"]["gpu-platform.io/kubelet-version"] == "1.32"
    assert field_report().one("eks:index:Cluster").inputs["version"] == "1.34"


@pytest.mark.parametrize("driver", ["535.15.04", "535.309.01"], ids=["unpublished", "r535-on-24.04"])
def test_rejected_combination_registers_nothing(driver: str):
    values = copy.deepcopy(stack_values("dev"))
    values["gpuOperator"]["driverVersion"] = driver
    if driver == "535.15.04":
        values["gpuNodeGroups"][0].update({"os": "ubuntu-22.04", "kubeletVersion": "1.32"})
    result, error = run_rejected(values)
    assert isinstance(error, ConfigError)
    assert "gpuOperator.driverVersion" in str(error) and "nearest valid choice: 5" in str(error)
    assert result.registered == []


def test_stack_outputs_are_exported():
    outputs = resolved_exports(stack_values("dev"))
    assert outputs["clusterName"] == "gpu-dev"
    assert outputs["gpuOperatorNamespace"] == "gpu-operator"
    assert outputs["smokeTests"]["l4-spot"]["image"] == "python:3.12-slim-bookworm"
    assert outputs["systemNodeSelector"] == {"gpu-platform.io/role": "system"}
    assert outputs["gpuNodeGroups"] == {"l4-spot": "l4-spot"}


def test_pools_of_two_ubuntu_releases_get_one_nvidiadriver_each_even_on_one_driver():
    """Issue 32: ClusterPolicy tags its one driver image with the OS of the first GPU node the operator lists
    (gpu-operator v26.7.0 controllers/state_manager.go:579-611); an NVIDIADriver resolves it per node pool."""
    from components.config.models import GpuOperatorConfig, GpuPool  # noqa: PLC0415 - this test only
    from components.gpu_operator import needs_per_pool_drivers  # noqa: PLC0415 - this test only

    config = GpuOperatorConfig.model_validate({"version": "v26.7.0", "driverVersion": "595.91.07"})

    def pool(name: str, os: str) -> GpuPool:
        return GpuPool(name=name, kind="managed-node-group", os=os, driver_version="595.91.07",
                       kubelet_version="1.35", instance_types=("g6.xlarge",), use_precompiled=False,
                       path=("gpuNodeGroups", 0), driver_path=("gpuOperator", "driverVersion"))

    assert needs_per_pool_drivers(config, [pool("a", "ubuntu-24.04"), pool("b", "ubuntu-24.04")]) is False
    assert needs_per_pool_drivers(config, [pool("a", "ubuntu-24.04"), pool("b", "ubuntu-26.04")]) is True
    assert needs_per_pool_drivers(config, []) is False

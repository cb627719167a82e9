"""The seed scenarios of the matrix (issue 3, "Done when"), each a small whole stack run through every policy.

Each stack is built the way the components emit it (EKS cluster, system node group, GPU managed
node group with the label contract and the GPU taint, the gpu-operator Helm release, a GPU
Deployment) and handed to every registered policy, as the pack's analyzer would. The verdict of a
matrix policy is the level its violations are reported at; the caveats a mandatory policy's
advisory `-caveats` twin reports count as that policy's advisory verdict. Policies outside the
matrix must not block these stacks.

Scenario facts: AWS China blog (2026-06-03),
https://aws.amazon.com/cn/blogs/china/amazon-eks-using-nvidia-gpu-operator-management-gpu-cuda/
(EKS 1.34, Ubuntu 22.04 at kubelet 1.32, g5, GPU Operator v26.3.1 with 535.309.01, nvidia/cuda 12.2.2).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from policies.gpu_guard.base import all_meta, all_policies
from tests.policies.harness import run_policy

TODAY = "2026-11-29"

MATRIX_POLICIES = (
    "gpu-driver-image-published",
    "gpu-driver-branch-supported",
    "gpu-driver-branch-lifecycle",
    "gpu-operator-kubernetes-supported",
    "gpu-architecture-supported",
    "cuda-driver-compatible",
    "cuda-architecture-compatible",
    "gpu-workload-cuda-declared",
    "preinstalled-driver-exclusive",
    "one-driver-per-pool",
    "kubelet-version-skew",
    "kubernetes-version-lifecycle",
    "gpu-workload-schedulable",
)

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Equal", "value": "true", "effect": "NoSchedule"}
SYSTEM = {"gpu-platform.io/role": "system"}
BAKED_EXCLUSIONS = {
    "nvidia.com/gpu.deploy.driver": "false",
    "nvidia.com/gpu.deploy.container-toolkit": "false",
    "nvidia.com/gpu.deploy.device-plugin": "false",
}


def _launch_template(name: str, image_id: str | None = None) -> dict[str, Any]:
    props: dict[str, Any] = {
        "name": name,
        "metadataOptions": {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 2},
        "blockDeviceMappings": [{"deviceName": "/dev/sda1",
                                 "ebs": {"volumeSize": 100, "volumeType": "gp3", "encrypted": "true"}}],
    }
    if image_id:
        props["imageId"] = image_id
    return {"type": "aws:ec2/launchTemplate:LaunchTemplate", "name": name, "props": props}


# What eks-control-plane-hardened asks of every control plane, so that the scenarios judge only their subject.
HARDENED_CONTROL_PLANE: dict[str, Any] = {
    "accessConfig": {"authenticationMode": "API"},
    "enabledClusterLogTypes": ["api", "audit", "authenticator"],
    "encryptionConfig": {"provider": {"keyArn": "arn:aws:kms:us-west-2:111122223333:key/seed"},
                         "resources": ["secrets"]},
    "vpcConfig": {"subnetIds": ["subnet-a", "subnet-b"], "endpointPublicAccess": False},
}


def stack(*, kubernetes: str = "1.34", kubelet: str = "1.32", os: str = "ubuntu-22.04", operator: str = "v26.3.1",
          driver: str = "535.309.01", precompiled: bool = False, instance_type: str = "g5.xlarge",
          image: str = "nvidia/cuda:12.2.2-runtime-ubuntu22.04", cuda_label: str | None = None) -> list[dict[str, Any]]:
    """One cluster, one system node group, one operator-managed GPU pool `gpu`, the operator, one GPU Deployment."""
    template_labels = {"app": "cuda-app"}
    if cuda_label is not None:
        template_labels["gpu-platform.io/cuda"] = cuda_label
    return [
        {"type": "aws:eks/cluster:Cluster", "name": "seed",
         "props": {"name": "seed", "version": kubernetes, "roleArn": "arn:aws:iam::111122223333:role/seed",
                   **HARDENED_CONTROL_PLANE}},
        _launch_template("seed-system-lt"),
        _launch_template("seed-gpu-lt", image_id="ami-0123456789abcdef0"),
        {"type": "aws:eks/nodeGroup:NodeGroup", "name": "seed-system",
         "props": {"clusterName": "seed", "nodeGroupName": "seed-system", "instanceTypes": ["m7i.large"],
                   "amiType": "AL2023_x86_64_STANDARD", "version": kubernetes,
                   "launchTemplate": {"name": "seed-system-lt", "version": "1"},
                   "subnetIds": ["subnet-0a1", "subnet-0b2"],
                   "scalingConfig": {"minSize": 2, "desiredSize": 2, "maxSize": 3}, "labels": dict(SYSTEM)}},
        {"type": "aws:eks/nodeGroup:NodeGroup", "name": "seed-gpu",
         "props": {"clusterName": "seed", "nodeGroupName": "seed-gpu", "instanceTypes": [instance_type],
                   "amiType": "CUSTOM", "version": kubelet,
                   "launchTemplate": {"name": "seed-gpu-lt", "version": "1"},
                   "scalingConfig": {"minSize": 0, "desiredSize": 1, "maxSize": 2},
                   "labels": {"gpu-platform.io/pool": "gpu", "gpu-platform.io/os": os,
                              "gpu-platform.io/driver": driver, "gpu-platform.io/driver-source": "operator"},
                   "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NO_SCHEDULE"}]}},
        {"type": "kubernetes:helm.sh/v3:Release", "name": "gpu-operator",
         "props": {"chart": "gpu-operator", "version": operator, "namespace": "gpu-operator",
                   "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
                   "values": {
                       "operator": {"nodeSelector": {"kubernetes.io/os": "linux", **SYSTEM}},
                       "node-feature-discovery": {"master": {"nodeSelector": dict(SYSTEM)},
                                                  "gc": {"nodeSelector": dict(SYSTEM)}},
                       "daemonsets": {"tolerations": [GPU_TOLERATION]},
                       "driver": {"enabled": True, "version": driver, "usePrecompiled": precompiled,
                                  "nvidiaDriverCRD": {"enabled": False, "deployDefaultCR": True}},
                       "toolkit": {"enabled": True},
                       "devicePlugin": {"enabled": True},
                   }}},
        {"type": "kubernetes:apps/v1:Deployment", "name": "cuda-app",
         "props": {"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "cuda-app", "namespace": "default"},
                   "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "cuda-app"}},
                            "template": {"metadata": {"labels": template_labels},
                                         "spec": {"nodeSelector": {"gpu-platform.io/pool": "gpu"},
                                                  "tolerations": [GPU_TOLERATION],
                                                  "containers": [{"name": "app", "image": image,
                                                                  "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}},
    ]


def with_bottlerocket_pool(resources: list[dict[str, Any]], *, exclusions: bool) -> list[dict[str, Any]]:
    """Add a Karpenter Bottlerocket NVIDIA pool (driver baked in), with or without the operator exclusions."""
    labels = {"gpu-platform.io/pool": "gpu-spot", "gpu-platform.io/os": "bottlerocket",
              "gpu-platform.io/driver": "580", "gpu-platform.io/driver-source": "image"}
    if exclusions:
        labels.update(BAKED_EXCLUSIONS)
    return [*copy.deepcopy(resources),
            {"type": "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "name": "gpu-bottlerocket",
             "props": {"apiVersion": "karpenter.k8s.aws/v1", "kind": "EC2NodeClass",
                       "metadata": {"name": "gpu-bottlerocket"},
                       "spec": {"role": "seed-karpenter-node", "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
                                "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "seed"}}],
                                "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "seed"}}]}}},
            {"type": "kubernetes:karpenter.sh/v1:NodePool", "name": "gpu-spot",
             "props": {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "gpu-spot"},
                       "spec": {"template": {"metadata": {"labels": labels},
                                             "spec": {"nodeClassRef": {"group": "karpenter.k8s.aws",
                                                                       "kind": "EC2NodeClass",
                                                                       "name": "gpu-bottlerocket"},
                                                      "requirements": [
                                                          {"key": "node.kubernetes.io/instance-type",
                                                           "operator": "In", "values": ["g6.xlarge", "g5.xlarge"]},
                                                          {"key": "karpenter.sh/capacity-type", "operator": "In",
                                                           "values": ["spot"]}],
                                                      "taints": [{"key": "nvidia.com/gpu", "value": "true",
                                                                  "effect": "NoSchedule"}]}},
                                "limits": {"nvidia.com/gpu": 8}}}}]


def verdicts(resources: list[dict[str, Any]]) -> tuple[dict[str, set[str]], dict[str, list[str]]]:
    """Run every registered policy; (policy -> levels it reported at, policy -> messages)."""
    meta = all_meta()
    levels: dict[str, set[str]] = {}
    messages: dict[str, list[str]] = {}
    for policy in all_policies():
        schema = policy.config_schema.properties if policy.config_schema else {}
        config = {"today": TODAY} if "today" in schema else None
        outcome = run_policy(policy, resources, config)
        assert outcome.unknown is None, f"{policy.name} could not judge: {outcome.unknown}"
        # A `-caveats` twin reports the advisory findings of its mandatory policy, a `-resource` part judges
        # one resource of it before its step: count both under the catalogue policy.
        name = meta[policy.name].companion_of or meta[policy.name].part_of or policy.name
        for message in outcome.messages:
            levels.setdefault(name, set()).add(meta[policy.name].default.value)
            messages.setdefault(name, []).append(message)
    return levels, messages


def assert_verdicts(resources: list[dict[str, Any]], expected: dict[str, set[str]]) -> dict[str, list[str]]:
    """The matrix policies fire exactly as `expected`; no other policy blocks the stack."""
    levels, messages = verdicts(resources)
    matrix = {name: lv for name, lv in levels.items() if name in MATRIX_POLICIES}
    assert matrix == expected, f"matrix verdicts differ: {messages}"
    blocking = {name: messages[name] for name, lv in levels.items()
                if name not in MATRIX_POLICIES and "mandatory" in lv}
    assert not blocking, f"policies outside the matrix block a compliant stack: {blocking}"
    return messages


def is_rejected(expected: dict[str, set[str]]) -> bool:
    return any("mandatory" in levels for levels in expected.values())


EOL_ONLY = {"gpu-driver-branch-lifecycle": {"advisory"}}


def test_blog_stack_r535_on_ubuntu_22_04_with_cuda_12_2_2_passes_with_the_eol_advisory():
    messages = assert_verdicts(stack(), EOL_ONLY)
    assert "R535 reached end of life in June 2026" in messages["gpu-driver-branch-lifecycle"][0]


def test_rejects_driver_535_15_04_whose_image_was_never_published():
    expected = {
        "gpu-driver-image-published": {"mandatory"},
        # Outside v26.3.1's tested list, and below CUDA 12.2.2's 535.104.05: caveats, not blockers.
        "gpu-driver-branch-supported": {"advisory"},
        "cuda-driver-compatible": {"advisory"},
        "gpu-driver-branch-lifecycle": {"advisory"},
    }
    messages = assert_verdicts(stack(driver="535.15.04"), expected)
    assert is_rejected(expected)
    assert "nvcr.io/nvidia/driver:535.15.04-ubuntu22.04" in messages["gpu-driver-image-published"][0]
    assert "ImagePullBackOff" in messages["gpu-driver-image-published"][0]


def test_rejects_r535_on_ubuntu_24_04():
    expected = {
        "gpu-driver-image-published": {"mandatory"},
        "gpu-driver-branch-supported": {"mandatory"},
        "gpu-driver-branch-lifecycle": {"advisory"},
    }
    messages = assert_verdicts(stack(os="ubuntu-24.04", kubelet="1.34"), expected)
    assert "535.309.01-ubuntu24.04" in messages["gpu-driver-image-published"][0]
    assert "does not support driver branch R535" in messages["gpu-driver-branch-supported"][0]


def test_rejects_precompiled_r535_under_operator_v26_7_0():
    expected = {
        "gpu-driver-image-published": {"mandatory"},
        # Precompiled `535` may be any R535 build, judged as the branch's first (below CUDA 12.2.2's minimum).
        "cuda-driver-compatible": {"advisory"},
        "gpu-driver-branch-lifecycle": {"advisory"},
    }
    messages = assert_verdicts(stack(operator="v26.7.0", driver="535", precompiled=True), expected)
    assert "precompiled driver R535 is not built for ubuntu-22.04 under GPU Operator v26.7.0" in (
        messages["gpu-driver-image-published"][0])


def test_standard_535_309_01_under_operator_v26_7_0_passes_with_the_eol_advisory():
    assert_verdicts(stack(operator="v26.7.0"), EOL_ONLY)


@pytest.mark.parametrize("driver", ["535.309.01", "570.211.01"])
def test_rejects_cuda_13_without_forward_compat_package_on_r535_or_r570(driver):
    expected = {"cuda-driver-compatible": {"mandatory"}, "gpu-driver-branch-lifecycle": {"advisory"}}
    resources = stack(driver=driver, image="registry.example.com/llm/server:1.4.0", cuda_label="13.0")
    messages = assert_verdicts(resources, expected)
    assert "the image does not carry the cuda-compat forward-compatibility package" in (
        messages["cuda-driver-compatible"][0])


def test_nvidia_cuda_13_0_0_on_r535_data_center_gpu_passes_with_a_forward_compat_advisory():
    expected = {"cuda-driver-compatible": {"advisory"}, "gpu-driver-branch-lifecycle": {"advisory"}}
    messages = assert_verdicts(stack(image="nvidia/cuda:13.0.0-runtime-ubuntu22.04"), expected)
    assert "runs only through forward compatibility" in messages["cuda-driver-compatible"][0]


def test_cuda_12_8_on_r535_is_a_minor_version_compatibility_advisory():
    expected = {"cuda-driver-compatible": {"advisory"}, "gpu-driver-branch-lifecycle": {"advisory"}}
    messages = assert_verdicts(stack(image="nvcr.io/nvidia/tritonserver:25.01-py3"), expected)
    assert "minor version compatibility" in messages["cuda-driver-compatible"][0]
    assert "PTX" in messages["cuda-driver-compatible"][0]


def test_rejects_bottlerocket_pool_without_the_operator_operands_switched_off():
    current = stack(kubelet="1.34", os="ubuntu-24.04", operator="v26.7.0", driver="580.173.02",
                    image="nvcr.io/nvidia/tritonserver:25.01-py3")
    assert_verdicts(with_bottlerocket_pool(current, exclusions=True), {})
    messages = assert_verdicts(with_bottlerocket_pool(current, exclusions=False),
                               {"preinstalled-driver-exclusive": {"mandatory"}})
    assert "nvidia.com/gpu.deploy.device-plugin=false" in messages["preinstalled-driver-exclusive"][0]

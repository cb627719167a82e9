"""Bad input in `gpu-platform:karpenter` stops the program before anything is registered, naming the key.

One case per class of issue 18's list: unknown OS, a driver branch the pinned image does not ship, a full
operator driver version on a baked-driver image, `maxGpus` below one instance's GPUs, an instance type
without NVIDIA GPUs, a pool name used twice across node groups and Karpenter pools.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from components.config import ConfigError, KarpenterPoolConfig, load_stack_config
from tests.components.harness import REPO, TODAY, run_rejected, stack_values

FILE = "Pulumi.dev.yaml"


def dev_with(**changes: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["karpenter"]["pools"][0].update(changes)
    return values


def rejection(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file=FILE, today=TODAY)
    return str(caught.value)


def test_the_dev_pool_is_valid():
    config = load_stack_config(stack_values("dev"), stack_file=FILE, today=TODAY)
    assert config.karpenter is not None and config.karpenter.pools[0].ami_alias == "bottlerocket@v1.68.0"


def test_unknown_os():
    message = rejection(dev_with(os="ubuntu-20.04"))
    assert message.startswith('Pulumi.dev.yaml: karpenter.pools[0].os = "ubuntu-20.04": must be one of')
    assert "bottlerocket" in message


def test_a_branch_bottlerocket_does_not_ship():
    message = rejection(dev_with(driverVersion="570"))
    assert ('karpenter.pools[0].driverVersion = "570": bottlerocket v1.68.0 ships one driver, 580.178.04, '
            "not R570") in message
    assert "nearest valid choice: 580" in message


def test_a_branch_the_pinned_al2023_release_does_not_ship():
    # AL2023 v20250720 shipped R575 (awslabs/amazon-eks-ami release v20250715): R580 came later.
    message = rejection(dev_with(os="al2023", imageVersion="v20250720", driverVersion="580"))
    assert 'karpenter.pools[0].driverVersion = "580": al2023 NVIDIA images ship driver branch R575' in message
    assert "not R580" in message
    load_stack_config(dev_with(os="al2023", imageVersion="v20251120", driverVersion="580"), stack_file=FILE,
                      today=TODAY)


@pytest.mark.parametrize("os_name,version", [("bottlerocket", "v1.66.0"), ("al2023", "v20251120")])
def test_a_full_operator_driver_version_on_a_baked_image(os_name: str, version: str):
    message = rejection(dev_with(os=os_name, imageVersion=version, driverVersion="580.173.02"))
    assert f'karpenter.pools[0].driverVersion = "580.173.02": a {os_name} image bakes a driver branch' in message
    assert "nearest valid choice: 580" in message


def test_max_gpus_below_one_instance():
    message = rejection(dev_with(instanceTypes=["g6.xlarge", "g6.12xlarge"], maxGpus=2))
    assert ('karpenter.pools[0].maxGpus = 2: the NodePool\'s nvidia.com/gpu limit is below the 4 GPUs of one '
            "g6.12xlarge") in message
    assert "raise maxGpus or remove g6.12xlarge from instanceTypes" in message


@pytest.mark.parametrize("instance_type", ["m7i.large", "inf2.xlarge", "trn1.2xlarge"])
def test_an_instance_type_without_nvidia_gpus(instance_type: str):
    message = rejection(dev_with(instanceTypes=["g6.xlarge", instance_type]))
    assert f'karpenter.pools[0].instanceTypes[1] = "{instance_type}": instance type {instance_type} is not a known ' \
           "GPU instance type" in message


def test_a_pool_name_used_by_a_node_group():
    message = rejection(dev_with(name="l4-spot"))
    assert 'karpenter.pools[0].name = "l4-spot": pool names must be unique across gpuNodeGroups and karpenter.pools' \
        in message


def test_a_pool_name_used_twice_among_karpenter_pools():
    values = copy.deepcopy(stack_values("dev"))
    values["karpenter"]["pools"].append(copy.deepcopy(values["karpenter"]["pools"][0]))
    message = rejection(values)
    assert 'karpenter.pools[1].name = "gpu-spot": pool names must be unique' in message


def test_latest_is_not_a_pin():
    message = rejection(dev_with(imageVersion="latest"))
    assert 'karpenter.pools[0].imageVersion = "latest"' in message


def test_the_program_registers_nothing_on_bad_karpenter_input():
    result, error = run_rejected(dev_with(driverVersion="570"))
    assert isinstance(error, ConfigError)
    assert result.registered == []


def test_the_offline_preview_exits_2_naming_the_key(tmp_path: Path):
    stack = yaml.safe_load((REPO / FILE).read_text())
    stack["config"]["gpu-platform:karpenter"]["pools"][0]["maxGpus"] = 0
    bad = tmp_path / "Pulumi.bad.yaml"
    bad.write_text(yaml.safe_dump(stack))
    done = subprocess.run([sys.executable, "-m", "tools.preview", "--config-file", str(bad), "--today",
                           TODAY.isoformat()], cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 2, done.stderr
    assert "karpenter.pools[0].maxGpus = 0" in done.stderr


def test_an_instance_type_the_pinned_release_driver_cannot_drive():
    # g7 (RTX PRO 4500 Blackwell) needs R595; Bottlerocket v1.66.0 ships R580 (matrix.yaml gpus row, EKS AMI guide).
    message = rejection(dev_with(instanceTypes=["g6.xlarge", "g7.2xlarge"]))
    assert 'karpenter.pools[0].driverVersion = "580": g7.2xlarge has RTX PRO 4500 Blackwell Server Edition' in message
    assert "needs driver 595 or later" in message


def test_nvidia_driver_branch_is_a_bottlerocket_setting_only():
    entry = {"name": "p", "os": "al2023", "driverVersion": "580", "imageVersion": "v20260917",
             "instanceTypes": ["g6.xlarge"], "nvidiaDriverBranch": "pb"}
    with pytest.raises(ValueError, match="nvidiaDriverBranch is Bottlerocket's"):
        KarpenterPoolConfig.model_validate(entry)
    entry.update(os="bottlerocket", imageVersion="v1.68.0")
    assert KarpenterPoolConfig.model_validate(entry).nvidia_driver_branch == "pb"

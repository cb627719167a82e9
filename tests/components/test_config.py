"""The stack configuration: every class of bad input stops with one message naming file, key, value and fix."""

from __future__ import annotations

import copy
from typing import Any

import pulumi
import pytest

from components import config as config_module
from components.config import (
    ConfigError,
    StackConfig,
    load_stack_config,
    matrix_advisories,
    parse_stack_config,
)
from tests.components.harness import TODAY, stack_values

FILE = "Pulumi.dev.yaml"


def base() -> dict[str, Any]:
    return {
        "cluster": {"name": "gpu-dev", "kubernetesVersion": "1.35", "availabilityZones": 2},
        "gpuOperator": {"version": "v26.7.0", "driverVersion": "580.173.02"},
        "gpuNodeGroups": [{"name": "a10g", "instanceTypes": ["g5.xlarge"], "os": "ubuntu-24.04"}],
    }


def field_report() -> dict[str, Any]:
    """The first field report's combination: EKS 1.34, Ubuntu 22.04 with kubelet 1.32, v26.3.1, 535.309.01."""
    return {
        "cluster": {"name": "field-report", "kubernetesVersion": "1.34", "availabilityZones": 2},
        "gpuOperator": {"version": "v26.3.1", "driverVersion": "535.309.01"},
        "gpuNodeGroups": [{"name": "a10g", "instanceTypes": ["g5.xlarge"], "os": "ubuntu-22.04",
                           "kubeletVersion": "1.32"}],
    }


def rejection(values: dict[str, Any], *, check_matrix: bool = True) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file=FILE, check_matrix=check_matrix, today=TODAY)
    return str(caught.value)


def with_change(path: str, value: Any) -> dict[str, Any]:
    values = base()
    target: Any = values
    parts = path.split(".")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target.setdefault(part, {})
    last = parts[-1]
    if last.isdigit():
        target[int(last)] = value
    else:
        target[last] = value
    return values


# --- both stacks --------------------------------------------------------------------------------


def test_dev_stack_parses_with_current_versions():
    config = load_stack_config(stack_values("dev"), stack_file=FILE, today=TODAY)
    assert config.cluster.kubernetes_version == "1.35"
    assert config.gpu_operator is not None and config.gpu_operator.version == "v26.7.0"
    assert config.gpu_operator.smoke_test is True
    pool, karpenter_pool = config.gpu_pools()
    assert (pool.os, pool.driver_version, pool.kind) == ("ubuntu-24.04", "580.173.02", "managed-node-group")
    assert (karpenter_pool.os, karpenter_pool.driver_version, karpenter_pool.kind) == ("bottlerocket", "580",
                                                                                     "karpenter")
    assert config.karpenter is not None and config.karpenter.pools[0].capacity_types == ["spot"]
    assert config.karpenter.controller_replicas == 1 and not config.karpenter.pools[0].on_demand_fallback
    assert config.gpu_node_groups[0].capacity_type == "spot" and config.gpu_node_groups[0].min_size == 0
    assert config.cluster.availability_zones == 2 and config.system_node_group.min_size == 2


def test_prod_stack_is_highly_available_with_on_demand_baseline_and_spot_burst():
    config = load_stack_config(stack_values("prod"), stack_file="Pulumi.prod.yaml", today=TODAY)
    assert config.cluster.availability_zones == 3 and not config.cluster.single_nat_gateway
    assert config.system_node_group.min_size >= 3
    capacity = {g.capacity_type: g for g in config.gpu_node_groups}
    assert list(capacity) == ["on-demand"] and capacity["on-demand"].min_size >= 1
    assert config.karpenter is not None and config.karpenter.controller_replicas == 2
    (burst,) = config.karpenter.pools
    assert (burst.os, burst.capacity_types, burst.on_demand_fallback) == ("ubuntu-24.04", ["spot"], True)
    assert config.cluster.ops_read_only_principal_arn is not None
    assert matrix_advisories(config, stack_file="Pulumi.prod.yaml", today=TODAY) == []


def test_config_keys_use_the_camel_case_names_of_config_md():
    config = parse_stack_config(stack_values("prod"))[0]
    assert config is not None
    dumped = config.model_dump(by_alias=True, exclude_none=True)
    assert set(dumped["cluster"]) >= {"name", "kubernetesVersion", "existing", "vpcCidr", "availabilityZones",
                                      "endpointPublicAccessCidrs", "opsReadOnlyPrincipalArn"}
    assert set(dumped["gpuNodeGroups"][0]) >= {"instanceTypes", "os", "capacityType", "minSize", "desiredSize",
                                               "maxSize", "diskSizeGiB"}


def test_every_model_field_has_a_description():
    def walk(model: type[Any]) -> list[str]:
        missing = []
        for name, info in model.model_fields.items():
            if not info.description:
                missing.append(f"{model.__name__}.{name}")
        return missing

    models = [getattr(config_module, n) for n in dir(config_module) if n.endswith("Config") and n != "ConfigError"]
    assert models, "no config models found"
    assert [m for model in models for m in walk(model)] == []


def test_reads_json_strings_with_the_project_prefix_and_ignores_other_namespaces():
    raw = {"aws:region": "us-west-2",
           "gpu-platform:cluster": '{"name": "gpu-dev", "kubernetesVersion": "1.35"}'}
    config = load_stack_config(raw, stack_file=FILE, today=TODAY)
    assert config.cluster.name == "gpu-dev" and config.gpu_node_groups == []


def test_config_error_is_a_pulumi_run_error_so_no_traceback_is_printed():
    assert issubclass(ConfigError, pulumi.RunError)


# --- schema errors ------------------------------------------------------------------------------


def test_rejects_missing_cluster_section():
    message = rejection({"gpuNodeGroups": []})
    assert message.startswith(f"{FILE}: cluster = (missing)")
    assert "add gpu-platform:cluster" in message


def test_rejects_unknown_top_level_key_with_nearest_spelling():
    values = base()
    values["gpuNodeGroup"] = values.pop("gpuNodeGroups")
    message = rejection(values)
    assert "gpuNodeGroup = [" in message
    assert "unknown key 'gpu-platform:gpuNodeGroup'" in message
    assert "nearest valid choice: gpuNodeGroups" in message


def test_rejects_unknown_nested_key_with_nearest_spelling():
    message = rejection(with_change("gpuNodeGroups.0.desiredSze", 1))
    assert f"{FILE}: gpuNodeGroups[0].desiredSze = 1: unknown key 'desiredSze'" in message
    assert "nearest valid choice: desiredSize" in message


def test_rejects_unquoted_kubernetes_version_and_says_to_quote_it():
    message = rejection(with_change("cluster.kubernetesVersion", 1.35))
    assert "cluster.kubernetesVersion = 1.35: must be a string" in message
    assert 'nearest valid choice: "1.35"' in message and "quote it" in message


def test_rejects_wrong_type_for_a_number():
    message = rejection(with_change("gpuNodeGroups.0.maxSize", "4"))
    assert 'gpuNodeGroups[0].maxSize = "4": must be an integer' in message
    assert "write the number without quotes" in message


def test_rejects_misspelled_enum_value_with_nearest_choice():
    message = rejection(with_change("gpuNodeGroups.0.capacityType", "Spot"))
    assert 'gpuNodeGroups[0].capacityType = "Spot": must be one of on-demand, spot' in message
    assert "nearest valid choice: spot" in message


def test_rejects_operator_managed_pool_on_a_baked_driver_os():
    message = rejection(with_change("gpuNodeGroups.0.os", "bottlerocket"))
    assert 'gpuNodeGroups[0].os = "bottlerocket": must be one of ubuntu-22.04, ubuntu-24.04' in message


def test_rejects_out_of_range_number_with_the_bound_as_fix():
    values = base()
    values["systemNodeGroup"] = {"minSize": 0}
    message = rejection(values)
    assert "systemNodeGroup.minSize = 0: must be >= 1; nearest valid choice: 1" in message


def test_rejects_desired_size_above_max_size():
    values = with_change("gpuNodeGroups.0.desiredSize", 5)
    values["gpuNodeGroups"][0]["maxSize"] = 2
    message = rejection(values)
    assert "gpuNodeGroups[0].desiredSize = 5: minSize <= desiredSize <= maxSize must hold (maxSize is 2)" in message
    assert "nearest valid choice: 2" in message


def test_rejects_cidr_with_host_bits_and_names_the_network():
    message = rejection(with_change("cluster.vpcCidr", "10.40.0.1/16"))
    assert 'cluster.vpcCidr = "10.40.0.1/16": not an IPv4 network' in message
    assert "nearest valid choice: 10.40.0.0/16" in message


def test_rejects_public_endpoint_open_to_the_internet():
    message = rejection(with_change("cluster.endpointPublicAccessCidrs", ["0.0.0.0/0"]))
    assert 'cluster.endpointPublicAccessCidrs[0] = "0.0.0.0/0"' in message
    assert "use [] for a private-only endpoint" in message


def test_rejects_sts_session_arn_and_names_the_role_arn():
    arn = "arn:aws:sts::111122223333:assumed-role/eks-mcp-readonly/session"
    message = rejection(with_change("cluster.opsReadOnlyPrincipalArn", arn))
    assert f'cluster.opsReadOnlyPrincipalArn = "{arn}"' in message
    assert "nearest valid choice: arn:aws:iam::111122223333:role/eks-mcp-readonly" in message


def test_rejects_malformed_snapshot_id():
    values = base()
    values["inferenceServices"] = [{"name": "llm", "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                                    "modelVolume": {"snapshotId": "snap-0123456789ABCDEF0"}}]
    message = rejection(values)
    assert 'inferenceServices[0].modelVolume.snapshotId = "snap-0123456789ABCDEF0"' in message
    assert "nearest valid choice: snap-0123456789abcdef0" in message


def test_rejects_certificate_arn_that_is_not_an_acm_arn():
    values = base()
    values["inferenceServices"] = [{"name": "llm", "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                                    "ingress": {"host": "llm.example.com",
                                                "certificateArn": "arn:aws:iam::111122223333:server-certificate/x"}}]
    message = rejection(values)
    assert "inferenceServices[0].ingress.certificateArn" in message
    assert "aws acm list-certificates" in message


def test_rejects_operator_version_without_leading_v():
    message = rejection(with_change("gpuOperator.version", "26.7.0"))
    assert 'gpuOperator.version = "26.7.0"' in message and "nearest valid choice: v26.7.0" in message


def test_rejects_driver_version_with_r_prefix():
    message = rejection(with_change("gpuOperator.driverVersion", "R580"))
    assert 'gpuOperator.driverVersion = "R580"' in message and "nearest valid choice: 580" in message


def test_rejects_karpenter_duration_in_days_and_converts_it():
    values = base()
    values["karpenter"] = {"version": "1.14.1", "pools": [
        {"name": "gpu-spot", "os": "bottlerocket", "driverVersion": "580", "instanceTypes": ["g6.xlarge"],
         "capacityTypes": ["spot"], "expireAfter": "30d"}]}
    message = rejection(values)
    assert 'karpenter.pools[0].expireAfter = "30d"' in message and "nearest valid choice: 720h" in message


def test_rejects_full_driver_version_on_a_baked_driver_karpenter_pool():
    values = base()
    values["karpenter"] = {"version": "1.14.1", "pools": [
        {"name": "gpu-spot", "os": "bottlerocket", "driverVersion": "580.173.02", "instanceTypes": ["g6.xlarge"],
         "imageVersion": "v1.26.0"}]}
    message = rejection(values)
    assert 'karpenter.pools[0].driverVersion = "580.173.02"' in message and "nearest valid choice: 580" in message


def test_rejects_reference_to_a_pool_that_does_not_exist():
    values = base()
    values["inferenceServices"] = [{"name": "llm", "image": "nvcr.io/nvidia/tritonserver:25.01-py3",
                                    "nodePools": ["a10"]}]
    message = rejection(values)
    assert 'inferenceServices[0].nodePools[0] = "a10": nodePools may only name pools' in message
    assert "nearest valid choice: a10g" in message


def test_rejects_duplicate_pool_names_across_node_groups_and_karpenter():
    values = base()
    values["karpenter"] = {"version": "1.14.1", "pools": [
        {"name": "a10g", "os": "bottlerocket", "driverVersion": "580", "instanceTypes": ["g6.xlarge"],
         "imageVersion": "v1.26.0"}]}
    message = rejection(values)
    assert 'karpenter.pools[0].name = "a10g": pool names must be unique' in message
    assert "gpuNodeGroups[0].name already uses it" in message and "nearest valid choice: a10g-2" in message


def test_rejects_gpu_pools_without_a_gpu_operator():
    values = base()
    del values["gpuOperator"]
    message = rejection(values)
    assert 'gpuNodeGroups[0].name = "a10g": Ubuntu GPU pools get their driver from the GPU Operator' in message


def test_reports_several_problems_in_one_message():
    values = with_change("gpuNodeGroups.0.capacityType", "Spot")
    values["cluster"]["vpcCidr"] = "10.40.0.1/16"
    message = rejection(values)
    assert message.splitlines()[0] == f"{FILE}: the stack configuration has 2 problems; nothing was created:"
    assert len(message.splitlines()) == 4  # the two, and what they held back (issue 56)
    assert message.splitlines()[-1] == "  (these held back the service and matrix checks, which run once the stack " \
        "file's keys are valid)"


def test_names_the_file_from_gpu_platform_config_file(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("GPU_PLATFORM_CONFIG_FILE", "stacks/custom.yaml")
    with pytest.raises(ConfigError, match=r"^stacks/custom\.yaml: gpuNodeGroups\[0\]\.capacityType"):
        load_stack_config(with_change("gpuNodeGroups.0.capacityType", "Spot"), today=TODAY)


# --- matrix checks at program start --------------------------------------------------------------


def test_field_report_combination_parses_with_only_the_eol_advisory():
    config = load_stack_config(field_report(), stack_file=FILE, today=TODAY)
    (pool,) = config.gpu_pools()
    assert (pool.kubelet_version, pool.os, pool.driver_version) == ("1.32", "ubuntu-22.04", "535.309.01")
    advisories = matrix_advisories(config, stack_file=FILE, today=TODAY)
    assert len(advisories) == 1
    assert advisories[0].startswith(f'{FILE}: gpuOperator.driverVersion = "535.309.01": R535 reached end of life')


def test_rejects_unpublished_driver_535_15_04_naming_the_nearest_published_one():
    values = field_report()
    values["gpuOperator"]["driverVersion"] = "535.15.04"
    message = rejection(values)
    assert f'{FILE}: gpuOperator.driverVersion = "535.15.04": driver 535.15.04 has no published image' in message
    # R535 reached its end of life in June 2026 (the program's day is later): no R535 suggestion (issue 39)
    assert "nearest valid choice: 580.173.02, 580.167.08, 580.159.04, 580.159.03, 580.126.20" in message
    assert "535.309.01" not in message


def test_rejects_r535_on_ubuntu_24_04():
    values = with_change("gpuOperator.driverVersion", "535.309.01")
    message = rejection(values)
    assert 'gpuOperator.driverVersion = "535.309.01"' in message
    assert "R535 was never built for ubuntu24.04" in message
    assert "nearest valid choice: 580." in message


def test_blames_the_pool_driver_when_the_pool_sets_its_own():
    values = with_change("gpuNodeGroups.0.driverVersion", "535.309.01")
    message = rejection(values)
    assert 'gpuNodeGroups[0].driverVersion = "535.309.01"' in message


def test_rejects_kubelet_newer_than_the_control_plane():
    message = rejection(with_change("gpuNodeGroups.0.kubeletVersion", "1.36"))
    assert 'gpuNodeGroups[0].kubeletVersion = "1.36": kubelet 1.36 is newer than the control plane 1.35' in message
    assert "nearest valid choice: 1.35" in message


def test_rejects_ubuntu_22_04_where_canonical_publishes_no_free_image():
    message = rejection(with_change("gpuNodeGroups.0.os", "ubuntu-22.04"))
    assert 'gpuNodeGroups[0].kubeletVersion = "1.35": no ubuntu-22.04 EKS node image is published' in message
    assert "nearest valid choice: 1.32" in message


def test_rejects_unknown_instance_type_with_nearest_size():
    message = rejection(with_change("gpuNodeGroups.0.instanceTypes", ["g5.xlarg"]))
    assert 'gpuNodeGroups[0].instanceTypes[0] = "g5.xlarg"' in message
    assert "nearest valid choice: g5.xlarge" in message


def test_rejects_mixed_cpu_architectures_in_one_pool():
    message = rejection(with_change("gpuNodeGroups.0.instanceTypes", ["g5.xlarge", "g5g.xlarge"]))
    assert 'gpuNodeGroups[0].instanceTypes[1] = "g5g.xlarge": a pool boots one image' in message
    assert "fix: move it to a pool of its own" in message


def test_rejects_gpu_instance_in_the_system_node_group():
    values = base()
    values["systemNodeGroup"] = {"instanceTypes": ["g5.xlarge"]}
    message = rejection(values)
    assert 'systemNodeGroup.instanceTypes[0] = "g5.xlarge": the system node group is untainted' in message


def test_rejects_operator_release_the_matrix_does_not_know():
    message = rejection(with_change("gpuOperator.version", "v26.4.9"))
    assert 'gpuOperator.version = "v26.4.9": not a GPU Operator release' in message
    assert "nearest valid choice: v26.7.0" in message  # an unknown release inside the range: the closest known


def test_an_operator_newer_than_the_matrix_is_to_be_added_never_downgraded():
    """Issue 46: v26.10.0 got "nearest valid choice: v25.10.0"."""
    message = rejection(with_change("gpuOperator.version", "v26.10.0"))
    assert ('gpuOperator.version = "v26.10.0": GPU Operator v26.10.0 is newer than the matrix (its newest release is '
            "v26.7.0; the operator rows were reviewed on ") in message
    assert "`.venv/bin/gpu-platform matrix refresh --fetch` reads NVIDIA's component matrix" in message
    assert "nearest valid choice" not in message and "v25.10.0" not in message


def test_a_driver_newer_than_the_matrix_is_to_be_added_never_downgraded():
    message = rejection(with_change("gpuOperator.driverVersion", "650.10.01"))
    assert ('gpuOperator.driverVersion = "650.10.01": driver 650.10.01 is newer than the matrix (its newest driver is '
            "610.57.04; the driver rows were reviewed on ") in message
    assert "`.venv/bin/gpu-platform matrix refresh --fetch --write`" in message


def test_rejects_control_plane_past_extended_support():
    values = copy.deepcopy(base())
    values["cluster"]["kubernetesVersion"] = "1.31"
    message = rejection(values)
    assert 'cluster.kubernetesVersion = "1.31": EKS 1.31 is not supported' in message


def test_schema_only_parse_skips_the_matrix():
    values = with_change("gpuOperator.driverVersion", "535.15.04")
    assert isinstance(load_stack_config(values, stack_file=FILE, check_matrix=False), StackConfig)

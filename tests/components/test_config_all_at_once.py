"""Every config problem in one run (issue 56): the stages of `components.config.loader.check_stack` whose inputs
are valid all run, so a stack file with a service problem and a matrix problem names both at once; a schema
problem, which keeps the later stages from running, says which checks it held back. Each problem is one line
with its key."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
import yaml

from components.config.issues import ConfigError
from components.config.loader import SCHEMA_HOLDS_BACK, check_stack, load_stack_config
from tests.shared import REPO

TODAY = date(2026, 12, 1)


def _dev() -> dict[str, Any]:
    config = yaml.safe_load((REPO / "Pulumi.dev.yaml").read_text(encoding="utf-8"))["config"]
    return {k.split(":", 1)[1]: v for k, v in config.items() if k.startswith("gpu-platform:")}


def _broken_service_and_matrix() -> dict[str, Any]:
    values = _dev()
    values["inferenceServices"][0]["cudaVersion"] = "11.8"  # the image tag says CUDA 13.0: the service stage
    values["gpuOperator"]["driverVersion"] = "999.1.1"  # no such driver: the matrix stage
    return values


def test_a_service_problem_and_a_matrix_problem_are_named_in_one_run() -> None:
    config, problems, _ = check_stack(_broken_service_and_matrix(), region="us-west-2", today=TODAY)
    assert config is None
    keys = {".".join(str(p) for p in problem.path) for problem in problems}
    assert "inferenceServices.0.cudaVersion" in keys, keys
    assert "gpuOperator.driverVersion" in keys, keys
    with pytest.raises(ConfigError) as caught:
        load_stack_config(_broken_service_and_matrix(), stack_file="Pulumi.dev.yaml", today=TODAY)
    message = str(caught.value)
    lines = message.splitlines()
    assert lines[0].startswith("Pulumi.dev.yaml: the stack configuration has ")
    assert any(line.startswith("  - Pulumi.dev.yaml: inferenceServices[0].cudaVersion = ") for line in lines)
    assert any(line.startswith("  - Pulumi.dev.yaml: gpuOperator.driverVersion = ") for line in lines)
    assert "held back" not in message  # nothing was held back: both stages ran


def test_a_schema_problem_says_which_checks_it_held_back() -> None:
    values = _broken_service_and_matrix()
    values["gpuNodeGroups"][0]["minSize"] = "none"  # not a number: the schema stage
    config, problems, _ = check_stack(values, region="us-west-2", today=TODAY)
    assert config is None and [p.holds_back for p in problems] == [True]
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file="Pulumi.dev.yaml", today=TODAY)
    message = str(caught.value)
    assert message.startswith("Pulumi.dev.yaml: gpuNodeGroups[0].minSize = \"none\": ")
    assert "\n" not in message  # one problem, one line, that says what it held back
    assert message.endswith(f"(this held back {SCHEMA_HOLDS_BACK})")
    assert SCHEMA_HOLDS_BACK == "the service and matrix checks, which run once the stack file's keys are valid"
    values["gpuNodeGroups"][0]["maxSize"] = "two"
    with pytest.raises(ConfigError) as two:
        load_stack_config(values, stack_file="Pulumi.dev.yaml", today=TODAY)
    lines = str(two.value).splitlines()
    assert lines[0] == "Pulumi.dev.yaml: the stack configuration has 2 problems; nothing was created:"
    assert sorted(line.split(" = ", 1)[0] for line in lines[1:3]) == [
        "  - Pulumi.dev.yaml: gpuNodeGroups[0].maxSize", "  - Pulumi.dev.yaml: gpuNodeGroups[0].minSize"]
    assert lines[3] == f"  (these held back {SCHEMA_HOLDS_BACK})"

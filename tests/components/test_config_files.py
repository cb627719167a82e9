"""A broken stack file exits 2 without a traceback; one message per offending key (the field-report messages).

Broken YAML, an empty stack file and a stack file that is a list go through `python -m tools.preview`, as
CI and `make preview` run it. tests/components/test_config_fuzz.py generates broken keys in every section.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from components.config import ConfigError, load_stack_config
from tests.components.harness import TODAY, stack_values
from tests.conftest import run_preview_process

FILE = "Pulumi.dev.yaml"


def _rejected(values: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        load_stack_config(values, stack_file=FILE, today=TODAY)
    return str(caught.value)


BROKEN_FILES: dict[str, tuple[str, Callable[[Path], str]]] = {
    "broken-yaml": ("config:\n  gpu-platform:cluster: {name: gpu-dev\n", lambda p: "is not valid YAML"),
    "tab-indented": ("config:\n\tgpu-platform:cluster: {}\n", lambda p: "is not valid YAML"),
    "empty": ("", lambda p: "gpu-platform:cluster"),
    "a-list": ("- config: {}\n", lambda p: "a stack file is a mapping with a 'config:' key, got list"),
    "config-is-a-list": ("config:\n  - gpu-platform:cluster\n", lambda p: "key 'config' must be a mapping"),
}


@pytest.mark.parametrize("name", sorted(BROKEN_FILES))
def test_a_broken_stack_file_exits_2_without_a_traceback(tmp_path: Path, name: str):
    text, expected = BROKEN_FILES[name]
    stack_file = tmp_path / f"Pulumi.{name}.yaml"
    stack_file.write_text(text)
    run = run_preview_process("--config-file", str(stack_file), "--json", timeout=120)
    assert run.returncode == 2, run.stderr
    # stdout is the result document of a refused stack file (issue 56), its problem the one stderr names.
    doc = run.json()
    assert (doc["verdict"], doc["exitCode"], len(doc["problems"])) == ("REFUSED", 2, 1)
    assert str(stack_file) in doc["problems"][0]["message"]
    assert "Traceback" not in run.stderr
    assert str(stack_file) in run.stderr
    assert expected(stack_file) in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1, run.stderr


# --- one message per key: the two field-report messages ----------------------------------------------------

def _driver_stack(driver: str, os: str) -> dict[str, Any]:
    values = copy.deepcopy(stack_values("dev"))
    values["gpuOperator"]["driverVersion"] = driver
    values["gpuNodeGroups"][0]["os"] = os
    return values


def test_r535_on_ubuntu_24_04_names_the_driver_key_once():
    message = _rejected(_driver_stack("535.309.01", "ubuntu-24.04"))
    assert "\n" not in message
    assert message.count("gpuOperator.driverVersion") == 1
    assert "has no published image" in message and "does not support driver branch R535" in message
    assert message.count("nearest valid choice") == 1
    # R610 reached its end of life in August 2026: not suggested (issue 39); only what the operator release lists
    # (issue 46: 580.178.04 and the older 580s are not in v26.7.0's list)
    assert message.endswith("nearest valid choice: 580.173.02, 595.91.07")


def test_535_15_04_names_its_nearest_choices_once():
    message = _rejected(_driver_stack("535.15.04", "ubuntu-22.04"))
    (line,) = [ln for ln in message.splitlines() if "gpuOperator.driverVersion" in ln]
    # R535 reached its end of life in June 2026: the nearest live published versions instead (issue 39)
    # and only what the operator release lists (issue 46)
    for choice in ("580.173.02", "595.91.07"):
        assert line.count(choice) == 1, line
    assert "535.309.01" not in line and "580.178.04" not in line
    assert line.endswith("nearest valid choice: 580.173.02, 595.91.07")

"""The first field report's stack through `python -m tools.preview`, end to end (issue 4, "Done when").

The field report ran EKS 1.34 with a g5.xlarge managed node group on Canonical's Ubuntu 22.04 EKS image at
kubelet 1.32, GPU Operator v26.3.1 installing driver 535.309.01, and checked the GPU with a CUDA smoke test.
Source: https://aws.amazon.com/cn/blogs/china/amazon-eks-using-nvidia-gpu-operator-management-gpu-cuda/

The stack files live in tests/tools/fixtures/stacks/. Each preview runs the real program in a fresh
interpreter and the real policy pack in its own process. With `--config-file`, `--stack` still names the
stack (URNs, and the default policy config policies/config/<stack>.json; CONFIG.md section 3), so the
field report previews as stack `fieldreport`, which has no policy config of its own.

The program's start-up matrix check and the pack judge end of life on the real date (the preview has no
way to pin it); R535's end of life (June 2026) makes the advisory permanent, and nothing asserted here
changes before EKS 1.34 leaves extended support (2027-12-02).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import PreviewRun, RunPreview
from tests.shared import REPO

STACKS = REPO / "tests" / "tools" / "fixtures" / "stacks"
FIELD_REPORT = STACKS / "Pulumi.fieldreport.yaml"
UNPUBLISHED_DRIVER = STACKS / "Pulumi.fieldreport-535-15-04.yaml"
R535_ON_NOBLE = STACKS / "Pulumi.fieldreport-ubuntu-24-04.yaml"
PROD_POLICY_CONFIG = REPO / "policies" / "config" / "prod.json"

LIFECYCLE = "gpu-driver-branch-lifecycle"
# Every lifecycle here is judged at one pinned day, never the calendar.
TODAY = ("--today", "2026-11-30")
R535_EOL = "R535 reached end of life in June 2026"


@pytest.fixture(scope="module")
def field_report(run_preview: RunPreview) -> PreviewRun:
    return run_preview(*TODAY, "--config-file", str(FIELD_REPORT), "--stack", "fieldreport", "--json")


def _violations(run: PreviewRun, **match: str) -> list[dict[str, str]]:
    return [v for v in run.violations() if all(v[k] == want for k, want in match.items())]


def _resource(run: PreviewRun, type_: str, name: str) -> dict[str, Any]:
    found = [r for r in run.json()["resources"] if r["type"] == type_ and r["name"] == name]
    assert len(found) == 1, f"expected one {type_} named {name}, found {len(found)}"
    inputs: dict[str, Any] = found[0]["inputs"]
    return inputs


def _config_values(path: Path) -> dict[tuple[str, ...], Any]:
    """Every leaf of a stack file's `config:` by its key path (list items by index)."""
    leaves: dict[tuple[str, ...], Any] = {}

    def walk(prefix: tuple[str, ...], value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk((*prefix, str(key)), item)
        elif isinstance(value, list):
            for index, item in enumerate(value):
                walk((*prefix, str(index)), item)
        else:
            leaves[prefix] = value

    walk((), yaml.safe_load(path.read_text(encoding="utf-8"))["config"])
    return leaves


def test_field_report_stack_previews_with_exit_0_and_the_r535_end_of_life_advisory(field_report: PreviewRun) -> None:
    assert field_report.returncode == 0, field_report.explain()
    assert _violations(field_report, enforcement="mandatory") == []
    advisories = _violations(field_report, policy=LIFECYCLE, enforcement="advisory")
    assert len(advisories) == 1, field_report.violations()
    assert "run driver 535.309.01 from GPU Operator values driver.version" in advisories[0]["message"]
    assert R535_EOL in advisories[0]["message"]
    assert advisories[0]["urn"].startswith("urn:pulumi:fieldreport::gpu-platform::")
    # The program's own start-up check warns about the same end of life, naming the key to change.
    assert f"warning: {FIELD_REPORT}: gpuOperator.driverVersion = \"535.309.01\": {R535_EOL}" in field_report.stderr


def test_field_report_stack_expresses_the_field_report_combination(field_report: PreviewRun) -> None:
    doc = field_report.json()
    assert doc["stack"] == "fieldreport"
    assert _resource(field_report, "eks:index:Cluster", "gpu-fieldreport-eks")["version"] == "1.34"
    gpu_group = _resource(field_report, "aws:eks/nodeGroup:NodeGroup", "gpu-fieldreport-a10g-node-group")
    assert gpu_group["instanceTypes"] == ["g5.xlarge"]
    assert gpu_group["labels"]["gpu-platform.io/os"] == "ubuntu-22.04"
    assert gpu_group["labels"]["gpu-platform.io/driver"] == "535.309.01"
    assert gpu_group["tags"]["gpu-platform.io/kubelet-version"] == "1.32"
    release = _resource(field_report, "kubernetes:helm.sh/v3:Release", "gpu-operator-release")
    assert (release["chart"], release["version"]) == ("gpu-operator", "v26.3.1")
    assert release["values"]["driver"]["version"] == "535.309.01"
    smoke = _resource(field_report, "kubernetes:batch/v1:Job", "gpu-operator-smoke-a10g-job")["spec"]["template"]
    assert smoke["spec"]["containers"][0]["command"][1:] == [
        "/opt/probe/probe.py", "check", "--pool", "a10g", "--driver", "535.309.01", "--cuda", "12.2"]
    assert smoke["spec"]["nodeSelector"] == {"gpu-platform.io/pool": "a10g"}


def test_prod_policy_config_raises_the_r535_end_of_life_to_mandatory_and_exits_1(run_preview: RunPreview) -> None:
    run = run_preview(*TODAY, "--config-file", str(FIELD_REPORT), "--stack", "fieldreport",
                      "--policy-config", str(PROD_POLICY_CONFIG), "--json")

    assert run.returncode == 1, run.explain()
    blocking = _violations(run, policy=LIFECYCLE, enforcement="mandatory")
    assert len(blocking) == 1 and R535_EOL in blocking[0]["message"], run.violations()
    assert _violations(run, policy=LIFECYCLE, enforcement="advisory") == []


def test_stack_name_prod_is_judged_with_prods_policy_config_unless_none_is_asked(run_preview: RunPreview) -> None:
    # One verdict per stack however it is run (issue 56): without --policy-config the preview applies
    # policies/config/prod.json, as `make preview`, `make gate` and CI's real preview (which names it) do;
    # `--policy-config none` judges without one, as `pulumi preview` without --policy-pack-config does.
    run = run_preview(*TODAY, "--config-file", str(FIELD_REPORT), "--stack", "prod", "--json")
    assert run.returncode == 1, run.explain()
    assert run.json()["stack"] == "prod"
    assert run.json()["policyConfig"] == {"path": "policies/config/prod.json", "how": "stack default"}
    assert _violations(run, policy=LIFECYCLE, enforcement="mandatory")
    bare = run_preview(*TODAY, "--config-file", str(FIELD_REPORT), "--stack", "prod", "--policy-config", "none",
                       "--json")
    assert bare.returncode == 0, bare.explain()
    assert _violations(bare, policy=LIFECYCLE, enforcement="mandatory") == []
    assert [v["message"] for v in _violations(bare, policy=LIFECYCLE, enforcement="advisory")]


def test_both_rejected_stack_files_change_exactly_one_key_of_the_field_report() -> None:
    base = _config_values(FIELD_REPORT)
    for path, key, value in ((UNPUBLISHED_DRIVER, ("gpu-platform:gpuOperator", "driverVersion"), "535.15.04"),
                             (R535_ON_NOBLE, ("gpu-platform:gpuNodeGroups", "0", "os"), "ubuntu-24.04")):
        changed = _config_values(path)
        assert set(changed) == set(base), path.name
        assert {k: v for k, v in changed.items() if base[k] != v} == {key: value}, path.name


def _one_config_error(run: PreviewRun) -> str:
    assert run.returncode == 2, run.explain()
    assert run.stdout == "" or run.json()["verdict"] == "REFUSED"  # with --json: the refused run's document
    assert "Traceback" not in run.stderr
    errors = [line for line in run.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1, run.stderr
    return run.stderr[run.stderr.index("error: "):]


def test_driver_535_15_04_exits_2_with_one_config_error_naming_file_key_value_and_nearest_choice(
    run_preview: RunPreview,
) -> None:
    message = _one_config_error(run_preview(*TODAY, "--config-file", str(UNPUBLISHED_DRIVER), "--stack", "fieldreport",
                                            "--json"))

    assert message.startswith(f'error: {UNPUBLISHED_DRIVER}: gpuOperator.driverVersion = "535.15.04": ')
    assert "no published image nvcr.io/nvidia/driver:535.15.04-ubuntu22.04" in message
    # R535 reached its end of life in June 2026: the nearest published live versions, not 535.309.01 (issue 39),
    # that GPU Operator v26.3.1 lists (issue 46: not 580.178.04)
    assert "nearest valid choice: 580.173.02, 580.167.08, 580.159.04, 580.159.03, 580.126.20" in message
    assert len(message.splitlines()) == 1


def test_r535_on_ubuntu_24_04_exits_2_with_the_config_error_naming_file_key_value_and_nearest_choice(
    run_preview: RunPreview,
) -> None:
    message = _one_config_error(
        run_preview(*TODAY, "--config-file", str(R535_ON_NOBLE), "--stack", "fieldreport", "--json"))

    assert f'{R535_ON_NOBLE}: gpuOperator.driverVersion = "535.309.01": ' in message
    assert "no published image nvcr.io/nvidia/driver:535.309.01-ubuntu24.04" in message
    assert "does not support driver branch R535 (driver 535.309.01) on ubuntu-24.04" in message
    assert re.search(r"nearest valid choice: [^\n]*\b580\.173\.02\b", message), message

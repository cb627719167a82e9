"""A new inference service's scheduling and CUDA verdicts reach the pull request in every phase.

In a first `pulumi preview` the Deployment reaches stack policies with no properties, so the verdict
must come from a resource policy judging its own inputs: the InferenceService stamps the pools it can
reach (`gpu-platform.io/reachable-pools`), and `gpu-workload-schedulable-resource` refuses four GPUs per
replica on one-GPU instance types before the Deployment exists, in every phase.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.conftest import RunPreview
from tests.tools.test_phases import deployable_stack_file
from tools.engine.gate import PHASES

TODAY = ("--today", "2026-11-30")


@pytest.fixture(scope="module")
def four_gpu_stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # The deployable copy: `--phase up` refuses the documentation CIDR of the shipped stack file.
    path = deployable_stack_file("dev", tmp_path_factory.mktemp("four-gpus"))
    data = yaml.safe_load(path.read_text())
    data["config"]["gpu-platform:inferenceServices"][0]["gpusPerReplica"] = 4
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


@pytest.mark.parametrize("phase", PHASES)
def test_four_gpus_on_a_one_gpu_pool_is_refused_before_the_deployment_exists(
    run_preview: RunPreview, four_gpu_stack: Path, phase: str,
) -> None:
    run = run_preview("--stack", "dev", "--config-file", str(four_gpu_stack), "--phase", phase, *TODAY, "--json")

    assert run.returncode == 1, run.explain()
    blocking = [v for v in run.violations() if v["enforcement"] == "mandatory"
                and v["policy"] == "gpu-workload-schedulable-resource"]
    assert [(v["urn"].rsplit("::", 1)[-1], v["blocks"]) for v in blocking] == [
        ("triton-dev-deployment", "before-create")]
    assert "requests 4 nvidia.com/gpu but no instance type of the pools it declares has that many GPUs" in (
        blocking[0]["message"])


def test_the_shipped_dev_service_passes_the_resource_parts(run_preview: RunPreview) -> None:
    run = run_preview("--stack", "dev", "--phase", "preview", *TODAY, "--json")

    assert run.returncode == 0, run.explain()
    assert not [v for v in run.violations() if v["policy"].endswith("-resource")]

"""`--phase preview|update|up` on our own stacks and on a program with a remote component.

What the phases reproduce (CONFIG.md section 3): `preview`, a first `pulumi preview` (dry run, every
computed output unknown: pulumi/pulumi sdk/go/common/resource/plugin/rpc.go line 73, the unknown
sentinel); `update`, a preview of an existing stack (outputs known); `up`, a real update (not a dry
run), resource policies before each step (pkg/resource/deploy/step_generator.go line 1469), stack
policies after all steps (pkg/resource/deploy/deployment_executor.go line 410). A policy that reads
an unknown value comes back as the SDK's "can't run policy ... during preview" advisory
(pulumi/pulumi-policy sdk/python/lib/pulumi_policy/policy.py lines 1012 and 1098, the UnknownValueError
handlers of Analyze and AnalyzeStack, commit 805bcbc): our own stacks must never get one.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from components import deploy_checks
from tests.conftest import RunPreview, real_stack_file
from tests.result_view import entries
from tests.shared import REPO
from tools.engine.gate import PHASES
from tools.preview.model import REAL_UP_REFUSED

TODAY = ("--today", "2026-11-30")
REMOTE_PROGRAM = Path(__file__).resolve().parent / "fixtures" / "remote_program"
POLICY_CONFIG = {"prod": REPO / "policies" / "config" / "prod.json"}

# A real `pulumi up` refuses the RFC 5737 documentation ranges and the documentation account the shipped
# stack files use (issue 8); these stand in for a deployable stack. Source:
# https://www.rfc-editor.org/rfc/rfc5737 and https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html
DEPLOYABLE_CIDR = "52.94.76.0/24"
DOCUMENTATION_ACCOUNT = "111122223333"
DEPLOYABLE_ACCOUNT = "406593072817"


def _deployable(value: Any, key: str = "") -> Any:
    if isinstance(value, dict):
        return {k: _deployable(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        if key.endswith("endpointPublicAccessCidrs"):
            return [DEPLOYABLE_CIDR]
        return [_deployable(v, key) for v in value]
    if isinstance(value, str):
        return value.replace(DOCUMENTATION_ACCOUNT, DEPLOYABLE_ACCOUNT)
    return value


def deployable_stack_file(stack: str, folder: Path) -> Path:
    """A copy of Pulumi.<stack>.yaml with a non-documentation public CIDR and account, for `--phase up`."""
    data = yaml.safe_load(real_stack_file(stack).read_text())
    path = folder / f"Pulumi.{stack}.yaml"
    path.write_text(yaml.safe_dump(_deployable(data), sort_keys=False))
    return path


@pytest.fixture(scope="module")
def stack_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("deployable")
    return {stack: deployable_stack_file(stack, folder) for stack in ("dev", "prod")}


def _run(run_preview: RunPreview, stack: str, phase: str, stack_files: dict[str, Path]) -> Any:
    args = ["--stack", stack, "--config-file", str(stack_files[stack]), "--phase", phase, *TODAY, "--json"]
    if stack in POLICY_CONFIG:
        args += ["--policy-config", str(POLICY_CONFIG[stack])]
    return run_preview(*args)


def test_the_deployable_copy_changes_only_the_documentation_values(stack_files: dict[str, Path]) -> None:
    text = stack_files["prod"].read_text()
    assert DOCUMENTATION_ACCOUNT not in text and "198.51.100." not in text and DEPLOYABLE_CIDR in text


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize("phase", PHASES)
def test_our_stacks_get_no_cant_run_advisory_in_any_phase(
    run_preview: RunPreview, stack_files: dict[str, Path], stack: str, phase: str,
) -> None:
    run = _run(run_preview, stack, phase, stack_files)

    assert run.returncode in (0, 1), run.explain()
    doc = run.json()
    assert doc["phase"] == phase
    cant_run = [v["message"] for v in entries(doc) if "can't run policy" in v["message"]]
    assert cant_run == [], cant_run


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_our_stacks_keep_their_verdicts_in_all_three_phases(
    run_preview: RunPreview, stack_files: dict[str, Path], stack: str,
) -> None:
    runs = {phase: _run(run_preview, stack, phase, stack_files) for phase in PHASES}
    # Without the first preview's `<policy>-pending` advisories (what a stack policy waits on there).
    verdicts = {phase: sorted((v["policy"], v["enforcement"], v["urn"]) for v in run.violations()
                              if not v["policy"].endswith("-pending"))
                for phase, run in runs.items()}

    assert verdicts["preview"] == verdicts["update"] == verdicts["up"]
    assert {run.returncode for run in runs.values()} == {0}
    assert not [v for v in runs["preview"].violations() if v["enforcement"] == "mandatory"]
    assert runs["preview"].json()["pending"], "the first preview lists the policies that wait"


def test_a_first_preview_of_our_stack_sees_unknown_ids_where_an_update_sees_values(
    run_preview: RunPreview, stack_files: dict[str, Path],
) -> None:
    def group_inputs(phase: str) -> dict[str, Any]:
        doc = _run(run_preview, "prod", phase, stack_files).json()
        return next(r["inputs"] for r in doc["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup")

    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    assert unknown in str(group_inputs("preview")["subnetIds"])
    assert unknown not in str(group_inputs("update")["subnetIds"])


@pytest.mark.parametrize(("phase", "skip"), [(p, False) for p in PHASES] + [("up", True)])
def test_a_remote_component_and_a_resource_input_preview_without_a_crash(
    run_preview: RunPreview, phase: str, skip: bool,
) -> None:
    run = run_preview("--program", str(REMOTE_PROGRAM), "--phase", phase, *(["--skip-preview"] if skip else []),
                      *TODAY, "--json")

    # Exit 1, not 2: the pack ran to the end. The cluster has no node group at all, which the stack policy
    # system-node-group-present rightly refuses: before anything is created where a preview with the pack
    # comes first (a preview; a CLI `pulumi up`, pkg/backend/apply.go lines 287-303), after every step
    # with --skip-preview (the Automation API).
    when = "after-update" if skip else "before-create"
    assert run.returncode == 1, run.explain()
    doc = run.json()
    cluster = next(r for r in doc["resources"] if r["type"] == "eks:index:Cluster")
    holder = next(r for r in doc["resources"] if r["type"] == "remote:index:Holder")
    assert holder["inputs"]["role"] == "urn:pulumi:dev::remote::aws:iam/role:Role::node-role"
    assert [(g["type"], g["urn"]) for g in doc["notSeenOffline"]] == [("eks:index:Cluster", cluster["urn"])]
    # Emulated but for what its default security groups, aws-auth and instance roles add (eks_children.ADDITIVE).
    assert "aws:eks/cluster:Cluster" in {r["type"] for r in doc["resources"]}
    assert "the aws-auth ConfigMap" in doc["notSeenOffline"][0]["judged_by_real_preview"]
    assert {(v["policy"], v["blocks"]) for v in entries(doc) if v["enforcement"] == "mandatory"} == {
        ("system-node-group-present", when)}
    assert doc["policyPack"]["stoppedByPreview"] is (phase == "up" and not skip)


def test_the_summary_names_what_the_real_preview_will_judge(run_preview: RunPreview) -> None:
    run = run_preview("--program", str(REMOTE_PROGRAM), *TODAY)

    assert "Not seen offline eks:index:Cluster" in " ".join(run.stdout.split())


@pytest.mark.parametrize("phase", [*PHASES, "up --skip-preview"])
def test_our_stack_with_a_broken_driver_fails_in_every_phase(
    run_preview: RunPreview, stack_files: dict[str, Path], tmp_path: Path, phase: str,
) -> None:
    broken = tmp_path / "Pulumi.dev.yaml"
    broken.write_text(stack_files["dev"].read_text().replace("driverVersion: 580.173.02", "driverVersion: 535.15.04"))
    run = run_preview("--stack", "dev", "--config-file", str(broken), "--phase", *phase.split(), *TODAY, "--json")

    # The program refuses it before it registers anything, in a preview and in the update alike.
    assert run.returncode == 2, run.explain()
    assert 'gpuOperator.driverVersion = "535.15.04"' in run.stderr


def test_the_first_preview_summary_lists_what_only_the_offline_gate_judged(
    run_preview: RunPreview, stack_files: dict[str, Path],
) -> None:
    run = run_preview("--stack", "dev", "--config-file", str(stack_files["dev"]), *TODAY, "--verbose")

    assert run.returncode == 0, run.explain()
    # --verbose: each pending policy, folded with those that wait on the same objects for the same reason.
    [pending] = [line for line in run.stdout.splitlines() if line.startswith("  pending ") and "one-driver-per-pool"
                 in line]
    assert "waits on" in pending and "Kubernetes object(s) with no properties yet in this preview" in pending
    # Without --verbose, one line says the same for every pending policy (tests/tools/test_preview_render.py).
    short = " ".join(run_preview("--stack", "dev", "--config-file", str(stack_files["dev"]), *TODAY).stdout.split())
    assert "one-driver-per-pool" not in short
    assert "the offline gate judged them from the program's values: no violation" in short


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_up_of_a_shipped_stack_reports_once_that_a_real_up_would_refuse_it_and_judges_the_update(
    run_preview: RunPreview, stack: str,
) -> None:
    # components/deploy_checks.py refuses documentation values at a real `pulumi up` (tests/components/
    # test_first_deploy.py); the offline gate runs in AWS's documentation account, where it logs that instead.
    args = ["--stack", stack, "--phase", "up", *TODAY, "--json"]
    if stack in POLICY_CONFIG:
        args += ["--policy-config", str(POLICY_CONFIG[stack])]
    run = run_preview(*args)

    assert run.returncode == 0, run.explain()
    doc = run.json()
    assert doc["phase"] == "up"
    [refused] = doc["realUpRefused"]
    assert f"Pulumi.{stack}.yaml" in refused and "cluster.endpointPublicAccessCidrs[0]" in refused
    assert "RFC 5737 documentation range" in refused and "fix:" in refused
    # Every section's documentation values, not only the cluster's (issue 25): the model snapshot id.
    assert 'inferenceServices[0].modelVolume.snapshotId = "snap-0123456789abcdef0"' in refused
    assert REAL_UP_REFUSED not in run.stderr  # reported once, in the document
    assert not [v for v in entries(doc) if "can't run policy" in v["message"]]
    assert any(r["type"] == "aws:eks/cluster:Cluster" for r in doc["resources"])  # the update was judged


def test_the_preview_reads_the_refusal_the_program_logs() -> None:
    assert REAL_UP_REFUSED == deploy_checks.REAL_UP_REFUSED

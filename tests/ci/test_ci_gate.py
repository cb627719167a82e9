"""`make gate` / `python -m tools.ci_gate`: every stack and phase through the CONFIG.md section 3 command line.

The gate and `make preview` spell the same command line and produce the same summary; a pinned
`--today` makes the result independent of the calendar; a rejected stack fails the gate with its
message in the job summary and never a stale summary from an earlier run; a date past the driver
branch's end of life turns the gate red.
"""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import subprocess
import sys
from datetime import date, timedelta
from pathlib import Path

import pytest

from policies.gpu_guard.matrix import load_matrix
from tests.result_view import entries
from tests.shared import REPO, upstream
from tools import ci_gate

PINNED = "2026-11-30"
# `make -o FILE` treats FILE as up to date: the tests never install into the shared virtualenv.
MAKE = ["make", "--no-print-directory", "-o", ".venv/.requirements-installed", "-o", ".venv/.runtime-installed"]


def _preview_help() -> str:
    proc = subprocess.run([sys.executable, "-m", "tools.preview", "--help"], cwd=REPO,
                          capture_output=True, text=True, check=False)
    return proc.stdout


PREVIEW_HAS_CONTRACT_FLAGS = all(flag in _preview_help() for flag in ("--phase", "--today"))
needs_contract_flags = pytest.mark.skipif(
    not PREVIEW_HAS_CONTRACT_FLAGS,
    reason="tools.preview does not take --phase/--today yet (CONFIG.md section 3; issue 7 adds them)",
)


def make(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*MAKE, *args], cwd=REPO, capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})


def dry_run_preview_args(*make_args: str) -> list[str]:
    """The tools.preview arguments `make -n <make_args>` would run."""
    proc = make("-n", *make_args)
    assert proc.returncode == 0, proc.stderr
    line = next(x for x in proc.stdout.splitlines() if re.search(r"bin/gpu-platform (preview|gate) ", x))
    argv = shlex.split(line)
    return argv[next(i for i, arg in enumerate(argv) if arg.endswith("bin/gpu-platform")) + 2:]


def gate_today_in_makefile() -> str:
    match = re.search(r"^GATE_TODAY := (\S+)$", (REPO / "Makefile").read_text(encoding="utf-8"), flags=re.M)
    assert match is not None, "Makefile: GATE_TODAY := YYYY-MM-DD is missing"
    return match.group(1)


@pytest.fixture
def tiny_program(tmp_path: Path) -> Path:
    """A Pulumi Python program of this test's own: one good stack file and one that is not YAML."""
    program = tmp_path / "program"
    program.mkdir()
    (program / "Pulumi.yaml").write_text("name: tiny\nruntime: python\n", encoding="utf-8")
    (program / "__main__.py").write_text("import pulumi\n\npulumi.export('greeting', 'hello')\n", encoding="utf-8")
    (program / "Pulumi.good.yaml").write_text("config: {}\n", encoding="utf-8")
    (program / "Pulumi.broken.yaml").write_text("config:\n  tiny:name: [unclosed\n", encoding="utf-8")
    return program


@pytest.mark.parametrize("phase", ["preview", "update"])
@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_make_preview_and_the_gate_spell_the_same_command_line(stack: str, phase: str) -> None:
    out = f"out/{stack}/{phase}"
    from_make = dry_run_preview_args("preview", f"STACK={stack}", f"PHASE={phase}", f"TODAY={PINNED}", f"OUT={out}")
    from_gate = ci_gate.preview_command(stack, phase=phase, today=date.fromisoformat(PINNED), out_dir=Path(out))
    assert from_gate[-1] == "--json"
    assert from_make == from_gate[3:-1]
    assert ("--policy-config" in from_make) == (REPO / "policies" / "config" / f"{stack}.json").is_file()


def test_make_gate_judges_at_gate_today_and_today_empty_means_the_real_date() -> None:
    assert dry_run_preview_args("gate") == ["--today", gate_today_in_makefile(), "--out", "out"]
    assert dry_run_preview_args("gate", "TODAY=") == ["--today", "", "--out", "out"]
    assert "--today" not in ci_gate.preview_command("dev", today=None, out_dir=Path("out/dev"))


def test_the_gate_today_is_a_date_and_every_stack_file_is_gated() -> None:
    date.fromisoformat(gate_today_in_makefile())
    assert ci_gate.discover_stacks(REPO) == sorted(p.name[7:-5] for p in REPO.glob("Pulumi.*.yaml"))
    assert {"dev", "prod"} <= set(ci_gate.discover_stacks(REPO))


def test_a_bad_today_is_one_error_naming_the_value_and_nothing_runs(tmp_path: Path) -> None:
    err = io.StringIO()
    status = ci_gate.main(["--today", "2026-13-01", "--out", str(tmp_path / "out")], stdout=io.StringIO(), stderr=err)
    assert status == ci_gate.EXIT_REJECTED
    assert "--today '2026-13-01' is not an ISO date; use YYYY-MM-DD" in err.getvalue()
    assert not (tmp_path / "out").exists()


def test_an_unknown_stack_is_one_error_listing_the_stacks_there_are(tmp_path: Path) -> None:
    err = io.StringIO()
    status = ci_gate.main(["--stack", "staging", "--out", str(tmp_path)], stdout=io.StringIO(), stderr=err)
    assert status == ci_gate.EXIT_REJECTED
    assert "--stack staging: no Pulumi.staging.yaml" in err.getvalue()
    assert "available: dev, prod" in err.getvalue()


def test_the_worst_stack_decides_the_exit_status() -> None:
    def result(status: int) -> ci_gate.StackResult:
        return ci_gate.StackResult("s", "update", status, mandatory=int(status == 1), advisory=0, summary="x")

    assert ci_gate.gate_status([]) == ci_gate.EXIT_OK
    assert ci_gate.gate_status([result(0), result(1)]) == ci_gate.EXIT_MANDATORY
    assert ci_gate.gate_status([result(1), result(2), result(0)]) == ci_gate.EXIT_REJECTED
    overview = ci_gate.overview_markdown([result(0), result(1)], date(2026, 11, 30))
    assert "lifecycles judged at 2026-11-30 (--today)" in overview
    assert "| s | update | FAIL | 1 | 0 |" in overview


@needs_contract_flags
def test_a_rejected_stack_fails_the_gate_with_its_message_in_the_job_summary(tiny_program: Path,
                                                                             tmp_path: Path) -> None:
    out, summary = tmp_path / "out", tmp_path / "step-summary.md"
    earlier = out / "broken" / "preview"
    (earlier / "manifests").mkdir(parents=True)
    (earlier / "summary.md").write_text("stale summary of an earlier run\n", encoding="utf-8")
    (earlier / "manifests" / "ConfigMap-default-stale.yaml").write_text("kind: ConfigMap\n", encoding="utf-8")
    stdout = io.StringIO()
    status = ci_gate.main(["--program", str(tiny_program), "--stack", "broken", "--today", PINNED, "--out", str(out),
                           "--summary", str(summary)], stdout=stdout, stderr=io.StringIO())
    assert status == ci_gate.EXIT_REJECTED
    text = summary.read_text(encoding="utf-8")
    assert "| broken | preview | rejected | 0 | 0 |" in text and "| broken | update | rejected | 0 | 0 |" in text
    assert "Pulumi.broken.yaml" in text and "not valid YAML" in text
    # The refused run's own summary.md (its REFUSED document), never the earlier run's.
    assert "stale summary" not in text
    assert (earlier / "summary.md").read_text(encoding="utf-8").startswith("# ⛔ REFUSED: stack `broken`")
    assert list((earlier / "manifests").iterdir()) == []
    assert "Pulumi.broken.yaml" in stdout.getvalue()


@needs_contract_flags
def test_the_gate_summary_for_dev_is_what_make_preview_writes_for_dev(tmp_path: Path) -> None:
    upstream()  # `make gate` fills the cache strictly first (as CI does) and fails without it
    step_summary = tmp_path / "step-summary.md"
    gate = make("gate", f"TODAY={PINNED}", f"OUT={tmp_path / 'gate'}", env={"GITHUB_STEP_SUMMARY": str(step_summary)})
    assert gate.returncode == 0, gate.stdout + gate.stderr
    job_summary = step_summary.read_text(encoding="utf-8")
    assert f"lifecycles judged at {PINNED} (--today)" in job_summary
    for phase in ("preview", "update"):
        # `make preview` (phase preview by default) writes the summary the gate writes for dev.
        phase_arg = [f"PHASE={phase}"] if phase != "preview" else []
        preview = make("preview", "STACK=dev", *phase_arg, f"TODAY={PINNED}", f"OUT={tmp_path / phase}")
        assert preview.returncode == 0, preview.stderr
        dev_summary = (tmp_path / phase / "summary.md").read_text(encoding="utf-8")
        assert (tmp_path / "gate" / "dev" / phase / "summary.md").read_text(encoding="utf-8") == dev_summary
        assert dev_summary in job_summary
        assert (tmp_path / "gate" / "prod" / phase / "summary.md").read_text(encoding="utf-8") in job_summary
        assert f"| dev | {phase} | PASS | 0 |" in job_summary and f"| prod | {phase} | PASS | 0 |" in job_summary
    assert {p.name for p in (tmp_path / "gate" / "dev" / "preview").iterdir()} >= {
        "resources.json", "summary.md", "manifests"}


@needs_contract_flags
def test_the_calendar_catches_what_the_stacks_hit_later(tmp_path: Path) -> None:
    # The first lifecycle prod hits is EKS 1.35 leaving standard support (before R580's end of life). The
    # control plane's version is inside pulumi-eks's Cluster, which no policy sees offline, so the program's
    # own check refuses it, on the gate's --today (passed to the program as GPU_PLATFORM_TODAY).
    row = next(r for r in load_matrix().data.eks_versions if r.version == "1.35")
    assert row.end_standard is not None
    day_after = row.end_standard + timedelta(days=1)
    summary = tmp_path / "step-summary.md"
    status = ci_gate.main(["--stack", "prod", "--today", day_after.isoformat(), "--out", str(tmp_path / "out"),
                           "--summary", str(summary)], stdout=io.StringIO(), stderr=io.StringIO())
    text = summary.read_text(encoding="utf-8")
    assert status == ci_gate.EXIT_REJECTED, text
    assert "| prod | preview | rejected |" in text and "| prod | update | rejected |" in text
    assert 'cluster.kubernetesVersion = "1.35": EKS 1.35 left standard support' in text


@needs_contract_flags
def test_the_calendar_catches_a_driver_end_of_life(tmp_path: Path) -> None:
    # A prod stack on a control plane without known support dates (1.36), judged after R580's end of life:
    # prod's policy config makes gpu-driver-branch-lifecycle mandatory, so the gate turns red.
    r580 = load_matrix().branch(580)
    assert r580 is not None and r580.eol is not None
    stack = tmp_path / "Pulumi.prod.yaml"
    stack.write_text((REPO / "Pulumi.prod.yaml").read_text(encoding="utf-8").replace(
        'kubernetesVersion: "1.35"', 'kubernetesVersion: "1.36"'), encoding="utf-8")
    assert 'kubernetesVersion: "1.36"' in stack.read_text(encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "tools.preview", "--stack", "prod", "--config-file", str(stack),
         "--policy-config", "policies/config/prod.json", "--today", "2028-07-01", "--json"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == ci_gate.EXIT_MANDATORY, proc.stderr
    found = [v for v in entries(json.loads(proc.stdout)) if v["enforcement"] == "mandatory"]
    assert [v["policy"] for v in found] == ["gpu-driver-branch-lifecycle"], found

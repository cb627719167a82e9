"""The human output of `python -m tools.preview` reads like a verdict; `--json` keeps everything.

The shipped dev stack's first preview fits on a screen (at most 60 lines), its 15 pending advisories are one
line, the offline-only details and emulated children wait for `--verbose`, the program's warnings say they are
about the stack file, and the last line is the verdict with the counts and what the exit status means.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.conftest import SHIPPED_DAY, TINY_PROGRAM, RunPreview
from tests.shared import REPO, upstream
from tools.engine.records import Violation
from tools.preview import result
from tools.preview.command import stack_file_warning
from tools.preview.model import GateReport, Recording, StackConfig
from tools.preview.render import pending_line, verdict_line

DEV = ("--stack", "dev", "--phase", "preview", "--today", SHIPPED_DAY)
PASS = "verdict: PASS, exit 0 (no mandatory finding; nothing here blocks `pulumi up`): "
FAIL = "verdict: FAIL, exit 1 (a mandatory finding blocks `pulumi up`): "


def _pending(policy: str, urn: str = "urn:pulumi:dev::p::kubernetes:apps/v1:Deployment::d") -> Violation:
    return Violation(f"{policy}-pending", "advisory", urn, f"{policy} waits on 1 Kubernetes object(s)")


def _pending_policies(run_preview: RunPreview) -> list[str]:
    """The dev stack's pending advisories, from --json (15 on 2026-12-01: every stack policy that reads objects)."""
    return [v["policy"] for v in run_preview(*DEV, "--json").violations() if v["policy"].endswith("-pending")]


def test_the_dev_preview_fits_a_screen_and_ends_with_the_verdict(run_preview: RunPreview) -> None:
    upstream()  # the verdict counts the API-server check's findings, which read the whole cache
    run = run_preview(*DEV)
    assert run.returncode == 0, run.explain()
    lines = run.stdout.splitlines()
    assert len(lines) <= 60, run.stdout
    pending_count = len(_pending_policies(run_preview))
    assert pending_count >= 10
    assert lines[-1] == PASS + f"0 mandatory, 0 advisory finding(s), {pending_count} pending"
    pending = [line for line in lines if f"pending in phase preview: {pending_count} stack policies" in line]
    assert len(pending) == 1
    text = " ".join(run.stdout.split())
    assert "--verbose, or make preview VERBOSE=1" in text
    for detail in ("-pending", "offline only ", "Emulated offline", "Resources by type"):
        assert detail not in run.stdout, detail


def test_the_readme_quotes_the_dev_verdict_as_it_is(run_preview: RunPreview) -> None:
    upstream()  # the README quotes the verdict of a preview that ran the API-server check
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert run_preview(*DEV).stdout.splitlines()[-1] in readme.splitlines()


def test_verbose_shows_each_pending_advisory_the_offline_only_verdicts_and_the_emulated_children(
    run_preview: RunPreview,
) -> None:
    run = run_preview(*DEV, "--verbose")
    assert run.returncode == 0, run.explain()
    text = " ".join(run.stdout.split())
    # Each pending policy named in a `pending` line; those that wait on the same objects for the same reason, folded.
    pending_lines = [line for line in run.stdout.splitlines() if line.startswith("  pending ")]
    assert 0 < len(pending_lines) < len(set(_pending_policies(run_preview)))
    for policy in set(_pending_policies(run_preview)):
        name = policy.removesuffix("-pending")
        assert sum(1 for line in pending_lines if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line)) == 1
    assert "Emulated offline" in text and "Resources by type" in text
    assert run.stdout.splitlines()[-1] == run_preview(*DEV).stdout.splitlines()[-1]


def test_json_keeps_every_pending_advisory_and_offline_only_verdict(run_preview: RunPreview) -> None:
    doc = run_preview(*DEV, "--json").json()
    pending = [entry["policy"] for entry in doc["pending"]]
    assert len(pending) >= 10 and pending == sorted(set(pending))  # one entry per policy, each once
    assert all(entry["objects"] and entry["reasons"] for entry in doc["pending"])
    assert doc["emulatedChildren"]


def test_the_programs_warnings_are_labelled_as_about_the_stack_file(run_preview: RunPreview) -> None:
    run = run_preview(*DEV)
    warnings = run.stderr.splitlines()
    assert warnings, run.stderr
    # the file as the preview was given it (the config checks' advisories name the path; the others the name)
    assert all(line.startswith("stack file warning: ") and line.split(": ")[1].endswith("Pulumi.dev.yaml")
               for line in warnings), warnings
    # A message that names the file already keeps its own name, once.
    assert stack_file_warning("Pulumi.x.yaml", "/a/Pulumi.x.yaml: k = 1: why; fix") == (
        "stack file warning: /a/Pulumi.x.yaml: k = 1: why; fix")
    assert stack_file_warning("Pulumi.x.yaml", "GPU pool 'p': no imageId") == (
        "stack file warning: Pulumi.x.yaml: GPU pool 'p': no imageId")


def test_a_mandatory_violation_ends_with_the_fail_verdict_and_exit_1(run_preview: RunPreview) -> None:
    run = run_preview("--program", str(TINY_PROGRAM), "--stack", "untainted")
    assert run.returncode == 1, run.explain()
    last = run.stdout.splitlines()[-1]
    assert last.startswith(FAIL) and "0 pending" in last
    assert " ".join(run.stdout.split()).count("mandatory gpu-nodes-tainted [before-create]") == 1


def _doc(report: GateReport) -> dict[str, Any]:
    recording = Recording(project="p", stack="s", resources=(), stack_outputs={}, logs=())
    config = StackConfig(path=Path("Pulumi.s.yaml"), values={}, secret_keys=(), parsed={})
    return result.build(recording, report, config, result.PolicyConfigUse(None, "none: test"))


def test_the_verdict_counts_mandatory_advisory_and_pending_policies_apart() -> None:
    report = GateReport(ran=True, detail="ran", violations=(
        Violation("gpu-nodes-tainted", "mandatory", "urn:a", "m"),
        Violation("gpu-driver-branch-lifecycle", "advisory", "urn:b", "a"),
        _pending("one-driver-per-pool"), _pending("one-driver-per-pool", "urn:c"), _pending("kubelet-version-skew"),
    ))
    doc = _doc(report)
    assert doc["counts"] == {"mandatory": 1, "advisory": 1, "pending": 2, "unjudged": 0}
    assert (doc["verdict"], doc["exitCode"]) == ("FAIL", 1)
    # one pending entry per policy, with every object it waits for
    assert [(p["policy"], len(p["objects"])) for p in doc["pending"]] == [
        ("kubelet-version-skew", 1), ("one-driver-per-pool", 2)]
    assert verdict_line(report) == FAIL + "1 mandatory, 1 advisory finding(s), 2 pending"
    assert verdict_line(GateReport(ran=True, detail="ran")) == PASS + "0 mandatory, 0 advisory finding(s), 0 pending"
    assert verdict_line(GateReport(ran=False, detail="no policy pack ran: x")) == (
        "verdict: NOT JUDGED, exit 0: no policy pack ran: x")
    assert _doc(GateReport(ran=False, detail="no policy pack ran: x"))["verdict"] == "NOT_JUDGED"


def test_the_pending_line_counts_policies_not_advisories_and_says_what_the_offline_gate_found() -> None:
    offline = Violation("one-driver-per-pool", "mandatory", "urn:p", "two drivers", offline_only=True)
    report = GateReport(ran=True, detail="ran", violations=(
        _pending("one-driver-per-pool"), _pending("one-driver-per-pool", "urn:c"), _pending("kubelet-version-skew"),
        offline,
    ))
    line = pending_line(_doc(report))
    assert line is not None
    assert line.startswith("pending in phase preview: 2 stack policies wait for Kubernetes objects")
    assert "the offline gate judged them from the program's values: 1 finding(s), listed above" in line
    assert pending_line(_doc(GateReport(ran=True, detail="ran"))) is None

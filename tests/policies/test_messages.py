"""What the policies say: no message prints a Python `None` for a value that is simply not set."""

from __future__ import annotations

import re

from policies.gpu_guard.base import all_policies, companions_of
from tests.policies.harness import FIXTURES, load_cases, run_with_caveats

POLICIES = {p.name: p for p in all_policies()}
_PYTHON_NONE = re.compile(r"\bNone\b")


def test_no_violation_in_any_fixture_prints_none():
    printed = []
    checked = 0
    for name in sorted(POLICIES):
        if not (FIXTURES / name).is_dir():
            continue
        for case in load_cases(name):
            outcome = run_with_caveats(POLICIES[name], companions_of(name), case.resources, case.config)
            checked += len(outcome.violations)
            printed += [f"{name}/{case.name}: {v.message}" for v in outcome.violations
                        if _PYTHON_NONE.search(v.message)]
    assert checked > 100, f"only {checked} violations across the fixtures: the fixtures did not run"
    assert not printed, "messages print None for an unset value:\n" + "\n".join(printed)


def test_a_fix_names_our_stack_key_only_in_our_project_and_the_resource_input_elsewhere(monkeypatch):
    """Issue 37 class 7: a stack key (`gpu-platform:<key>`, CONFIG.md section 1) exists only in this project's
    stacks, so a foreign program's fix names its own resource input. Every fixture runs twice: as this project's
    stack and as another project's (the URN's project part, which is all that differs for the pack)."""
    from tests.policies import harness  # noqa: PLC0415 - the URN builder is swapped for the foreign run

    ours: list[str] = []
    foreign: list[str] = []
    for runs, project in ((ours, "gpu-platform"), (foreign, "example-aws-py-eks")):
        monkeypatch.setattr(harness, "resource_urn",
                            lambda r, p=project: f"urn:pulumi:test::{p}::{r['type']}::{r['name']}")
        for name in sorted(POLICIES):
            if (FIXTURES / name).is_dir():
                for case in load_cases(name):
                    outcome = run_with_caveats(POLICIES[name], companions_of(name), case.resources, case.config)
                    runs += [v.message for v in outcome.violations]
    assert any("stack key cluster.deletionProtection" in m for m in ours)
    assert not [m for m in foreign if "stack key" in m or "gpu-platform:" in m]
    assert any("deletion_protection=True on the cluster" in m for m in foreign)
    assert any('upgrade_policy={"support_type": "STANDARD"} on the cluster' in m for m in foreign)

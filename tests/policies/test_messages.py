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

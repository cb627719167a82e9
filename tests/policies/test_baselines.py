"""Every fixture's compliant baseline is compliant with the whole pack, not only with its own policy.

A baseline is the stack a policy's failing fixtures break one field of; if another policy already
objects to it, a fixture cannot tell a real finding from noise, and the baseline no longer shows what
a compliant stack looks like. Each policy gets the baseline's config properties it declares (its
`today` pins the lifecycle rules; without one they are pinned to TODAY, never the calendar).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from policies.gpu_guard.base import all_policies
from tests.policies.harness import FIXTURES, run_policy

TODAY = "2026-11-29"
POLICIES = all_policies()
BASELINES = sorted(FIXTURES.glob("*/baseline.yaml"))


def _config_for(policy: Any, baseline: dict[str, Any]) -> dict[str, Any] | None:
    schema = policy.config_schema.properties if policy.config_schema else {}
    config = {k: v for k, v in (baseline.get("config") or {}).items() if k in schema}
    if "today" in schema:
        config.setdefault("today", TODAY)
    return config or None


def test_there_is_a_baseline_per_policy_fixture_folder():
    folders = [p for p in FIXTURES.iterdir() if p.is_dir()]
    assert len(folders) >= 20
    assert len(BASELINES) == len(folders)


@pytest.mark.parametrize("path", BASELINES, ids=[p.parent.name for p in BASELINES])
def test_baseline_is_silent_under_every_policy_of_the_pack(path):
    baseline = yaml.safe_load(path.read_text())
    noise = []
    for policy in POLICIES:
        outcome = run_policy(policy, baseline["resources"], _config_for(policy, baseline))
        noise += [f"{policy.name} [{v.level}]: {v.message}" for v in outcome.violations]
        if outcome.unknown:
            noise.append(f"{policy.name} cannot judge: {outcome.unknown}")
    assert len(POLICIES) >= 24
    assert not noise, f"{path.parent.name}/baseline.yaml is not compliant with the whole pack:\n" + "\n".join(noise)

"""docs/runbook.md: every failure mode of the field reports has its four parts, and names real policies."""

from __future__ import annotations

import re

from policies.gpu_guard.base import all_policies
from tests.shared import REPO

RUNBOOK = (REPO / "docs/runbook.md").read_text()
ENTRIES = ["Pods Pending behind the GPU taint", "`Insufficient nvidia.com/gpu`", "GPU nodes NotReady",
           "Driver ImagePullBackOff", "Device-plugin crash", "The ALB is not created", "Slow first model load",
           "Never wakes from zero", "Startup probe kills a loading model", "Dev never sleeps: Prometheus is down"]
PARTS = ("**Symptom**", "**Show it**", "**Cause**", "**Prevented by**")
# Names the runbook cites that are matrix checks at config time rather than pack policies.
CONFIG_CHECKS = {"node-image-published"}


def _sections() -> dict[str, str]:
    chunks = re.split(r"^## \d+\. ", RUNBOOK, flags=re.MULTILINE)[1:]
    return {chunk.splitlines()[0].strip(): chunk for chunk in chunks}


def test_every_failure_mode_has_symptom_command_cause_and_prevention():
    sections = _sections()
    assert list(sections) == ENTRIES
    for title, body in sections.items():
        assert [body.count(part) for part in PARTS] == [1, 1, 1, 1], title
        show = body.split("**Show it**")[1].split("**Cause**")[0]
        assert re.search(r"`(kubectl|aws) [^`]+`", show), f"{title}: no command shows it"


def test_every_policy_the_runbook_names_is_in_the_pack():
    known = {policy.name for policy in all_policies()} | CONFIG_CHECKS
    cited = set(re.findall(r"`([a-z0-9]+(?:-[a-z0-9]+){2,})`", RUNBOOK))
    cited = {name for name in cited if not name.startswith(("nvidia-", "aws-load-balancer"))}
    assert cited and cited <= known, sorted(cited - known)

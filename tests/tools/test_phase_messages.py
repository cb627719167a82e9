"""Every message the gate prints is true for the phase it is printed in (the class check of issue 37).

In phase `up` an API-server advisory told the user that "`--phase up` judges it"; in `update` and `up` the pending
advisories said the cluster "does not exist yet". This runs programs in the shapes that produced them (a split stack
whose kubeconfig comes from another stack: Kubernetes objects without properties in every phase; pulumi-eks
components, one of them not emulated) in every phase, and reads every message: each violation, each `not seen
offline` entry and the human summary. A message fails when it sends the user to the phase they are in, or states a
stack state the phase does not have (an `update` previews a stack that exists; `up` leaves one that exists).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import RunPreview
from tests.result_view import entries

FIXTURES = Path(__file__).parent / "fixtures"
TODAY = ("--today", "2026-11-30")
PROGRAMS = {
    "split-stack": ("--program", str(FIXTURES / "split_stack_program")),
    "eks-components": ("--program", str(FIXTURES / "eks_mng_program"), "--stack", "selfmanaged"),
}
# A claim about the state of the stack that only a first preview of a new stack can make.
NEW_STACK_ONLY = re.compile(r"does not exist yet|before the cluster exists|not been created yet|this first preview")


def false_for_phase(message: str, phase: str) -> list[str]:
    """Why `message` is false in `phase` (empty when it is not)."""
    why = []
    for named in re.findall(r"`?--phase (preview|update|up|analyze)`? judges", message):
        if named == phase:
            why.append(f"sends the user to --phase {named}, the phase this is")
    if phase in ("update", "up", "analyze") and NEW_STACK_ONLY.search(message):
        why.append(f"says the stack is new ({NEW_STACK_ONLY.search(message).group(0)!r})")  # type: ignore[union-attr]
    return why


def test_the_check_itself_catches_the_two_messages_of_the_issue() -> None:
    assert false_for_phase("x (the value is unknown in this phase; `--phase up` judges it)", "up")
    assert false_for_phase("their provider gets its kubeconfig from the cluster, which does not exist yet", "update")
    assert not false_for_phase("x (the value is unknown in this phase; `--phase up` judges it)", "preview")


def _messages(doc: dict[str, Any], summary: str) -> list[str]:
    found = [v["message"] for v in entries(doc)]
    found += [f"{n['judged_by_real_preview']}; {n['why']}" for n in doc.get("not_seen_offline", [])]
    return found + [line for line in summary.splitlines() if line.strip()]


@pytest.mark.parametrize("phase", ["preview", "update", "up"])
@pytest.mark.parametrize("program", sorted(PROGRAMS))
def test_every_message_is_true_for_its_phase(run_preview: RunPreview, program: str, phase: str) -> None:
    run = run_preview(*PROGRAMS[program], "--phase", phase, *TODAY, out=True)
    assert run.returncode in (0, 1), run.explain()
    assert run.out_dir is not None
    doc = json.loads((run.out_dir / "resources.json").read_text())
    false = [(m[:160], why) for m in _messages(doc, run.stdout) if (why := false_for_phase(m, phase))]
    assert false == []

"""A move to a branch NVIDIA supports for less time gets an advisory with both dates (issue 46 item 5).

Where it lives: only where the old driver is known. The pack's per-resource Analyze gets the new inputs alone
(/work/shared/research/engine_phases.md: "`Analyze` gets the checked inputs"), the offline `--phase update` runs the
program's one state as old and new, and a stack file holds the new value only; so the comparison is
`tools.matrix check --from-driver OLD --driver NEW`, where the person moving the driver states both.
"""

from __future__ import annotations

import json

from policies.gpu_guard.matrix import load_matrix
from tools.matrix.cli import main

MATRIX = load_matrix()
MOVE = ("moving from R580 (LTSB, supported until June 2028) to R595 (PB, supported until March 2027) shortens NVIDIA "
        "support by 15 months: the pool needs another driver move by March 2027.")


def test_a_move_to_a_shorter_supported_branch_names_both_dates() -> None:
    (finding,) = MATRIX.branch_move("580.173.02", "595.91.07")
    assert (finding.level, finding.rule, finding.nearest) == ("advisory", "driver-branch-shorter-support",
                                                              ("580.173.02",))
    assert finding.message.startswith(MOVE)
    assert MATRIX.branch_move("580", "595")[0].nearest == ("580",)  # a baked pool declares a branch


def test_a_move_to_a_longer_or_the_same_branch_is_ok_or_nothing() -> None:
    (finding,) = MATRIX.branch_move("595.91.07", "580.173.02")
    assert finding.level == "ok"
    assert MATRIX.branch_move("580.159.04", "580.173.02") == []


def test_the_cli_reports_it_in_text_and_json(capsys) -> None:
    args = ["check", "--os", "ubuntu-24.04", "--driver", "595.91.07", "--from-driver", "580.173.02", "--operator",
            "v26.7.0", "--kubernetes", "1.35", "--instance-type", "g6.xlarge", "--today", "2026-12-05"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert out.startswith("verdict: COMPATIBLE (with advisories)\n")
    assert f"  [advisory] driver-branch-shorter-support: {MOVE}" in out
    assert main([*args, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["input"]["from_driver"] == "580.173.02"
    assert any(f["rule"] == "driver-branch-shorter-support" and f["level"] == "advisory"
               for f in document["findings"])
    assert main(["check", "--os", "ubuntu-24.04", "--driver", "595.91.07", "--from-driver", "abc"]) == 2

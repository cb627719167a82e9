"""A GPU Operator release or driver newer than the matrix is one to add, never a reason to step down (issue 46:
`gpuOperator.version: v26.10.0` got "nearest valid choice: v25.10.0"). The fix names the command that reads NVIDIA's
sources: `tools.matrix refresh --fetch` (a new operator release is reported as a row to add by hand,
tools/matrix/refresh.py _missing_operators) and `--write` for driver versions."""

from __future__ import annotations

import json
from datetime import date

from policies.gpu_guard.matrix import load_matrix
from tools.matrix.cli import main

MATRIX = load_matrix()
TODAY = date(2026, 12, 5)


def test_an_operator_newer_than_the_matrix_names_refresh_and_offers_no_older_release() -> None:
    (finding,) = MATRIX.operator_kubernetes("v26.10.0", "1.35", "ubuntu-24.04")
    assert (finding.level, finding.rule, finding.nearest) == ("mandatory", "operator-known", ())
    reviewed = max(r.reviewed for r in MATRIX.data.operators).isoformat()
    assert finding.message.startswith(
        f"GPU Operator v26.10.0 is newer than the matrix (its newest release is v26.7.0; the operator rows were "
        f"reviewed on {reviewed}). Add it: `.venv/bin/gpu-platform matrix refresh --fetch` reads NVIDIA's "
        "component matrix and reports the release as a row to add to policies/gpu_guard/matrix.yaml by hand")
    # an unknown release older than the newest is still offered the known ones
    (older,) = MATRIX.operator_kubernetes("v26.4.9", "1.35", "ubuntu-24.04")
    assert older.nearest[0] == "v26.7.0" and "newer than the matrix" not in older.message


def test_the_cli_says_the_same_for_operator_and_driver(capsys) -> None:
    assert main(["check", "--os", "ubuntu-24.04", "--driver", "580.173.02", "--operator", "v26.10.0"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --operator 'v26.10.0': GPU Operator v26.10.0 is newer than the matrix")
    assert "v25.10.0" not in err
    args = ["check", "--os", "ubuntu-24.04", "--driver", "650.10.01", "--today", TODAY.isoformat(), "--json"]
    main(args)
    findings = json.loads(capsys.readouterr().out)["findings"]
    image = next(f for f in findings if f["rule"] == "driver-image-published")
    assert image["nearest"] == []
    assert image["message"].startswith("driver 650.10.01 is newer than the matrix (its newest driver is 610.57.04;")
    assert "`.venv/bin/gpu-platform matrix refresh --fetch --write`" in image["message"]
    known = next(f for f in findings if f["rule"] == "driver-branch-known")
    assert known["nearest"] == [] and "newer than the matrix" in known["message"]


def test_a_driver_the_matrix_could_know_is_still_judged_as_before() -> None:
    assert MATRIX.newer_driver("580.173.02") is None
    assert MATRIX.newer_driver("610") is None
    assert MATRIX.newer_driver("610.99.01") is not None  # past the newest R610 release recorded
    assert (MATRIX.newer_driver("580.999.01") or "").startswith(
        "driver 580.999.01 is newer than the matrix (its newest R580 driver is 580.178.04;")

"""The matrix's per-fact queries, word for word over grids of inputs: tests/matrix/golden/queries.yaml.

CUDA against drivers (every option a pool or an image can set), driver images (conventional and precompiled),
EKS and driver-branch lifecycles across the days their dates fall on, kubelet skew, operator support of
branches and Kubernetes versions. Findings are whole (level, rule, message, source, choices) so a changed fact,
source or wording is a reviewed change: `GOLDEN_UPDATE=1 pytest tests/matrix/test_queries_golden.py`, then read
the diff. Every day is pinned.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import date
from typing import Any

from policies.gpu_guard.matrix import Finding, load_matrix
from tests.matrix.golden import GOLDEN_DIR, golden

GOLDEN = GOLDEN_DIR / "queries.yaml"
DAYS = (date(2024, 6, 1), date(2025, 11, 29), date(2026, 6, 30), date(2026, 11, 29), date(2028, 1, 1))
DRIVERS = ("470.256.02", "535.309.01", "570.211.01", "580.105.08", "595.91.07", "580")
CUDAS = ("11.8", "12.2", "12.8", "13.0", "13.2", "14.0")
# (forward-compat image, admitted branches, data-center GPU, toolkit mode, NVIDIA_DISABLE_REQUIRE): the plain
# case, then each option that changes a verdict.
OPTIONS = (
    (False, None, True, None, False), (True, None, True, None, False), (True, (535,), True, None, False),
    (True, None, False, None, False), (False, None, True, "cdi", False), (False, None, True, "legacy", True),
    (False, None, True, "cdi", True),
)


def _lines(findings: Iterable[Finding]) -> list[str]:
    return [f"{f.level} {f.rule}: {f.message} | {f.source} | {', '.join(f.nearest)}" for f in findings]


def _safe(call: Any) -> list[str]:
    try:
        return _lines(call())
    except ValueError as exc:  # a query refuses input it cannot parse: that refusal is part of the contract
        return [f"ValueError: {exc}"]


def rendered() -> dict[str, dict[str, list[str]]]:
    m = load_matrix()
    out: dict[str, dict[str, list[str]]] = {}
    out["cuda_driver"] = {
        f"{cuda} on {driver} fc={fc} admitted={adm} dc={dc} mode={mode} disable={dis}": _safe(
            lambda cuda=cuda, driver=driver, fc=fc, adm=adm, dc=dc, mode=mode, dis=dis: m.cuda_driver(
                cuda, driver, forward_compat_image=fc, admitted_branches=adm, data_center_gpu=dc,
                toolkit_mode=mode, disable_require=dis))
        for cuda, driver, (fc, adm, dc, mode, dis) in itertools.product(CUDAS, DRIVERS[:5], OPTIONS)
    }
    out["driver_image"] = {
        f"{version} {os_name} precompiled={pre} {op}": _safe(
            lambda version=version, os_name=os_name, pre=pre, op=op: m.driver_image(
                version, os_name, precompiled=pre, operator=op, kernel="6.8.0-1024-aws", today=DAYS[3]))
        for version, os_name, pre, op in itertools.product(
            (*DRIVERS, "535.15.04", "580.999.01"), ("ubuntu-22.04", "ubuntu-24.04", "al2023"), (False, True),
            ("v26.3.1", "v26.7.0"))
    }
    out["eks_lifecycle"] = {
        f"{k} on {day}": _safe(lambda k=k, day=day: m.eks_lifecycle(k, day))
        for k, day in itertools.product(("1.28", "1.30", "1.33", "1.35", "1.36", "1.37", "1.40", "one"), DAYS)
    }
    out["branch_lifecycle"] = {
        f"{d} on {day}": _safe(lambda d=d, day=day: m.branch_lifecycle(d, day))
        for d, day in itertools.product((*DRIVERS, "610", "999.1.1"), DAYS)
    }
    out["kubelet_skew"] = {
        f"{cp} / {kubelet}": _safe(lambda cp=cp, kubelet=kubelet: m.kubelet_skew(cp, kubelet))
        for cp, kubelet in itertools.product(("1.33", "1.35"), ("1.29", "1.31", "1.32", "1.33", "1.35", "1.36"))
    }
    out["operator_branch_support"] = {
        f"{op} {os_name} {d} precompiled={pre}": _safe(lambda op=op, os_name=os_name, d=d, pre=pre:
                                                         m.operator_branch_support(op, os_name, d, precompiled=pre))
        for op, os_name, d, pre in itertools.product(
            ("v24.9.0", "v26.3.1", "v26.7.0", "v99.0.0"), ("ubuntu-22.04", "ubuntu-24.04", "bottlerocket"),
            DRIVERS, (False, True))
    }
    out["operator_kubernetes"] = {
        f"{op} {k} {os_name}": _safe(lambda op=op, k=k, os_name=os_name: m.operator_kubernetes(op, k, os_name))
        for op, k, os_name in itertools.product(
            ("v24.9.0", "v26.3.1", "v26.7.0", "v99.0.0"), ("1.29", "1.33", "1.35", "1.37"),
            (None, "ubuntu-22.04", "ubuntu-24.04"))
    }
    out["cuda_architecture"] = {
        f"{cuda} {it}": _safe(lambda cuda=cuda, it=it: m.cuda_architecture(cuda, it))
        for cuda, it in itertools.product(("11.8", "12.2", "12.8", "13.0"),
                                          ("g4dn.xlarge", "g5.xlarge", "p3.2xlarge", "g7e.2xlarge", "x9.huge"))
    }
    return out


def test_matrix_queries_are_exactly_the_golden_ones() -> None:
    actual = rendered()
    expected = golden(GOLDEN.name, actual)
    for section, cases in actual.items():
        assert cases == expected[section], f"{section} differs from {GOLDEN} (GOLDEN_UPDATE=1 if deliberate)"
    assert set(expected) == set(actual)

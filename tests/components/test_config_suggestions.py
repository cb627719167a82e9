"""Every "nearest valid choice" a config error offers passes when applied.

One rule's suggestion used to be refused by another (a g7e.2xlarge with driver 570.195.03 was offered 575.57.08,
which GPU Operator v26.7.0 refuses: it has no R575). Each case below breaks one key of a shipped stack; the test
takes every suggestion of every problem, writes it at the problem's key, and checks that key is no longer refused.
"""

from __future__ import annotations

import copy
from datetime import date
from typing import Any

import pytest

from components.config.loader import _matrix_problems, _service_problems, parse_stack_config
from components.config.problems import Problem
from tests.components.harness import stack_values

DAY = date(2026, 11, 30)


def problems(values: dict[str, Any]) -> list[Problem]:
    config, found = parse_stack_config(values)
    if config is None:
        return found
    return _service_problems(config, "us-west-2") or _matrix_problems(config, DAY)[0]


def _set(values: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    node: Any = values
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = value


def _get(values: dict[str, Any], path: tuple[Any, ...]) -> Any:
    node: Any = values
    for part in path:
        node = node[part]
    return node


def _typed(current: Any, suggestion: str) -> Any:
    """A suggestion as the key's type (suggestions are printed as text)."""
    if isinstance(current, bool):
        return suggestion == "true"
    if isinstance(current, int):
        return int(suggestion)
    return suggestion


def _broken(stack: str, path: tuple[Any, ...], value: Any, **also: Any) -> dict[str, Any]:
    values = copy.deepcopy(stack_values(stack))
    _set(values, path, value)
    for key, extra in also.items():
        _set(values, tuple(key.split("__")[:1]) + tuple(int(p) if p.isdigit() else p for p in key.split("__")[1:]),
             extra)
    return values


CASES = {
    # The case: the GPU's minimum driver (R575) against an operator without R575.
    "g7e-on-r570": _broken("dev", ("gpuNodeGroups", 0, "driverVersion"), "570.195.03",
                           gpuNodeGroups__0__instanceTypes=["g7e.2xlarge"]),
    "unpublished-driver": _broken("dev", ("gpuNodeGroups", 0, "driverVersion"), "535.15.04"),
    "r535-on-ubuntu-24.04": _broken("dev", ("gpuNodeGroups", 0, "driverVersion"), "535.309.01"),
    "bottlerocket-branch": _broken("dev", ("karpenter", "pools", 0, "driverVersion"), "570"),
    "bottlerocket-release-without-1.35": _broken("dev", ("karpenter", "pools", 0, "imageVersion"), "v1.37.0"),
    "unknown-instance-size": _broken("dev", ("gpuNodeGroups", 0, "instanceTypes", 0), "g6.huge"),
    "operator-release": _broken("prod", ("gpuOperator", "version"), "v26.4.9"),  # v26.7.9: newer than the matrix
    "kubelet-skew": _broken("prod", ("gpuNodeGroups", 0, "kubeletVersion"), "1.30"),
    "max-gpus": _broken("prod", ("karpenter", "pools", 0, "maxGpus"), 2,
                        karpenter__pools__0__instanceTypes=["g6.12xlarge"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_suggestion_a_config_error_makes_passes_when_applied(case):
    values = CASES[case]
    found = problems(values)
    assert found, f"{case}: the broken stack was accepted"
    suggested = [(p, choice) for p in found for choice in p.nearest]
    assert suggested, f"{case}: no problem offers a suggestion: {[p.rule for p in found]}"
    for problem, choice in suggested:
        fixed = copy.deepcopy(values)
        _set(fixed, problem.path, _typed(_get(values, problem.path), choice))
        still = [p for p in problems(fixed) if p.path == problem.path]
        assert not still, f"{case}: {'.'.join(map(str, problem.path))} = {choice!r} (suggested) is refused: " \
                          f"{still[0].rule}"

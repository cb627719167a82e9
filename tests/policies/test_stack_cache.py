"""The per-stack cache that hands a stack policy's verdicts to its `-caveats` twin (gpu_guard/stack_cache.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from pulumi_policy import PolicyResource, PolicyResourceOptions, StackValidationArgs
from pulumi_policy.policy import PolicyCustomTimeouts
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, UnknownValueError, unknown_checking_proxy

from policies.gpu_guard import inventory
from policies.gpu_guard.base import CAVEAT_MARK, all_policies
from policies.gpu_guard.stack_cache import SharedValidation, stack_fingerprint
from tests.policies.harness import load_cases, run_policy

RESOURCES: list[dict[str, Any]] = [
    {"type": "aws:eks/nodeGroup:NodeGroup", "name": "gpu", "props": {"labels": {"a": "1"}, "sizes": [1, 2]}},
    {"type": "kubernetes:apps/v1:Deployment", "name": "svc", "props": {"spec": {"replicas": 1}}},
]
Reported = list[tuple[str, str | None]]


def _args(resources: list[dict[str, Any]], config: dict[str, Any] | None = None) -> StackValidationArgs:
    """Fresh PolicyResources with unknown-checking proxies, as the SDK builds them for each stack policy."""
    opts = PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), [], None)
    built = [PolicyResource(r["type"], unknown_checking_proxy(copy.deepcopy(r["props"])), f"urn:{r['name']}",
                            r["name"], opts, None, None, [], {}) for r in resources]
    return StackValidationArgs(built, config or {"today": "2026-11-30"})


class Collect:
    def __init__(self) -> None:
        self.seen: Reported = []

    def __call__(self, message: str, urn: str | None = None) -> None:
        self.seen.append((message, urn))


def _list_first(args: StackValidationArgs, report: Any) -> None:
    for res in args.resources:
        labels: Any = res.props.get("labels") or {}
        report(f"{res.name}: {labels.get('a', '-')}", res.urn)
    report(CAVEAT_MARK + "a caveat")


def test_the_other_side_gets_the_verdicts_of_the_same_stack_without_validating() -> None:
    shared = SharedValidation(_list_first)
    first, second = Collect(), Collect()
    shared.judge("policy", _args(RESOURCES), first)
    shared.judge("policy-caveats", _args(RESOURCES), second)  # new objects, same content, as the SDK builds them
    assert shared.runs == 1
    assert first.seen == second.seen == [("gpu: 1", "urn:gpu"), ("svc: -", "urn:svc"), (CAVEAT_MARK + "a caveat", None)]


def test_verdicts_are_handed_over_once_and_never_back_to_the_side_that_made_them() -> None:
    shared = SharedValidation(_list_first)
    for side in ("policy", "policy-caveats", "policy-caveats", "policy", "policy", "policy"):
        shared.judge(side, _args(RESOURCES), Collect())
    # pairs: (policy, caveats) once; then caveats alone, policy consumes; then policy alone twice
    assert shared.runs == 4


@pytest.mark.parametrize("change", ["props", "config", "order", "dependency"])
def test_a_different_stack_is_validated_again(change: str) -> None:
    shared = SharedValidation(lambda args, report: report(str(len(args.resources)), None))
    base = _args(RESOURCES)
    other_resources = copy.deepcopy(RESOURCES)
    config = None
    if change == "props":
        other_resources[0]["props"]["sizes"] = [1, 3]
    elif change == "order":
        other_resources.reverse()
    elif change == "config":
        config = {"today": "2026-12-01"}
    other = _args(other_resources, config)
    if change == "dependency":
        other.resources[1].dependencies.append(other.resources[0])
    assert stack_fingerprint(base) != stack_fingerprint(other)
    shared.judge("policy", base, Collect())
    shared.judge("policy-caveats", other, Collect())
    assert shared.runs == 2


def test_unknown_values_fingerprint_without_raising_and_differ_from_known_ones() -> None:
    unknown = copy.deepcopy(RESOURCES)
    unknown[0]["props"]["labels"]["a"] = UNKNOWN_STRING_VALUE
    assert stack_fingerprint(_args(unknown)) != stack_fingerprint(_args(RESOURCES))
    assert stack_fingerprint(_args(RESOURCES)) == stack_fingerprint(_args(copy.deepcopy(RESOURCES)))


def test_the_exception_a_validation_ends_with_reaches_both_sides_after_its_reports() -> None:
    def validate(args: StackValidationArgs, report: Any) -> None:
        report("before the unknown")
        args.resources[0].props["labels"]["a"]  # reading it raises, as in a first preview

    unknown = copy.deepcopy(RESOURCES)
    unknown[0]["props"]["labels"]["a"] = UNKNOWN_STRING_VALUE
    shared = SharedValidation(validate)
    for side in ("policy", "policy-caveats"):
        collect = Collect()
        with pytest.raises(UnknownValueError):
            shared.judge(side, _args(unknown), collect)
        assert collect.seen == [("before the unknown", None)]
    assert shared.runs == 1


def test_cuda_driver_compatible_and_its_twin_validate_once_per_stack(monkeypatch: pytest.MonkeyPatch) -> None:
    policies = {p.name: p for p in all_policies()}
    main, twin = policies["cuda-driver-compatible"], policies["cuda-driver-compatible-caveats"]
    cases = {c.name: c for c in load_cases("cuda-driver-compatible")}
    case = cases["fail_cuda_12_8_on_r535_minor_version_compat"]
    calls: list[int] = []
    real = inventory.build_inventory

    def counting(resources: Any) -> Any:
        calls.append(1)
        return real(resources)

    monkeypatch.setattr("policies.gpu_guard.rules.cuda_driver_compatible.build_inventory", counting)
    blocking = run_policy(main, case.resources, case.config)
    caveats = run_policy(twin, case.resources, case.config)
    assert len(calls) == 1
    assert blocking.messages == ()
    assert len(caveats.messages) == 2
    assert "only through minor version compatibility" in caveats.messages[0]
    assert not any(m.startswith(CAVEAT_MARK) for m in caveats.messages)


def test_every_policy_of_the_pack_shares_one_matrix_loaded_once_per_process(monkeypatch: pytest.MonkeyPatch) -> None:
    from policies.gpu_guard.matrix import loader  # noqa: PLC0415

    reads: list[Any] = []
    real = loader.load_matrix_file

    def counting(path: Any) -> Any:
        reads.append(path)
        return real(path)

    monkeypatch.setattr(loader, "load_matrix_file", counting)
    loader.load_matrix.cache_clear()
    try:
        baseline = {c.name: c for c in load_cases("cuda-driver-compatible")}["baseline"]
        for policy in all_policies():
            run_policy(policy, baseline.resources, {"today": "2026-11-30"})
            run_policy(policy, baseline.resources, {"today": "2026-11-30"})
    finally:
        monkeypatch.undo()
        loader.load_matrix.cache_clear()
    assert reads == [loader.MATRIX_PATH]


def _numbered(args: StackValidationArgs, call: int) -> StackValidationArgs:
    """`args` as the pack's servicer hands them: the resource list carries its AnalyzeStack call's number."""
    from policies.gpu_guard.servicer import StackResources  # noqa: PLC0415

    resources = StackResources(args.resources)
    resources.call = call
    return StackValidationArgs(resources, args.get_config())


def test_under_the_packs_servicer_the_fingerprint_is_the_call_and_the_config() -> None:
    same_call = _numbered(_args(RESOURCES), 7)
    assert stack_fingerprint(same_call) == stack_fingerprint(_numbered(_args(RESOURCES), 7))
    assert stack_fingerprint(same_call) != stack_fingerprint(_numbered(_args(RESOURCES), 8))
    assert stack_fingerprint(same_call) != stack_fingerprint(_numbered(_args(RESOURCES, {"today": "2027-01-01"}), 7))
    assert stack_fingerprint(same_call) != stack_fingerprint(_args(RESOURCES))  # an unnumbered list: the digest
    shared = SharedValidation(_list_first)
    shared.judge("policy", _numbered(_args(RESOURCES), 9), Collect())
    shared.judge("policy-caveats", _numbered(_args(RESOURCES), 10), Collect())  # the next call: validated afresh
    assert shared.runs == 2
    shared.judge("policy", _numbered(_args(RESOURCES), 10), Collect())  # same call: handed over
    assert shared.runs == 2


def test_the_stack_policies_of_one_call_share_one_inventory() -> None:
    first, again = _numbered(_args(RESOURCES), 11), _numbered(_args(RESOURCES), 11)
    assert inventory.build_inventory(first.resources) is inventory.build_inventory(again.resources)
    assert inventory.build_inventory(first.resources) is not inventory.build_inventory(
        _numbered(_args(RESOURCES), 12).resources)
    plain = _args(RESOURCES).resources
    assert inventory.build_inventory(plain) is not inventory.build_inventory(plain)
    assert inventory.build_inventory(plain) == inventory.build_inventory(first.resources)

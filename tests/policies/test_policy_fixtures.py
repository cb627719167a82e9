"""Every policy against its fixtures: a compliant baseline, failing variants that assert the message."""

from __future__ import annotations

import pytest
from pulumi_policy import StackValidationPolicy

from policies.gpu_guard.base import all_meta, all_policies, companions_of
from tests.policies.harness import FIXTURES, assert_case, load_cases, resource_urn

POLICIES = {p.name: p for p in all_policies()}
COMPANIONS = {name for name, meta in all_meta().items() if meta.companion_of}
CASES = [case for name in sorted(POLICIES) if (FIXTURES / name).is_dir() for case in load_cases(name)]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.policy}/{c.name}" for c in CASES])
def test_policy_gives_the_expected_verdict_on_its_fixture(case):
    assert_case(POLICIES[case.policy], case, companions_of(case.policy))


STACK_CASES = [c for c in CASES if isinstance(POLICIES[c.policy], StackValidationPolicy) and c.expect]


@pytest.mark.parametrize("case", STACK_CASES, ids=[f"{c.policy}/{c.name}" for c in STACK_CASES])
def test_a_stack_policy_reports_each_violation_against_a_resource_of_the_stack(case):
    # A stack policy's violation without a URN is attached to the stack as a whole: the engine and the
    # gate show it under no resource (a resource policy's is always the analyzed resource's, whatever it names).
    urns = {resource_urn(r) for r in case.resources}
    for violation in assert_case(POLICIES[case.policy], case, companions_of(case.policy)):
        assert violation.urn in urns, f"{violation.policy}: {violation.message!r} names no resource of the stack"


def test_every_policy_has_a_baseline_and_at_least_one_failing_fixture():
    missing = []
    for name in sorted(set(POLICIES) - COMPANIONS):  # a `-caveats` twin is tested through its policy's fixtures
        folder = FIXTURES / name
        if not (folder / "baseline.yaml").is_file() or not list(folder.glob("fail_*.yaml")):
            missing.append(name)
    assert not missing, f"policies without a baseline and failing fixtures: {missing}"


def test_every_fixture_folder_belongs_to_a_registered_policy():
    orphans = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and p.name not in POLICIES)
    assert not orphans, f"fixture folders with no policy of that name: {orphans}"


def test_every_caveats_twin_reports_something_in_some_fixture_of_its_policy():
    assert COMPANIONS, "the pack registers `-caveats` twins"
    silent = []
    for name in sorted(COMPANIONS):
        parent = all_meta()[name].companion_of
        assert parent is not None
        matched = [v for case in load_cases(parent)
                   for v in assert_case(POLICIES[parent], case, companions_of(parent))]
        if not any(v.policy == name and v.level == "advisory" for v in matched):
            silent.append(name)
    assert not silent, f"caveats twins no fixture expects an advisory finding of: {silent}"


def test_policy_names_are_unique_and_kebab_case():
    names = [p.name for p in all_policies()]
    assert len(names) == len(set(names))
    assert all(n == n.lower() and " " not in n and "_" not in n for n in names)


def test_the_catalogue_of_docs_policies_md_is_implemented_exactly():
    from tests.policies.catalogue import catalogue  # noqa: PLC0415

    expected = catalogue()
    meta = all_meta()
    companions = {name: m.companion_of for name, m in meta.items() if m.companion_of}
    parts = {name: m.part_of for name, m in meta.items() if m.part_of}
    assert sorted(set(meta) - set(companions) - set(parts)) == sorted(expected), (
        "policy names differ from docs/policies.md")
    for name, whole in parts.items():
        # The resource-level part of a catalogue policy blocks as the catalogue says the policy does.
        assert whole in expected, f"{name} is a part of {whole}, which docs/policies.md does not list"
        assert (meta[name].default.value, meta[name].prod.value) == expected[whole], f"{name}: enforcement"
    for name, parent in companions.items():
        assert parent in expected, f"{name} is the companion of {parent}, which docs/policies.md does not list"
        assert meta[name].default.value == "advisory", f"{name}: a companion carries advisory findings only"
    for name, (default, prod) in expected.items():
        assert meta[name].default.value == default, f"{name}: default enforcement"
        assert meta[name].prod.value == prod, f"{name}: prod enforcement"

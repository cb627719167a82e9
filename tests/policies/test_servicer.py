"""The pack's servicer (`gpu_guard/servicer.py`) answers exactly what pulumi-policy's own does, and stays pinned.

- pinned: the servicer adapts pulumi-policy 1.21.0's `_PolicyAnalyzerServicer`; when the pinned version or the
  source of any upstream method it adapts or calls changes, `test_the_adapted_upstream_code_is_the_pinned_one`
  fails, and the adaptation must be read again against the new code (then its digests updated here).
- identical: every policy fixture's stack, sent as Analyze (each resource), Remediate and AnalyzeStack requests
  to both servicers over the pack's real policies, gets byte-identical responses.
"""

from __future__ import annotations

import hashlib
import inspect
import re
from typing import Any

import pulumi_policy.policy as upstream
import pytest
from google.protobuf import struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel
from pulumi_policy.deserialize import serialize_properties
from pulumi_policy.version import VERSION

from policies.gpu_guard.base import all_policies
from policies.gpu_guard.servicer import PINNED_VERSION, OncePerCallServicer, install
from tests.policies.harness import FIXTURES, _unknowns, load_cases, resource_urn
from tests.shared import REPO

# sha256 (first 16 hex digits) of inspect.getsource of each upstream method the adaptation mirrors or calls.
PINNED_SOURCES = {
    "Analyze": "75db9cf8fc9d1585",
    "AnalyzeStack": "3917a008482c2387",
    "Remediate": "c4060524d4ad777f",
    "_configure_runtime_settings": "da0923ff3a404f36",
    "_get_resource_options": "986051047b696f0f",
    "_get_provider_resource": "5db736069fc8d3d6",
    "_get_policy_config": "bd59507ff3226701",
    "_create_report_violation": "0be23b1e3ebae615",
    "_get_enforcement_level": "e766403ef7ab7cdf",
    "__init__": "d79091472a8911d6",
}
PINNED_POLICY_PACK_INIT = "34256ae3a291d0b4"  # PolicyPack.__init__: builds its servicer from the module global


def _digest(obj: Any) -> str:
    return hashlib.sha256(inspect.getsource(obj).encode()).hexdigest()[:16]


def test_the_adapted_upstream_code_is_the_pinned_one() -> None:
    requirement = re.search(r"^pulumi-policy==(\S+)$", (REPO / "policies" / "requirements.txt").read_text(),
                            re.MULTILINE)
    assert requirement is not None
    assert VERSION == PINNED_VERSION == requirement.group(1)
    changed = {name: _digest(getattr(upstream._PolicyAnalyzerServicer, name)) for name in PINNED_SOURCES}
    assert changed == PINNED_SOURCES, "pulumi-policy's servicer changed: read gpu_guard/servicer.py against it"
    assert _digest(upstream.PolicyPack.__init__) == PINNED_POLICY_PACK_INIT


def test_install_swaps_the_servicer_policy_pack_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upstream, "_PolicyAnalyzerServicer", upstream._PolicyAnalyzerServicer)
    assert install() is True
    assert upstream._PolicyAnalyzerServicer is OncePerCallServicer
    assert "_PolicyAnalyzerServicer(" in inspect.getsource(upstream.PolicyPack.__init__)


def test_install_refuses_another_pulumi_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    original = upstream._PolicyAnalyzerServicer
    monkeypatch.setattr(upstream, "_PolicyAnalyzerServicer", original)
    monkeypatch.setattr("policies.gpu_guard.servicer.VERSION", "1.22.0")
    assert install() is False
    assert upstream._PolicyAnalyzerServicer is original


def _servicer(cls: Any, remediate: bool = False) -> Any:
    policies = all_policies()
    servicer = cls("gpu-platform", "0.1.0", policies, EnforcementLevel.ADVISORY, None, None, None, None, None, None,
                   None)
    request = analyzer_pb2.ConfigureAnalyzerRequest()
    if remediate:  # a resource policy at `remediate`: Remediate then runs the upstream loop
        name = next(p.name for p in policies if isinstance(p, upstream.ResourceValidationPolicy))
        request.policyConfig[name].enforcementLevel = analyzer_pb2.REMEDIATE
    servicer.Configure(request, None)
    return servicer


def _requests(resources: list[dict[str, Any]]) -> tuple[list[Any], Any]:
    by_name = {r["name"]: resource_urn(r) for r in resources}
    singles, stack = [], analyzer_pb2.AnalyzeStackRequest()
    for r in resources:
        props = struct_pb2.Struct()
        props.update(_unknowns(r.get("props", {})))
        parent = by_name.get(r.get("parent", ""), "")
        options = analyzer_pb2.AnalyzerResourceOptions(protect=bool(r.get("protect", False)), parent=parent)
        singles.append(analyzer_pb2.AnalyzeRequest(type=r["type"], urn=resource_urn(r), name=r["name"],
                                                   properties=props, options=options))
        item = stack.resources.add(type=r["type"], urn=resource_urn(r), name=r["name"], properties=props,
                                   options=options, parent=parent,
                                   dependencies=[by_name[n] for n in r.get("dependsOn", []) if n in by_name])
        for prop, names in (r.get("propertyDependencies") or {}).items():
            item.propertyDependencies[prop].urns.extend(by_name[n] for n in names if n in by_name)
    return singles, stack


def _answers(servicer: Any, singles: list[Any], stack: Any) -> list[bytes]:
    out = []
    for request in singles:
        out.append(servicer.Remediate(request, None).SerializeToString(deterministic=True))
        out.append(servicer.Analyze(request, None).SerializeToString(deterministic=True))
    out.append(servicer.AnalyzeStack(stack, None).SerializeToString(deterministic=True))
    out.append(servicer.AnalyzeStack(stack, None).SerializeToString(deterministic=True))  # a second call: afresh
    return out


@pytest.mark.parametrize("policy", sorted(p.name for p in FIXTURES.iterdir() if (p / "baseline.yaml").is_file()))
def test_every_fixture_gets_the_upstream_servicers_answers(policy: str) -> None:
    theirs, ours = _servicer(upstream._PolicyAnalyzerServicer), _servicer(OncePerCallServicer)
    answered = False
    for case in load_cases(policy):
        singles, stack = _requests(case.resources)
        expected = _answers(theirs, singles, stack)
        answered = answered or any(expected)
        assert _answers(ours, singles, stack) == expected, f"{policy}/{case.name}"
    assert answered, f"{policy}: no fixture got a single diagnostic, so nothing was compared"


def test_a_remediating_pack_gets_the_upstream_remediate() -> None:
    case = load_cases("gpu-nodes-tainted")[0]
    singles, stack = _requests(case.resources)
    theirs, ours = _servicer(upstream._PolicyAnalyzerServicer, True), _servicer(OncePerCallServicer, True)
    assert _answers(ours, singles, stack) == _answers(theirs, singles, stack)


def _probe_policies() -> list[Any]:
    """A resource and a stack policy that report everything they can read, so any difference shows."""

    def seen(r: Any) -> str:
        def urn(x: Any) -> Any:
            return getattr(x, "urn", None)
        opts = r.opts
        return repr((r.resource_type, r.urn, r.name, serialize_properties(r.props), opts.protect,
                     list(opts.ignore_changes), opts.delete_before_replace, list(opts.aliases),
                     (opts.custom_timeouts.create_seconds, opts.custom_timeouts.update_seconds,
                      opts.custom_timeouts.delete_seconds), list(opts.additional_secret_outputs), opts.parent,
                     None if r.provider is None else (r.provider.resource_type, r.provider.urn),
                     urn(getattr(r, "parent", None)), [urn(d) for d in getattr(r, "dependencies", None) or []],
                     {k: [urn(d) for d in v] for k, v in (getattr(r, "property_dependencies", None) or {}).items()}))

    def each(args: Any, report: Any) -> None:
        report(seen(args) + repr(args.get_config()), args.urn)

    def stack(args: Any, report: Any) -> None:
        for r in args.resources:
            report(seen(r), r.urn)
        args.resources.clear()  # a policy that empties its list: the next policy still sees every resource

    return [upstream.ResourceValidationPolicy("probe-resource", "probe", validate=each),
            upstream.StackValidationPolicy("probe-stack", "probe", validate=stack),
            upstream.StackValidationPolicy("probe-stack-again", "probe", validate=stack)]


def test_policies_read_the_same_resources_from_both_servicers() -> None:
    resources: list[dict[str, Any]] = [
        {"type": "aws:eks/cluster:Cluster", "name": "c", "props": {"version": "1.33", "tags": {"a": "b"}}},
        {"type": "kubernetes:apps/v1:Deployment", "name": "d", "parent": "c", "dependsOn": ["c"],
         "propertyDependencies": {"spec": ["c"]}, "protect": True,
         "props": {"spec": {"replicas": 2, "template": {"spec": {"containers": [{"image": "<unknown>"}]}}}}},
    ]
    singles, stack = _requests(resources)
    answers = []
    for cls in (upstream._PolicyAnalyzerServicer, OncePerCallServicer):
        servicer = cls("probe", "0.1.0", _probe_policies(), EnforcementLevel.ADVISORY, None, None, None, None, None,
                       None, None)
        answers.append(_answers(servicer, singles, stack))
    assert answers[0] == answers[1]
    assert b"urn:pulumi:test::gpu-platform::aws:eks/cluster:Cluster::c" in answers[0][-1]
    assert answers[0][-1].count(b"'spec': ['urn:pulumi:test") == 2  # both stack policies saw the dependency

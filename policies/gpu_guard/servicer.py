"""The pack's analyzer servicer: pulumi-policy's, with each resource deserialized once per call, not once per policy.

pulumi-policy 1.21.0 (`pulumi_policy/policy.py`, `_PolicyAnalyzerServicer`) rebuilds every resource for every
policy: `Analyze` (lines 976-997) deserializes the request's properties inside `for policy in
self.__policies`, once per resource policy; `AnalyzeStack` (lines 1036-1088) deserializes every resource of
the stack (`json_format.MessageToDict`, `deserialize_properties`, line 1049), builds its `PolicyResource` and
links parents and dependencies, once per stack policy. With about 40 stack policies and 1,000 resources
that is 40,000 deserializations per `AnalyzeStack`: most of the pack's time, in every `pulumi preview` and
`pulumi up` the real engine runs with this pack.

Two more costs of every call go the same way. `_configure_runtime_settings` (lines 1421-1451), which every
call runs first, parses `PULUMI_CONFIG` and calls `inspect.signature(pulumi.runtime.Settings)` each time:
here it runs once per worker thread and per value of the environment it reads (the settings are
context variables, pulumi/runtime/settings.py line 181, so each gRPC worker thread sets its own).
`Remediate` (lines 1117-1200) deserializes the request before it looks for a policy at enforcement
`remediate`: here a call with no such policy answers the same empty response without deserializing.

`OncePerCallServicer` answers the same calls with the same policy loop, the same enforcement levels, the
same `report_violation`, the same not-applicable and unknown-value handling (the upstream methods
themselves: `_get_enforcement_level`, `_create_report_violation`, `_get_resource_options`,
`_get_provider_resource`, `_get_policy_config`, `_map_enforcement_level`), and builds the resources once
per call, the first time a policy needs them. What a policy gets is read-only: properties come
through `unknown_checking_proxy` (a `Mapping` with no setter, pulumi_policy/proxy.py lines 72-110) and each
stack policy gets its own list of the shared `PolicyResource` objects. The stack list carries the call's
number (`StackResources.call`), which `stack_cache` uses as a cheap fingerprint: two policies of one call see
the same resources by construction.

With `GPU_GUARD_WORK_FILE` set (the work-count test, tests/tools/test_preview_work.py), the servicer counts its
calls and the policy validations it runs and writes the counts there as JSON after each `AnalyzeStack` (the
engine's last call of a run); unset, it counts and writes nothing.

`install()` makes `PolicyPack` (pulumi_policy/policy.py line 118, which builds its servicer from the module
global `_PolicyAnalyzerServicer`) start this servicer instead. It is pinned to pulumi-policy 1.21.0:
`install()` refuses another version (the pack then runs upstream's own servicer, slower and identical in
its answers), and tests/policies/test_servicer.py fails when the pinned upstream methods change. The
upstream proposal is docs/upstream-pulumi-policy.md.
Source: https://github.com/pulumi/pulumi-policy/blob/v1.21.0/sdk/python/lib/pulumi_policy/policy.py
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
from collections import Counter
from collections.abc import Callable
from inspect import isawaitable
from pathlib import Path
from typing import Any

import pulumi_policy.policy as upstream
from google.protobuf import json_format
from pulumi.runtime import proto
from pulumi_policy import (
    EnforcementLevel,
    PolicyResource,
    ResourceValidationArgs,
    ResourceValidationPolicy,
    StackValidationArgs,
    StackValidationPolicy,
)
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy
from pulumi_policy.version import VERSION

PINNED_VERSION = "1.21.0"  # policies/requirements.txt

_Upstream: Any = upstream._PolicyAnalyzerServicer
_calls = itertools.count(1)
_calls_lock = threading.Lock()


_WORK_FILE = os.environ.get("GPU_GUARD_WORK_FILE", "")
_work: Counter[str] = Counter()


def _count(what: str) -> None:
    if _WORK_FILE:
        with _calls_lock:
            _work[what] += 1


def _write_work() -> None:
    if _WORK_FILE:
        with _calls_lock:
            text = json.dumps(dict(sorted(_work.items())))
        Path(_WORK_FILE).write_text(text, encoding="utf-8")


def _next_call() -> int:
    with _calls_lock:
        return next(_calls)


class StackResources(list):  # type: ignore[type-arg]
    """The resources of one `AnalyzeStack` call as one stack policy gets them; `call` numbers the call."""

    call: int = 0


def _lazy(build: Callable[[], Any]) -> Callable[[], Any]:
    value: list[Any] = []

    def get() -> Any:
        if not value:
            value.append(build())
        return value[0]

    return get


_ENVIRONMENT = ("PULUMI_CONFIG", "PULUMI_PROJECT", "PULUMI_STACK", "PULUMI_DRY_RUN", "PULUMI_ORGANIZATION")


class OncePerCallServicer(_Upstream):  # type: ignore[misc]
    """pulumi-policy's servicer, each resource built once per call (see the module docstring)."""

    _configured = threading.local()

    def _configure_runtime_settings(self) -> None:
        seen = tuple(os.environ.get(name) for name in _ENVIRONMENT)
        if getattr(self._configured, "environment", None) != seen:
            super()._configure_runtime_settings()
            self._configured.environment = seen

    def Remediate(self, request: Any, context: Any) -> Any:
        if any(isinstance(policy, ResourceValidationPolicy)
               and self._get_enforcement_level(policy) == EnforcementLevel.REMEDIATE for policy in self._policies()):
            return super().Remediate(request, context)
        self._configure_runtime_settings()
        return proto.RemediateResponse()  # what upstream's loop answers when no policy remediates

    def _policies(self) -> list[Any]:
        return list(self._PolicyAnalyzerServicer__policies)

    def _unknown(self, response: Any, policy: Any, error: UnknownValueError) -> None:
        # The advisory upstream appends when a policy reads an unknown value during preview (policy.py 1011-1020).
        name = self._PolicyAnalyzerServicer__policy_pack_name
        version = self._PolicyAnalyzerServicer__policy_pack_version
        response.diagnostics.append(proto.AnalyzeDiagnostic(
            policyName=policy.name,
            policyPackName=name,
            policyPackVersion=version,
            message=(f"can't run policy '{policy.name}' from policy pack '{name}@v{version}' during preview: "
                     f"{error.message}"),
            urn="",
            description=policy.description,
            enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
        ))

    def _validate(self, response: Any, policy: Any, args: Any, report: Any) -> None:
        _count("stack validations" if isinstance(args, StackValidationArgs) else "resource validations")
        try:
            result = policy.validate(args, report)
            if isawaitable(result):
                loop = asyncio.new_event_loop()
                task: asyncio.Task[Any] = asyncio.Task(result, loop=loop)  # type: ignore[arg-type]
                loop.run_until_complete(task)
                loop.close()
        except UnknownValueError as error:
            self._unknown(response, policy, error)
        except upstream._NotApplicableError as error:
            response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name,
                                                                     reason=error.reason or ""))

    def Analyze(self, request: Any, _context: Any) -> Any:
        _count("Analyze")
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        shared = _lazy(lambda: (
            unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(request.properties))),
            self._get_resource_options(request),
            self._get_provider_resource(request),
        ))
        tags = self._PolicyAnalyzerServicer__stack_tags
        for policy in self._policies():
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, ResourceValidationPolicy):
                continue
            if not policy.has_validation():
                response.not_applicable.append(proto.PolicyNotApplicable(
                    policy_name=policy.name, reason="Policy does not implement validate"))
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY  # a violation left after remediation (policy.py 987-990)
            report = self._create_report_violation(response, policy.name, policy.description, level,
                                                   policy.severity)
            props, opts, provider = shared()
            args = ResourceValidationArgs(request.type, props, request.urn, request.name, opts, provider,
                                          self._get_policy_config(policy.name), tags)
            self._validate(response, policy, args, report)
        return response

    def _stack_resources(self, request: Any) -> list[PolicyResource]:
        """Every resource of the request, linked to its parent and dependencies (policy.py lines 1047-1081)."""
        _count("stack resource builds")
        resources: list[PolicyResource] = []
        links = []
        for r in request.resources:
            props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(r.properties)))
            resource = PolicyResource(r.type, props, r.urn, r.name, self._get_resource_options(r),
                                      self._get_provider_resource(r), None, [], {})
            resources.append(resource)
            links.append((resource, r.parent, list(r.dependencies),
                          {k: list(v.urns) for k, v in r.propertyDependencies.items()}))
        by_urn = {resource.urn: resource for resource in resources}
        for resource, parent, dependencies, property_dependencies in links:
            if parent is not None and parent in by_urn:
                resource.parent = by_urn[parent]
            resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for key, urns in property_dependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in urns if d in by_urn]
        return resources

    def AnalyzeStack(self, request: Any, _context: Any) -> Any:
        _count("AnalyzeStack")
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        call = _next_call()
        shared = _lazy(lambda: self._stack_resources(request))
        tags = self._PolicyAnalyzerServicer__stack_tags
        for policy in self._policies():
            level = self._get_enforcement_level(policy)
            if level == EnforcementLevel.DISABLED or not isinstance(policy, StackValidationPolicy):
                continue
            if level == EnforcementLevel.REMEDIATE:
                level = EnforcementLevel.MANDATORY  # stack policies cannot remediate (policy.py 1040-1042)
            report = self._create_report_violation(response, policy.name, policy.description, level,
                                                   policy.severity)
            resources = StackResources(shared())
            resources.call = call
            args = StackValidationArgs(resources, self._get_policy_config(policy.name), tags)
            self._validate(response, policy, args, report)
        _write_work()
        return response


def install() -> bool:
    """Make `PolicyPack` serve `OncePerCallServicer`; False (upstream's servicer stays) on another pulumi-policy."""
    if VERSION != PINNED_VERSION:
        return False
    upstream._PolicyAnalyzerServicer = OncePerCallServicer  # type: ignore[misc]
    return True

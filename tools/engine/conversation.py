"""One analyzer conversation with a running policy pack: the protocol of one preview, call by call.

`tools.engine.gate.run_gate` (a pack started for one preview) and `tools.engine.warm_pack.WarmPack` (a pack
kept across previews) both hold their conversation through `Conversation`; what the conversation needs and
returns (`GateResult`, `PolicyInfo`, the phases, the pack's interpreter) lives here so neither of the two
modules imports the other's internals.

Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/plugin/analyzer_plugin.go
Source: https://github.com/pulumi/pulumi/blob/master/pkg/resource/deploy/step_generator.go (analyzeAll,
line 1469: before the step; AnalyzeResources, line 3495: after all steps)
Source: https://github.com/pulumi/pulumi-policy/blob/master/sdk/python/lib/pulumi_policy/policy.py
"""


from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Literal

import grpc
import yaml
from google.protobuf import empty_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from tools.engine.pack_process import DUMMY_ENGINE_ADDRESS, PackProcess
from tools.engine.policy_config import (
    TO_PROTO,
    EnforcementLevel,
    GateError,
    level_of,
    reconcile,
    with_today,
)
from tools.engine.records import Blocks, Enforcement, Violation
from tools.engine.view import (
    EngineResource,
    analyzer_options,
    program_view,
    provider_message,
    remediated,
)

Phase = Literal["preview", "update", "up", "analyze"]
PHASES: tuple[Phase, ...] = ("preview", "update", "up")  # the moments of a deployment
# `analyze`: `pulumi policy analyze`, the pack over a stack's existing state (tools/engine/analyze.py).
ALL_PHASES: tuple[Phase, ...] = (*PHASES, "analyze")

@dataclass(frozen=True)
class PolicyInfo:
    """One policy of the pack as GetAnalyzerInfo describes it, with the enforcement the gate applied."""

    name: str
    description: str
    kind: Literal["resource", "stack", "unknown"]
    default_enforcement: EnforcementLevel
    enforcement: EnforcementLevel


@dataclass(frozen=True)
class GateResult:
    """Everything the pack reported for one preview."""

    violations: tuple[Violation, ...]
    not_applicable: tuple[tuple[str, str], ...]  # (policy, reason), each pair once, in first-seen order
    pack_name: str
    policies: tuple[PolicyInfo, ...]
    remediated: tuple[tuple[str, str], ...] = ()  # (policy, urn): inputs a remediation changed before Analyze
    # Stack verdicts only the offline gate reaches: AnalyzeStack on what the program knows, where the engine
    # sent `{}` (first preview); each is in `violations` too. Empty outside a first preview.
    offline_only: tuple[Violation, ...] = ()
    emptied: tuple[str, ...] = ()  # URNs the engine sends to AnalyzeStack with no properties
    # At `up`: the URN whose mandatory resource violation cancelled the update (nothing after it was analyzed,
    # AnalyzeStack did not run), else "".
    cancelled_at: str = ""

    @property
    def mandatory(self) -> tuple[Violation, ...]:
        return tuple(v for v in self.violations if v.enforcement == "mandatory")

    @property
    def engine_mandatory(self) -> tuple[Violation, ...]:
        """The mandatory violations the real engine reports in this phase (not the offline-only ones)."""
        return tuple(v for v in self.mandatory if not v.offline_only)


# --------------------------------------------------------------------------------------------------
# The analyzer conversation
# --------------------------------------------------------------------------------------------------


def pack_python(pack_dir: Path) -> str:
    """The interpreter the CLI runs the pack with: `<pack>/venv` (PulumiPolicy.yaml `virtualenv`) when it
    exists, else this one.

    Source: https://www.pulumi.com/docs/iac/using-pulumi/crossguard/get-started/ (a Python pack's venv)
    """
    venv = pack_dir / "venv"
    for candidate in (venv / "bin" / "python", venv / "Scripts" / "python.exe"):
        if candidate.is_file():
            return str(candidate)
    return sys.executable


def _enforcement(value: int, policy: str) -> Enforcement:
    level = level_of(value, f"violation of {policy}")
    if level == "advisory":
        return "advisory"
    if level in ("mandatory", "remediate"):  # a violation left after remediation blocks
        return "mandatory"
    raise GateError(f"the pack reported a violation of {policy} at enforcement {level!r}, which blocks nothing")


@contextlib.contextmanager
def _rpc(pack: PackProcess, what: str) -> Iterator[None]:
    try:
        yield
    except grpc.RpcError as exc:
        code = exc.code() if hasattr(exc, "code") else None
        details = exc.details() if hasattr(exc, "details") else str(exc)
        pack.stop()
        raise GateError(f"policy pack failed during {what}: {code}: {details}{pack.stderr_tail()}") from exc


def _remaining(deadline: float, pack: PackProcess, what: str) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        pack.stop()
        raise GateError(f"the policy gate ran out of time before {what}; raise timeout_s.{pack.stderr_tail()}")
    return left


def check_pack(pack_dir: Path) -> None:
    manifest = pack_dir / "PulumiPolicy.yaml"
    try:
        data = yaml.safe_load(manifest.read_text(encoding="utf-8"))
    except OSError as exc:
        raise GateError(
            f"{manifest}: cannot read the policy pack manifest ({exc.strerror}); fix: pass the "
            "folder holding PulumiPolicy.yaml as pack_dir"
        ) from exc
    runtime = data.get("runtime") if isinstance(data, dict) else None
    name = runtime.get("name") if isinstance(runtime, dict) else runtime
    if name != "python":
        raise GateError(f"{manifest}: runtime is {name!r}; the offline gate runs Python policy packs only")


class Conversation:
    def __init__(self, stub: analyzer_pb2_grpc.AnalyzerStub, pack: PackProcess, deadline: float) -> None:
        self.stub = stub
        self.pack = pack
        self.deadline = deadline
        self.violations: list[Violation] = []
        self.not_applicable: dict[tuple[str, str], None] = {}
        self.remediated: list[tuple[str, str]] = []

    apply_remediations = True  # `pulumi policy analyze` reports them without applying (analyze_snapshot.go)

    def _remediations(self, req: analyzer_pb2.AnalyzeRequest, answer: Any) -> list[Any]:
        """The remediations the pack answered for `req` (`answer`: the Remediate call's future), applied to `req`.

        The engine runs them before Analyze and analyzes the remediated inputs; a remediation that comes back
        with a diagnostic changed nothing (it is reported as an advisory by `_record_remediations`).
        Source: pulumi/pulumi pkg/resource/deploy/step_generator.go lines 1438-1461
        """
        try:
            response = answer.result()
        except grpc.RpcError as exc:
            if exc.code() == grpc.StatusCode.UNIMPLEMENTED:
                return []  # an older pack: the engine skips it too (analyzer_plugin.go, Remediate)
            with _rpc(self.pack, f"Remediate({req.urn})"):
                raise
        for remediation in response.remediations:
            if not remediation.diagnostic and self.apply_remediations:
                req.properties.CopyFrom(remediation.properties)
        return list(response.remediations)

    def _record_remediations(self, urn: str, remediations: Sequence[Any]) -> bool:
        """Report what the remediations of resource `urn` did; True when one changed its inputs."""
        changed = False
        for remediation in remediations:
            if remediation.diagnostic:
                self.violations.append(Violation(policy=remediation.policyName, enforcement="advisory", urn=urn,
                                                 message=remediation.diagnostic, blocks="before-create"))
            else:
                self.remediated.append((remediation.policyName, urn))
                changed = True
        return changed

    def _optional(self, call: Any, request: Any, what: str) -> None:
        # Handshake and ConfigureStack are newer RPCs; the engine carries on when a pack lacks them.
        try:
            call(request, timeout=_remaining(self.deadline, self.pack, what))
        except grpc.RpcError as exc:
            if exc.code() != grpc.StatusCode.UNIMPLEMENTED:
                with _rpc(self.pack, what):
                    raise

    def _collect(self, response: analyzer_pb2.AnalyzeResponse, default_urn: str, blocks: Blocks,
                 stack_urns: Mapping[str, Any] | None = None) -> list[Violation]:
        """Record the response's diagnostics; `stack_urns`: AnalyzeStack's, attributed as the engine does."""
        found = []
        for d in response.diagnostics:
            urn = d.urn or default_urn
            if stack_urns is not None and d.urn not in stack_urns:
                # A stack diagnostic names its own URN when that is a resource of the stack, else the root
                # stack's (pulumi/pulumi pkg/resource/deploy/step_generator.go lines 3612-3614,
                # analyze_snapshot.go lines 119-130, resolveStackPolicyViolationURN).
                urn = default_urn
            found.append(Violation(policy=d.policyName, enforcement=_enforcement(d.enforcementLevel, d.policyName),
                                   urn=urn, message=d.message, blocks=blocks))
        self.violations.extend(found)
        for na in response.not_applicable:
            self.not_applicable[(na.policy_name, na.reason)] = None
        return found

    def _stack_request(self, items: Sequence[EngineResource], by_urn: Mapping[str, EngineResource]
                       ) -> analyzer_pb2.AnalyzeStackRequest:
        stack_req = analyzer_pb2.AnalyzeStackRequest()
        for item in items:
            res = item.res
            stack_item = stack_req.resources.add(
                type=res.type, urn=res.urn, name=res.name, properties=item.outputs, options=analyzer_options(res),
                parent=res.parent or "", dependencies=list(res.dependencies),
            )
            provider = provider_message(item, by_urn)
            if provider is not None:
                stack_item.provider.CopyFrom(provider)
            for prop, urns in res.property_dependencies.items():
                if urns:  # the engine skips properties without dependencies (analyzer_plugin.go AnalyzeStack)
                    stack_item.propertyDependencies[prop].urns.extend(urns)
        return stack_req

    def _offline_only(self, items: Sequence[EngineResource], by_urn: Mapping[str, EngineResource],
                      seen: Sequence[Violation], root: str, *,
                      known: Sequence[EngineResource] | None = None,
                      engine_request: analyzer_pb2.AnalyzeStackRequest | None = None) -> list[Violation]:
        """AnalyzeStack again on what the program knows: the verdicts the engine cannot reach in this preview.

        `known`: the stack as the first `pulumi up` leaves it (the program run again not as a dry run, every
        output known: `tools.preview` passes it), which is what the stack policies see after its steps; without
        it, what the preview's program knew (`program_view`), where an output of an emptied object is unknown.
        They bite at the first `pulumi up` only after every step, when the objects exist and the stack
        policies see them (deployment_executor.go line 410).
        """
        view = list(known) if known is not None else program_view(items)
        request = self._stack_request(view, {i.res.urn: i for i in view})
        if engine_request is not None and (request.SerializeToString(deterministic=True)
                                           == engine_request.SerializeToString(deterministic=True)):
            # The program view is the engine's view (`engine_request`, already answered): the pack would answer
            # the same diagnostics, all of them in `seen`, so there is nothing only the offline gate reaches.
            return []
        with _rpc(self.pack, "AnalyzeStack (program view)"):
            response = self.stub.AnalyzeStack(request, timeout=_remaining(self.deadline, self.pack, "AnalyzeStack"))
        reported = {(v.policy, v.urn, v.message) for v in seen}
        only = []
        for d in response.diagnostics:
            urn = d.urn if d.urn in by_urn else root
            if (d.policyName, urn, d.message) not in reported:
                only.append(Violation(policy=d.policyName, enforcement=_enforcement(d.enforcementLevel, d.policyName),
                                      urn=urn, message=d.message, blocks="after-update", offline_only=True))
        self.violations.extend(only)
        return only

    def run(
        self,
        items: Sequence[EngineResource],
        *,
        pack_dir: Path,
        configure: analyzer_pb2.AnalyzerStackConfigureRequest,
        policy_config: Mapping[str, Any] | None,
        config_source: str,
        today: date | None,
        stack_blocks: Blocks = "after-update",
        dry_run: bool = True,
        root_stack_urn: str = "",
        known: Sequence[EngineResource] | None = None,
        offline_only: bool = True,
    ) -> GateResult:
        stub, pack, deadline = self.stub, self.pack, self.deadline
        self._optional(
            stub.Handshake,
            analyzer_pb2.AnalyzerHandshakeRequest(
                engine_address=DUMMY_ENGINE_ADDRESS, root_directory=str(pack_dir), program_directory=str(pack_dir)
            ),
            "Handshake",
        )
        self._optional(stub.ConfigureStack, configure, "ConfigureStack")
        with _rpc(pack, "GetAnalyzerInfo"):
            info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=_remaining(deadline, pack, "GetAnalyzerInfo"))

        baseline, effective = reconcile(info, policy_config, config_source)
        if today is not None:
            effective = with_today(info, effective, today)
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, cfg in effective.items():
            entry = request.policyConfig[name]
            entry.enforcementLevel = TO_PROTO[cfg.enforcement or "advisory"]  # type: ignore[assignment]
            if cfg.properties:
                entry.properties.update(cfg.properties)
        with _rpc(pack, "Configure"):
            stub.Configure(request, timeout=_remaining(deadline, pack, "Configure"))

        by_urn = {item.res.urn: item for item in items}
        root = next((i.res.urn for i in items if i.res.type == "pulumi:pulumi:Stack" and not i.res.parent),
                    root_stack_urn)
        # Resource policies: each resource before its step, in registration order; remediations first, and
        # analysis on the remediated inputs (step_generator.go lines 1402-1469: "first we perform
        # remediations, and *then* we do analysis").
        final: dict[str, EngineResource] = {}
        cancelled_at = ""
        analyzed = [item for item in items if item.analyzed]
        requests = []
        for item in analyzed:
            res = item.res
            req = analyzer_pb2.AnalyzeRequest(type=res.type, urn=res.urn, name=res.name, properties=item.inputs,
                                              options=analyzer_options(res))
            provider = provider_message(item, by_urn)
            if provider is not None:
                req.provider.CopyFrom(provider)
            requests.append(req)
        # The engine asks one resource at a time because it learns of them one at a time; here every resource
        # is known up front, so no request waits for the previous answer: every Remediate goes out at once and
        # each Analyze as soon as its resource's remediations are back, and the pack (a gRPC server with a
        # thread pool) works through them while this process builds and reads messages. What is reported, and
        # in what order, stays the one-at-a-time conversation's: answers are read in registration order, and at
        # `up` nothing after the cancelling resource counts.
        remediating = [stub.Remediate.future(req, timeout=_remaining(deadline, pack, f"Remediate({req.urn})"))
                       for req in requests]
        analyzing = []
        for req, answer in zip(requests, remediating, strict=True):
            remediations = self._remediations(req, answer)
            analyzing.append((remediations, stub.Analyze.future(
                req, timeout=_remaining(deadline, pack, f"Analyze({req.urn})"))))
        for item, req, (remediations, answer) in zip(analyzed, requests, analyzing, strict=True):
            res = item.res
            if self._record_remediations(res.urn, remediations):
                final[res.urn] = remediated(item, req.properties)
            with _rpc(pack, f"Analyze({res.urn})"):
                response = answer.result()
            found = self._collect(response, res.urn, "before-create")
            if not dry_run and any(v.enforcement == "mandatory" for v in found):
                # At `up` a mandatory resource violation makes the resource invalid and the step generator
                # bails: the run is cancelled, later resources are never analyzed and AnalyzeStack does not
                # run (analyze_snapshot.go lines 78-81, step_generator.go lines 1476-1477,
                # deployment_executor.go lines 309-315 and 403-410). In a preview it only marks an error.
                cancelled_at = res.urn
                for _, later in analyzing:
                    later.cancel()
                break
        items = [final.get(item.res.urn, item) for item in items]

        offline: list[Violation] = []
        if not cancelled_at:
            # Stack policies: every resource's final state, once all steps are done.
            stack_request = self._stack_request(items, by_urn)
            with _rpc(pack, "AnalyzeStack"):
                response = stub.AnalyzeStack(stack_request, timeout=_remaining(deadline, pack, "AnalyzeStack"))
            seen = self._collect(response, root, stack_blocks, stack_urns=by_urn)
            # `offline_only` False: the caller drops those verdicts (the preview a CLI `pulumi up` runs first,
            # whose stack verdicts the update itself reaches after its steps), so the pack is not asked.
            if offline_only and any(item.emptied for item in items):
                offline = self._offline_only(items, by_urn, seen, root, known=known, engine_request=stack_request)

        kinds: dict[int, Literal["resource", "stack", "unknown"]] = {
            analyzer_pb2.POLICY_TYPE_RESOURCE: "resource",
            analyzer_pb2.POLICY_TYPE_STACK: "stack",
        }
        policies = tuple(
            PolicyInfo(
                name=p.name,
                description=p.description,
                kind=kinds.get(p.policy_type, "unknown"),
                default_enforcement=baseline[p.name].enforcement or "advisory",
                enforcement=effective[p.name].enforcement or "advisory",
            )
            for p in info.policies
        )
        return GateResult(
            violations=tuple(self.violations),
            not_applicable=tuple(self.not_applicable),
            pack_name=info.name,
            policies=policies,
            remediated=tuple(self.remediated),
            offline_only=tuple(offline),
            emptied=tuple(item.res.urn for item in items if item.emptied),
            cancelled_at=cancelled_at,
        )

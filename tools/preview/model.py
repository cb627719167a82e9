"""The preview's data, shared by the command and its rendering: a stack's config, the recording, the gate's report."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tools.engine.gate import Phase
from tools.engine.records import RecordedResource, Violation

if TYPE_CHECKING:
    from tools.engine.coverage.unjudged import Unjudged


@dataclass(frozen=True)
class StackConfig:
    """A stack's config as the CLI hands it to a program: `project:key` -> string (objects as JSON)."""

    path: Path
    values: dict[str, str]
    secret_keys: tuple[str, ...]
    parsed: dict[str, Any]  # `project:key` -> the YAML value, for reporting
    # Other stacks' outputs (`--stack-outputs NAME=FILE`): what the program's StackReferences read, by NAME.
    other_stacks: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class LogEntry:
    severity: str
    message: str
    urn: str


@dataclass(frozen=True)
class Recording:
    project: str
    stack: str
    resources: tuple[RecordedResource, ...]
    stack_outputs: dict[str, Any]
    logs: tuple[LogEntry, ...]
    phase: Phase = "preview"
    tags: dict[str, str] = field(default_factory=dict)
    # `--phase update` of a changed stack: {"clusterReplaced": bool, "changed": [names]}; empty: unchanged.
    change: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class GateReport:
    ran: bool
    detail: str
    violations: tuple[Violation, ...] = ()
    pack: str = ""
    policies: int = 0
    not_applicable: tuple[tuple[str, str], ...] = ()
    cancelled_at: str = ""  # `up`: the resource whose mandatory violation cancelled the update
    stopped_by_preview: bool = False  # `up` (CLI): the preview it runs first failed; nothing was created
    # tools.apiserver's report (`ApiServerReport.as_json`): what the API server and Helm would say of every object
    # and release; its rejections and advisories are in `violations` too (policy `apiserver-<rule>`).
    api_server: dict[str, Any] | None = None
    # Components whose children the gate did not build (tools/engine/coverage/unjudged.py); their `<policy>-pending`
    # advisories are in `violations` too.
    unjudged: tuple[Unjudged, ...] = ()

    @property
    def offline_only(self) -> dict[str, dict[str, Any]]:
        """Per policy, the verdicts only the offline gate reaches in this phase (module `offline_only_by_policy`)."""
        return offline_only_by_policy(self.violations)

    def as_json(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "detail": self.detail,
            "name": self.pack,
            "policies": self.policies,
            "notApplicable": [{"policy": p, "reason": r} for p, r in self.not_applicable],
            "offlineOnly": [{"policy": p, **entry} for p, entry in sorted(self.offline_only.items())],
            "cancelledAt": self.cancelled_at or None,
            "stoppedByPreview": self.stopped_by_preview,
            "unjudged": [u.as_json() for u in self.unjudged],
        }


# What a program logs, as a warning, instead of refusing a `pulumi up` it knows would be refused in a real
# account, when the run is in no real account (components/deploy_checks.py: the offline gate's mock account).
# The preview reports it once, prominently, and goes on to judge the update.
REAL_UP_REFUSED = "a real `pulumi up` of this stack file would be refused: "


def real_up_refusals(logs: Sequence[LogEntry]) -> list[str]:
    """The refusals a real `pulumi up` would stop at, each the program's whole message (file, key, value, fix)."""
    return [e.message.removeprefix(REAL_UP_REFUSED) for e in logs
            if e.severity == "warning" and e.message.startswith(REAL_UP_REFUSED)]


PENDING_SUFFIX = "-pending"  # the pack's advisory twin that says what a stack policy waits on (gpu_guard.base)


def offline_only_by_policy(violations: Sequence[Violation]) -> dict[str, dict[str, Any]]:
    """Per stack policy: what it waited on in the real engine's view, and what the offline gate found instead.

    A policy is listed when its `<policy>-pending` advisory fired (it waited on Kubernetes objects the
    engine sends as `{}`) or when it has an offline-only verdict; `verdicts` empty means the offline gate
    judged those objects and found nothing.
    """
    out: dict[str, dict[str, Any]] = {}
    for v in violations:
        if v.policy.endswith(PENDING_SUFFIX):
            out.setdefault(v.policy[: -len(PENDING_SUFFIX)], {"waiting": "", "verdicts": []})["waiting"] = v.message
    for v in violations:
        if v.offline_only:
            base = v.policy.removesuffix("-caveats")
            out.setdefault(base, {"waiting": "", "verdicts": []})["verdicts"].append(
                {"policy": v.policy, "enforcement": v.enforcement, "urn": v.urn, "message": v.message})
    return out

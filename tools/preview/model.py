"""The preview's data, shared by the command and its rendering: a stack's config, the recording, the gate's report."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tools.engine.gate import Phase
from tools.engine.records import RecordedResource, Violation


@dataclass(frozen=True)
class StackConfig:
    """A stack's config as the CLI hands it to a program: `project:key` -> string (objects as JSON)."""

    path: Path
    values: dict[str, str]
    secret_keys: tuple[str, ...]
    parsed: dict[str, Any]  # `project:key` -> the YAML value, for reporting


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


@dataclass(frozen=True)
class GateReport:
    ran: bool
    detail: str
    violations: tuple[Violation, ...] = ()
    pack: str = ""
    policies: int = 0
    not_applicable: tuple[tuple[str, str], ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "ran": self.ran,
            "detail": self.detail,
            "name": self.pack,
            "policies": self.policies,
            "notApplicable": [{"policy": p, "reason": r} for p, r in self.not_applicable],
        }

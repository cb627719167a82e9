"""One thing the API server or Helm would refuse (or that the offline check could not decide)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Level = Literal["rejected", "advisory", "skipped"]


@dataclass(frozen=True)
class Finding:
    """One reason the API server or Helm would not take what was rendered, or an advisory the check could not decide.

    `rule`: kubernetes-schema | crd-schema | crd-cel | unknown-field | helm-values | no-schema | empty-render
    | cel-not-evaluated | cel-transition-skipped | not-checked. `level` "rejected": `pulumi up` fails at that
    object's create; "advisory": the API server warns (an unknown field under fieldValidation=Warn) or the offline
    check could not decide; "skipped": a rule the API server does not run in this phase either (a transition
    rule on create).
    """

    rule: str
    object: str  # kind/namespace/name, or the Helm release's name
    path: str  # JSON path inside the object / values
    message: str
    fix: str = ""
    level: Level = "rejected"
    urn: str = ""

    def __str__(self) -> str:
        return f"{self.rule}: {self.object}: {self.path or '<root>'}: {self.message}"

    def line(self) -> str:
        """The one line a user reads: object, field, message, fix."""
        fix = f"; fix: {self.fix}" if self.fix else ""
        return f"{self.object}: {self.path or '<root>'}: {self.message}{fix}"

    def as_json(self) -> dict[str, str]:
        return {"rule": self.rule, "level": self.level, "object": self.object, "path": self.path,
                "message": self.message, "fix": self.fix, "urn": self.urn}

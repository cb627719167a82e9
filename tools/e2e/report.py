"""The run's report: one row per step (step, time, result), as a Markdown table for the run summary and as
JSON; on failure the step that failed and what the sweeper removed."""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

Result = Literal["passed", "failed", "skipped"]


@dataclass
class Row:
    step: str
    seconds: float
    result: Result
    detail: str = ""


@dataclass
class Report:
    run_id: str
    rows: list[Row] = field(default_factory=list)
    estimate: dict[str, Any] = field(default_factory=dict)
    sweep: dict[str, Any] = field(default_factory=dict)

    @property
    def failed_step(self) -> str | None:
        return next((r.step for r in self.rows if r.result == "failed"), None)

    @property
    def ok(self) -> bool:
        return self.failed_step is None and bool(self.rows)

    def as_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "ok": self.ok, "failed_step": self.failed_step,
                "steps": [asdict(r) for r in self.rows], "estimate": self.estimate, "sweep": self.sweep}

    def markdown(self) -> str:
        lines = [f"## e2e run {self.run_id}: {'passed' if self.ok else 'FAILED'}", "",
                 "| step | time | result | detail |", "|---|---|---|---|"]
        for row in self.rows:
            detail = row.detail.replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {row.step} | {_duration(row.seconds)} | {row.result} | {detail} |")
        if self.failed_step is not None:
            lines += ["", f"Failed step: **{self.failed_step}**."]
        if self.sweep:
            removed = self.sweep.get("removed", [])
            lines += ["", f"The sweeper removed {len(removed)} resource(s) after destroy"
                      + (":" if removed else ".")]
            lines += [f"- {r}" for r in removed]
            for key, title in (("left", "Still tagged with the run (delete by hand)"),
                               ("failed", "Sweeper errors"), ("scheduled", "KMS keys scheduled for deletion")):
                if self.sweep.get(key):
                    lines += ["", f"{title}:", *[f"- {x}" for x in self.sweep[key]]]
        return "\n".join(lines) + "\n"

    def write(self, out: Path) -> Path:
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.json").write_text(json.dumps(self.as_dict(), indent=2) + "\n", encoding="utf-8")
        (out / "report.md").write_text(self.markdown(), encoding="utf-8")
        summary = os.environ.get("GITHUB_STEP_SUMMARY")
        if summary:
            with Path(summary).open("a", encoding="utf-8") as handle:
                handle.write(self.markdown())
        return out / "report.json"


def _duration(seconds: float) -> str:
    minutes, secs = divmod(round(seconds), 60)
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"

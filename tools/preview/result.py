"""The one result document of an offline preview (issue 56): what `--json` prints, `--out` writes as
resources.json, and what the terminal, summary.md, `tools.ci_gate` and the pull-request comment render.

Its schema ships beside it (`result.schema.json`, `SCHEMA_VERSION`); a test validates every document the tests
produce against it. The top level:

- `schemaVersion`, `verdict` (`VERDICTS`), `exitCode` (the command's exit status), `counts`;
- `stack`, `project`, `phase`, `policyConfig` (the file the verdict was judged with, and why);
- `findings`: each mandatory or advisory fact once (a policy's stack and resource halves folded,
  `tools.preview.findings.merge_twins`), with its engine-phase label, its stack key where one sets it, its object,
  a one-line message and the fix;
- `pending`: one entry per policy that waits, with the objects it waits for;
- `unjudged`: one entry per component whose children the gate did not build, its policies listed once
  (their per-policy `-pending` advisories are not repeated anywhere);
- `resources`, and the views the renderers share (`gpuPools`, `services`, `helmReleases`, `apiServer`, ...).

Sections added later (a cost estimate) go in `extra` of `build`: one top-level key each, declared in the schema.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools.engine.coverage.unjudged import is_unjudged_advisory
from tools.engine.records import Violation
from tools.engine.view import emulated_children, not_seen_offline
from tools.preview import findings as found
from tools.preview.model import PENDING_SUFFIX, GateReport, Recording, StackConfig, real_up_refusals

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("result.schema.json")

# Every verdict the terminal states, in the order they are decided (`verdict`).
PASS = "PASS"
PASS_UNJUDGED = "PASS_UNJUDGED"  # no mandatory finding in what the gate judged; some components it did not build
FAIL = "FAIL"
STACK_FILE_REFUSED = "STACK_FILE_REFUSED"  # no mandatory finding, but a real `pulumi up` refuses the stack file
NOT_JUDGED = "NOT_JUDGED"  # no policy pack ran
REFUSED = "REFUSED"  # the stack file, the program or an argument was rejected: nothing was judged (exit 2)
VERDICTS = (PASS, PASS_UNJUDGED, FAIL, STACK_FILE_REFUSED, NOT_JUDGED, REFUSED)

EXIT_OK, EXIT_MANDATORY, EXIT_REJECTED = 0, 1, 2

_FIX = re.compile(r"(?:^|(?<=[.;)]) )(?:Fix|fix): ")


@dataclass(frozen=True)
class PolicyConfigUse:
    """The policy config a run judged with: `path` (as the user would write it) or None, and why (`how`)."""

    path: str | None
    how: str  # "stack default" | "--policy-config" | "none: --policy-config none" | "none: no <file>"

    def as_json(self) -> dict[str, Any]:
        return {"path": self.path, "how": self.how}



def split_fix(text: str) -> tuple[str, str | None]:
    """A headline's finding and its fix: `... Fix: encryptionConfig {...}.` -> (`...`, `encryptionConfig {...}`)."""
    matches = list(_FIX.finditer(text))  # the last "Fix:" of the headline: a finding may quote another's
    if not matches:
        return text, None
    last = matches[-1]
    return text[: last.start()].rstrip().rstrip(";"), text[last.end():].strip().rstrip(".") or None


def _object(urn: str, keys: found.StackKeys) -> dict[str, str]:
    res = keys.by_urn.get(urn)
    if res is not None:
        return {"urn": urn, "type": res.type, "name": res.name}
    parts = urn.split("::")
    return {"urn": urn, "type": parts[-2].rsplit("$", 1)[-1] if len(parts) > 2 else "", "name": parts[-1]}


def finding(f: found.Finding, keys: found.StackKeys) -> dict[str, Any]:
    """One finding of the document: what the terminal's line, summary.md's row and the comment's row show."""
    v = f.violation
    message, fix = split_fix(found.headline(v))
    return {
        "policy": v.policy,
        "twin": f.twin.policy if f.twin is not None else None,
        "level": v.enforcement,
        "label": f.blocks,
        "offlineOnly": f.offline_only,
        "stackKey": keys.key(v),
        "object": _object(v.urn, keys),
        "message": message,
        "fix": fix,
        "source": found.source(v) or None,
        "description": found.description(v) or None,  # the policy's own, the engine's first line (--verbose)
    }


def _pending(report: GateReport, pending: Sequence[Violation]) -> list[dict[str, Any]]:
    """One entry per policy that waits: the objects it waits for, and its reasons, each once."""
    groups: dict[str, dict[str, Any]] = {}
    for v in pending:
        base = v.policy.removesuffix(PENDING_SUFFIX)
        entry = groups.setdefault(base, {"policy": base, "objects": set(), "reasons": []})
        entry["objects"].add(v.urn)
        reason = found.headline(v)
        if reason not in entry["reasons"]:
            entry["reasons"].append(reason)
    offline = report.offline_only
    return [{"policy": p, "objects": sorted(e["objects"]), "reasons": e["reasons"],
             "offlineFindings": len((offline.get(p) or {}).get("verdicts") or [])}
            for p, e in sorted(groups.items())]


def tally(report: GateReport) -> tuple[list[found.Finding], list[Violation]]:
    """(findings, pending advisories): each finding once, mandatory first; the pending advisories apart, less
    those of unjudged components (their `unjudged` entry names them)."""
    ordered = sorted(report.violations, key=lambda v: (v.enforcement != "mandatory", v.policy, v.urn, v.message))
    merged = found.merge_twins(ordered)
    shown = [f for f in merged if not found.is_pending(f.violation)]
    pending = [f.violation for f in merged if found.is_pending(f.violation)
               and not is_unjudged_advisory(f.violation, report.unjudged)]
    return shown, pending


def counts(report: GateReport) -> dict[str, int]:
    """The document's `counts` of a report: findings (twins once), pending policies, unjudged components."""
    shown, pending = tally(report)
    mandatory = sum(1 for f in shown if f.violation.enforcement == "mandatory")
    return {"mandatory": mandatory, "advisory": len(shown) - mandatory,
            "pending": len({v.policy for v in pending}), "unjudged": len(report.unjudged)}


def verdict_of(report: GateReport, mandatory: int, refused: bool) -> tuple[str, int]:
    if not report.ran:
        return NOT_JUDGED, EXIT_OK
    if mandatory:
        return FAIL, EXIT_MANDATORY
    if refused:
        return STACK_FILE_REFUSED, EXIT_OK
    if report.unjudged:
        return PASS_UNJUDGED, EXIT_OK
    return PASS, EXIT_OK


def build(recording: Recording, report: GateReport, config: StackConfig, policy_config: PolicyConfigUse, *,
          extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The result document of one run; the same input gives the same document (every list sorted)."""
    from tools.preview import views  # noqa: PLC0415 -- the pack's inventory loads only for a judged run

    keys = found.StackKeys(config.parsed, recording.resources, recording.project)
    shown, pending = tally(report)
    findings = [finding(f, keys) for f in shown]
    mandatory = sum(1 for f in findings if f["level"] == "mandatory")
    refused = real_up_refusals(recording.logs)
    verdict, exit_code = verdict_of(report, mandatory, bool(refused))
    pending_entries = _pending(report, pending)
    named = {u.urn for u in report.unjudged}
    doc: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION,
        "verdict": verdict,
        "exitCode": exit_code,
        "counts": {"mandatory": mandatory, "advisory": len(findings) - mandatory, "pending": len(pending_entries),
                   "unjudged": len(report.unjudged)},
        "stack": recording.stack,
        "project": recording.project,
        "phase": recording.phase,
        "stackFile": config.path.name,
        "policyConfig": policy_config.as_json(),
        "policyPack": {"ran": report.ran, "name": report.pack or None, "policies": report.policies,
                       "detail": report.detail,
                       "notApplicable": [{"policy": p, "reason": r} for p, r in report.not_applicable],
                       "cancelledAt": report.cancelled_at or None, "stoppedByPreview": report.stopped_by_preview},
        "findings": findings,
        "pending": pending_entries,
        "unjudged": [{"urn": u.urn, "type": u.type, "name": u.name, "why": u.why, "basis": u.basis,
                      "policies": list(u.policies)} for u in report.unjudged],
        "notSeenOffline": [g for g in not_seen_offline(recording.resources) if g["urn"] not in named],
        "realUpRefused": refused,
        "change": recording.change or None,
        "apiServer": report.api_server,
        "emulatedChildren": emulated_children(recording.resources),
        **views.views(recording),
        "resources": [r.as_json() for r in sorted(recording.resources, key=lambda r: r.urn)],
    }
    for key, section in (extra or {}).items():
        if key in doc:
            raise ValueError(f"section {key!r} is already in the result document")
        doc[key] = section
    return doc


_PROBLEM_KEY = re.compile(r"^(?:\s*- )?(?:[^:\s]+\.ya?ml: )?(?P<key>[A-Za-z][\w.\[\]-]*(?::[\w.\[\]-]+)?) = ")


def problems_of(message: str) -> list[dict[str, Any]]:
    """A rejection's problems, one per line, each with the stack key it names (None where it names none)."""
    lines = [line for line in message.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].rstrip().endswith(":") and all(line.lstrip().startswith("- ")
                                                                   for line in lines[1:]):
        lines = lines[1:]  # "<file>: the stack configuration has N problems; nothing was created:" heads a list
    problems = []
    for line in lines:
        match = _PROBLEM_KEY.match(line)
        problems.append({"key": match["key"] if match else None, "message": line.strip().removeprefix("- ")})
    return problems


def refused(stack: str, phase: str, message: str, policy_config: PolicyConfigUse | None) -> dict[str, Any]:
    """The document of a run that judged nothing: the stack file, the program or an argument was rejected."""
    return {
        "schemaVersion": SCHEMA_VERSION,
        "verdict": REFUSED,
        "exitCode": EXIT_REJECTED,
        "counts": {"mandatory": 0, "advisory": 0, "pending": 0, "unjudged": 0},
        "stack": stack,
        "phase": phase,
        "policyConfig": (policy_config or PolicyConfigUse(None, "none: not read")).as_json(),
        "problems": problems_of(message),
        "findings": [],
        "pending": [],
        "unjudged": [],
        "resources": [],
    }

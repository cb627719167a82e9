"""`python -m tools.saved_plan seal|verify`: prod's update plan, reviewed as it will be applied.

`deploy.yml` previews prod after a merge with `pulumi preview --save-plan` (pulumi/actions' `plan` input; the
Automation API passes it as `--save-plan` to a preview and as `--plan` to an update: pulumi/pulumi v3.206.0
`sdk/nodejs/automation/stack.ts` lines 411-412 and 257-258, after `up --yes --skip-preview` at 197-198; v3.206.0 is
the version pulumi/actions v7.0.0 bundles, its `yarn.lock` lines 1207-1208), as the read-only role of the
`preview-prod-main` environment. `up-prod`, behind prod's required reviewers, applies that plan with
`pulumi up --plan` (<https://www.pulumi.com/docs/iac/operations/stack-management/update-plans/>), which holds the
update to the plan's constraints, not to the plan exactly: unknown planned values accept any value and a weaker
operation may stand for a planned one (pulumi/pulumi `pkg/resource/deploy/plan.go` lines 38-43 at v3.259.0).

- `seal` (the preview job) refuses a plan that holds a secret in plaintext, writes the plan's operations as Markdown
  (the run summary the reviewer reads before approving) and a manifest: the run, its attempt, the commit, the stack,
  the stack's last update version (`pulumi stack history --json --page-size 1`, read BEFORE the preview: an update
  that lands during or after the preview then moves the version past the sealed one, and `verify` refuses the
  plan; read after, it would seal the newer version for a plan computed against the older) and the plan's sha256.
  It prints the sha256, which the job passes to `up-prod` as a job output (GitHub keeps it apart from the artifact).
- `verify` (`up-prod`, after the approval, before `pulumi up --plan`) applies the plan only when it is the one that
  job output names, sealed in this run for this commit and stack, and the stack has had no update since: a plan is
  not all-or-nothing, and an `up` that failed partway (or any other update) changed the state the plan was computed
  against. Then the way on is a new preview and a new approval: "Re-run all jobs" (docs/ci-cd.md, "When a saved
  plan fails").

The plan file is Pulumi's `DeploymentPlanV1` (pulumi/pulumi `sdk/go/common/apitype`; serialized by
`pkg/resource/stack/plan.go` `SerializePlan`): `manifest`, `config`, and `resourcePlans` by URN, each with `steps`
(the operations) and a `goal` whose property values mark a secret with the signature key below and carry it as
`ciphertext` (the stack's secrets provider) unless the plan was written with secrets shown (`plaintext`).
Standard library only: the cloud jobs install the program's runtime, not the development tools.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tools import plan_values
from tools.plan_values import SIG_KEY, SIG_SECRET  # a secret's signature (pulumi/pulumi sig.go)

# Strings that are credentials whatever property holds them.
# Source: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html#identifiers-unique-ids
# (AKIA: access key, ASIA: temporary access key); RFC 7468 section 2 (PEM labels).
SECRET_SHAPES = (
    ("an AWS access key id", re.compile(r"\b(?:AKIA|ASIA)[A-Z0-9]{16}\b")),
    ("a PEM private key", re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")),
)

# Operations a reviewer must look at one by one (pulumi/pulumi sdk/go/common/apitype OpType values).
ATTENTION = ("delete", "replace", "create-replacement", "delete-replaced", "discard", "discard-replaced",
             "remove-pending-replace", "import", "import-replacement", "update")
# `pulumi stack history --json` `result` of an update that has not finished (stack_version).
IN_PROGRESS = "in-progress"
MANIFEST = "manifest.json"
PLAN = "plan.json"
SUMMARY = "plan.md"


class PlanRefused(Exception):
    """The plan must not be published or applied; the message says why and what to do."""


@dataclass(frozen=True)
class Seal:
    """Where a plan comes from: checked again before it is applied."""

    run_id: str
    run_attempt: str
    sha: str
    stack: str
    stack_version: int
    plan_sha256: str
    state_sha256: str = ""  # the `pulumi stack export` the summary's old values come from

    def as_json(self) -> dict[str, Any]:
        sealed = {"runId": self.run_id, "runAttempt": self.run_attempt, "sha": self.sha, "stack": self.stack,
                  "stackVersion": self.stack_version, "planSha256": self.plan_sha256}
        return sealed | ({"stateSha256": self.state_sha256} if self.state_sha256 else {})

    @classmethod
    def from_json(cls, data: dict[str, Any], where: str) -> Seal:
        try:
            return cls(str(data["runId"]), str(data["runAttempt"]), str(data["sha"]), str(data["stack"]),
                       int(data["stackVersion"]), str(data["planSha256"]), str(data.get("stateSha256", "")))
        except (KeyError, TypeError, ValueError) as err:
            raise PlanRefused(f"{where}: not a plan manifest ({err!r} missing or wrong); fix: re-run all jobs so the "
                              "preview job seals a new plan") from err


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    yield path, value
    if isinstance(value, dict):
        for key, child in value.items():
            yield from _walk(child, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            yield from _walk(child, f"{path}[{index}]")


def plaintext_secrets(plan: dict[str, Any]) -> list[str]:
    """Where the plan holds a secret in the clear: a secret value with `plaintext`, or a credential-shaped string."""
    found: list[str] = []
    for path, value in _walk(plan, ""):
        if isinstance(value, dict) and value.get(SIG_KEY) == SIG_SECRET and "plaintext" in value:
            found.append(f"{path}: a secret value written in plaintext")
        elif isinstance(value, str):
            found.extend(f"{path}: {what}" for what, shape in SECRET_SHAPES if shape.search(value))
    return found


def _resource_plans(plan: dict[str, Any], where: str) -> dict[str, Any]:
    plans = plan.get("resourcePlans")
    if not isinstance(plan.get("manifest"), dict) or not isinstance(plans, dict):
        raise PlanRefused(f"{where}: not a Pulumi update plan (no manifest or resourcePlans); fix: write it with "
                          "`pulumi preview --save-plan` (pulumi/actions `plan:` on a preview)")
    return plans


def _urn_parts(urn: str) -> tuple[str, str]:
    # urn:pulumi:<stack>::<project>::<qualified type>::<name>
    parts = urn.split("::")
    return (parts[-2].rsplit("$", 1)[-1], parts[-1]) if len(parts) >= 4 else ("?", urn)


def summary(plan: dict[str, Any], stack: str, where: str = PLAN) -> str:
    """The plan's operations as Markdown: counts, then each resource whose operation is not `same`."""
    plans = _resource_plans(plan, where)
    counts: Counter[str] = Counter()
    rows: list[tuple[int, str, str, str]] = []
    for urn, resource_plan in plans.items():
        steps = [str(s) for s in (resource_plan or {}).get("steps") or []] or ["same"]
        op = "+".join(steps)
        counts[op] += 1
        if op != "same":
            kind, name = _urn_parts(urn)
            rank = min((ATTENTION.index(s) for s in steps if s in ATTENTION), default=len(ATTENTION))
            rows.append((rank, op, kind, name))
    lines = [f"## The update plan of `{stack}`: what `pulumi up --plan` may do", "",
             "| operation | resources |", "|---|---|"]
    lines += [f"| {op} | {n} |" for op, n in sorted(counts.items())]
    lines += ["", "`pulumi up --plan` holds the update to these operations as constraints: an operation the plan does "
              "not list fails it at that resource, but a planned replace may apply as an update or no change, an "
              "update as no change, and a value unknown at preview accepts any value (pulumi/pulumi "
              "`pkg/resource/deploy/plan.go` lines 38-43 at v3.259.0; docs/ci-cd.md, \"What a saved plan "
              "guarantees\").", ""]
    if rows:
        lines += ["| operation | type | name |", "|---|---|---|"]
        lines += [f"| **{op}** | `{kind}` | `{name}` |" for _, op, kind, name in sorted(rows)]
    else:
        lines.append("Nothing changes.")
    return "\n".join(lines) + "\n"


def stack_version(history: Any, where: str) -> int:
    """The version of the stack's last update from `pulumi stack history --json --page-size 1` (0: never updated).

    An update still running (`result` "in-progress": pulumi/pulumi `pkg/backend/updates.go` `InProgressResult`,
    the `result` of `updateInfoJSON` in `pkg/cmd/pulumi/stack/stack_history.go`, both at tag v3.259.0) is refused:
    the state it leaves is not the one read now.
    """
    if history in (None, []):
        return 0
    if not isinstance(history, list) or not isinstance(history[0], dict) or "version" not in history[0]:
        raise PlanRefused(f"{where}: not the output of `pulumi stack history --json` (a list of updates with a "
                          "`version`)")
    newest = history[0]
    if newest.get("result") == IN_PROGRESS:
        raise PlanRefused(f"{where}: update {newest['version']} of the stack is still running (result "
                          f"{IN_PROGRESS!r}), so its state is not settled; fix: let it finish, then Re-run all jobs "
                          "of this run (a new preview, a new plan, a new approval)")
    return int(newest["version"])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as err:
        raise PlanRefused(f"{path}: missing") from err
    except json.JSONDecodeError as err:
        raise PlanRefused(f"{path}: not JSON ({err})") from err


def seal(plan_path: Path, history_path: Path, out: Path, *, stack: str, run_id: str, run_attempt: str,
         sha: str, state_path: Path | None = None) -> Seal:
    """Refuse a plan with a plaintext secret; else write plan.json, plan.md and manifest.json into `out`. With
    `state_path` (`pulumi stack export`, read before the preview), plan.md lists every changed input's old and new
    value, secrets masked, and the manifest seals the state's sha256."""
    plan = _read_json(plan_path)
    if not isinstance(plan, dict):
        raise PlanRefused(f"{plan_path}: not a Pulumi update plan (not an object)")
    leaks = plaintext_secrets(plan)
    if leaks:
        raise PlanRefused(f"{plan_path}: {len(leaks)} secret(s) in the clear, so the plan is neither published nor "
                          "uploaded:\n" + "\n".join(f"  {leak}" for leak in leaks)
                          + "\nfix: mark the value secret in the program (pulumi.Output.secret, additionalSecret"
                          "Outputs) or keep it out of resource inputs; never run the preview with --show-secrets")
    text = summary(plan, stack, str(plan_path))
    state_digest = ""
    if state_path is not None:
        try:
            rows = plan_values.changes(plan, _read_json(state_path))
        except ValueError as err:
            raise PlanRefused(f"{state_path}: {err}; fix: write it with `pulumi stack export --stack {stack}` "
                              "before the preview") from err
        text += ("\n### Every changed input, before and after (secrets masked; the state exported before the "
                 "preview)\n\n" + plan_values.markdown(rows))
        state_digest = sha256(state_path)
    version = stack_version(_read_json(history_path), str(history_path))
    out.mkdir(parents=True, exist_ok=True)
    (out / PLAN).write_bytes(plan_path.read_bytes())
    (out / SUMMARY).write_text(text, encoding="utf-8")
    sealed = Seal(run_id, run_attempt, sha, stack, version, sha256(out / PLAN), state_digest)
    (out / MANIFEST).write_text(json.dumps(sealed.as_json(), indent=2) + "\n", encoding="utf-8")
    return sealed


def verify(directory: Path, history_path: Path, *, stack: str, run_id: str, sha: str, plan_sha256: str) -> Seal:
    """The sealed plan in `directory` may be applied now; PlanRefused says why not and what to do."""
    sealed = Seal.from_json(_read_json(directory / MANIFEST), str(directory / MANIFEST))
    anew = ("fix: Re-run all jobs of this run (a new preview, a new plan, a new approval); never re-run up-prod "
            "alone after it changed the stack")
    if not plan_sha256:
        raise PlanRefused("the preview job passed no plan sha256 (job output `plan-sha256`); " + anew)
    actual = sha256(directory / PLAN)
    if actual != plan_sha256 or sealed.plan_sha256 != plan_sha256:
        raise PlanRefused(f"{directory / PLAN}: sha256 {actual}, but the preview job sealed {plan_sha256}: not the "
                          "plan the reviewers were shown; " + anew)
    if sealed.run_id != run_id:
        raise PlanRefused(f"the plan was sealed by run {sealed.run_id}, this is run {run_id}: a plan is applied only "
                          "in the run that previewed it; " + anew)
    if sealed.sha != sha:
        raise PlanRefused(f"the plan was previewed at commit {sealed.sha}, this job checked out {sha}; " + anew)
    if sealed.stack != stack:
        raise PlanRefused(f"the plan is stack {sealed.stack!r}'s, not {stack!r}'s; " + anew)
    now = stack_version(_read_json(history_path), str(history_path))
    if now != sealed.stack_version:
        raise PlanRefused(
            f"stack {stack!r} was at update {sealed.stack_version} when the plan was previewed and is at update "
            f"{now} now: an update ran since (an earlier `pulumi up --plan` of this run that failed partway applies "
            "the steps before its failure), so the plan no longer describes what would change. Read what that "
            f"update did (`pulumi stack history --stack {stack}`), then " + anew)
    return sealed


def _env(name: str) -> str:
    value = os.environ.get(name, "")
    if not value:
        raise PlanRefused(f"{name} is not set (run inside GitHub Actions, or set it)")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.saved_plan", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    seal_cmd = commands.add_parser("seal", help="check, summarise and seal a plan written by `pulumi preview "
                                                "--save-plan`")
    seal_cmd.add_argument("plan", type=Path)
    seal_cmd.add_argument("--out", type=Path, required=True, help="folder to write plan.json, plan.md, manifest.json")
    seal_cmd.add_argument("--state", type=Path, default=None,
                          help="the output of `pulumi stack export --stack STACK`, read before the preview: the old "
                               "value of each changed input in the summary")
    verify_cmd = commands.add_parser("verify", help="may the sealed plan in DIRECTORY be applied now?")
    verify_cmd.add_argument("directory", type=Path)
    for command in (seal_cmd, verify_cmd):
        command.add_argument("--stack", required=True)
        command.add_argument("--history", type=Path, required=True,
                             help="the output of `pulumi stack history --stack STACK --json --page-size 1` (seal: "
                                  "read before the preview)")
    verify_cmd.add_argument("--plan-sha256", default="", help="the preview job's output `plan-sha256`")
    args = parser.parse_args(argv)
    try:
        if args.command == "seal":
            sealed = seal(args.plan, args.history, args.out, stack=args.stack, run_id=_env("GITHUB_RUN_ID"),
                          run_attempt=_env("GITHUB_RUN_ATTEMPT"), sha=_env("GITHUB_SHA"), state_path=args.state)
            text = (args.out / SUMMARY).read_text(encoding="utf-8")
            if os.environ.get("GITHUB_STEP_SUMMARY"):
                with Path(os.environ["GITHUB_STEP_SUMMARY"]).open("a", encoding="utf-8") as handle:
                    handle.write(text)
            if os.environ.get("GITHUB_OUTPUT"):
                with Path(os.environ["GITHUB_OUTPUT"]).open("a", encoding="utf-8") as handle:
                    handle.write(f"plan-sha256={sealed.plan_sha256}\n")
            print(f"sealed the plan of {args.stack} at update {sealed.stack_version}: sha256 {sealed.plan_sha256}")
        else:
            sealed = verify(args.directory, args.history, stack=args.stack, run_id=_env("GITHUB_RUN_ID"),
                            sha=_env("GITHUB_SHA"), plan_sha256=args.plan_sha256)
            print(f"the plan of {args.stack} (sha256 {sealed.plan_sha256}, run {sealed.run_id}, commit {sealed.sha}, "
                  f"update {sealed.stack_version}) may be applied")
    except PlanRefused as refused:
        print(f"error: {refused}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

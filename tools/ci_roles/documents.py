"""The CI roles' policy documents, from what the program uses: `python -m tools.ci_roles [--account ID] [--check]`.

Writes into docs/iam/ (docs/ci-cd.md, "The CI roles' IAM policies"):

- `preview-role-policy.json`: the preview roles' (`gpu-platform-preview-<stack>`) whole policy (no AWS managed
  policy beside it): the exact calls a preview of this program makes, the public AMI parameters, and explicit denies
  on every read of data (an explicit Deny wins over any Allow another policy attached later would give);
- `deploy-role-policy-<part>.json`: the deploy roles' (`gpu-platform-deploy-<stack>`) whole policy, as customer
  managed policies of at most 6,144 characters each (the IAM quota, whitespace not counted:
  <https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_iam-quotas.html>): the same reads, and what the
  program does with each resource type it registers;
- `derivation.json`: where each action comes from (the data source and the code that calls it, the provider, the
  resource type and the stacks that register it).

The account's own SSM parameters are named by account id, so the files are written for AWS's documentation account
111122223333 (as the shipped stack files' roles are); `--account` writes them for yours. `--check` writes nothing
and exits 1 when a file differs from what the program derives now.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tools.ci_roles.calls import (
    DATA_READS,
    DATA_SOURCE_CALLS,
    PASSED_TO,
    PREVIEW_MANAGED_POLICIES,
    PROVIDER_CALLS,
    RESOURCE_ACTIONS,
    SSM_PARAMETER_READS,
)
from tools.ci_roles.derive import DerivationError, ProgramUse, derive

REPO = Path(__file__).resolve().parents[2]
OUT = REPO / "docs" / "iam"
DOCUMENTATION_ACCOUNT = "111122223333"
PUBLIC_PARAMETERS = "arn:aws:ssm:*::parameter/aws/service/*"
VERSION = "2012-10-17"
MANAGED_POLICY_LIMIT = 6144
# Which managed policy of the deploy role holds each service's actions.
DEPLOY_PARTS = {"ec2": "network", "eks": "cluster", "kms": "cluster", "logs": "cluster", "sqs": "cluster",
                "events": "cluster", "iam": "iam"}


def _document(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": VERSION, "Statement": list(statements)}


def _allow(sid: str, actions: Sequence[str], resource: str | list[str] = "*", **extra: Any) -> dict[str, Any]:
    return {"Sid": sid, "Effect": "Allow", "Action": sorted(set(actions)), "Resource": resource, **extra}


def preview_calls(use: ProgramUse) -> dict[str, tuple[str, ...]]:
    """action -> what makes it (data sources the code calls, providers); DerivationError on an unknown data source."""
    unknown = sorted(set(use.data_sources) - set(DATA_SOURCE_CALLS))
    if unknown:
        raise DerivationError(
            "the program calls data sources tools/ci_roles/calls.py does not know: "
            + "; ".join(f"{token} (at {', '.join(use.data_sources[token])})" for token in unknown)
            + "; fix: add each to DATA_SOURCE_CALLS with the API calls its provider makes and the source")
    made: dict[str, set[str]] = {}
    for token in use.data_sources:
        for action in DATA_SOURCE_CALLS[token][0]:
            made.setdefault(action, set()).add(token)
    for provider, (actions, _) in PROVIDER_CALLS.items():
        for action in actions:
            made.setdefault(action, set()).add(provider)
    return {action: tuple(sorted(by)) for action, by in sorted(made.items())}


def _reads(use: ProgramUse) -> tuple[dict[str, Any], dict[str, Any]]:
    actions = [a for a in preview_calls(use) if a != "ssm:GetParameter"]
    return (_allow("ProgramPreviewReads", actions),
            _allow("PublicAmiParameters", ["ssm:GetParameter"], PUBLIC_PARAMETERS))


def preview_policy(use: ProgramUse, account: str) -> dict[str, Any]:
    reads, public = _reads(use)
    return _document(
        reads, public,
        {"Sid": "DenyDataReads", "Effect": "Deny", "Action": list(DATA_READS), "Resource": "*"},
        {"Sid": "DenyAccountParameters", "Effect": "Deny", "Action": list(SSM_PARAMETER_READS),
         "Resource": f"arn:aws:ssm:*:{account}:parameter/*"},
    )


def deploy_actions(use: ProgramUse) -> dict[str, tuple[str, ...]]:
    """action -> the resource types needing it; DerivationError on a type RESOURCE_ACTIONS lacks."""
    aws_types = [t for t in use.resource_types if t.startswith("aws:")]
    unknown = sorted(set(aws_types) - set(RESOURCE_ACTIONS))
    if unknown:
        raise DerivationError(
            "the program registers resource types tools/ci_roles/calls.py does not know: "
            + "; ".join(f"{t} (stacks {', '.join(use.resource_types[t])})" for t in unknown)
            + "; fix: add each to RESOURCE_ACTIONS with its create, read, update, delete and tag calls")
    needed: dict[str, set[str]] = {}
    for kind in aws_types:
        for action in RESOURCE_ACTIONS[kind]:
            needed.setdefault(action, set()).add(kind)
    return {action: tuple(sorted(by)) for action, by in sorted(needed.items())}


def deploy_policies(use: ProgramUse, account: str) -> dict[str, dict[str, Any]]:
    """part -> policy document: the deploy role's whole policy, split by service into managed policies."""
    reads, public = _reads(use)
    by_part: dict[str, list[str]] = {}
    for action in deploy_actions(use):
        if action == "iam:PassRole":
            continue
        service = action.split(":", 1)[0]
        if service not in DEPLOY_PARTS:
            raise DerivationError(f"{action}: no deploy policy part for service {service!r}; fix: add it to "
                                  "DEPLOY_PARTS in tools/ci_roles/documents.py")
        by_part.setdefault(DEPLOY_PARTS[service], []).append(action)
    parts: dict[str, dict[str, Any]] = {}
    for part, actions in sorted(by_part.items()):
        statements = [_allow(f"Deploy{part.title()}", actions)]
        if part == "cluster":
            statements += [reads, public]
        if part == "iam":
            statements.append(_allow("PassProgramRolesToTheirServices", ["iam:PassRole"],
                                     f"arn:aws:iam::{account}:role/*",
                                     Condition={"StringEquals": {"iam:PassedToService": list(PASSED_TO)}}))
        parts[part] = _document(*statements)
    return parts


def derivation(use: ProgramUse) -> dict[str, Any]:
    return {
        "generatedBy": "python -m tools.ci_roles (tools/ci_roles/)",
        "previewRole": {
            "managedPolicyArns": list(PREVIEW_MANAGED_POLICIES),
            # The files that call each data source (not the lines: an edit elsewhere in a file moves them).
            "dataSources": {t: {"calls": list(DATA_SOURCE_CALLS[t][0]),
                                "calledIn": sorted({w.rsplit(":", 1)[0] for w in where}),
                                "source": DATA_SOURCE_CALLS[t][1]} for t, where in use.data_sources.items()},
            "providers": {p: {"calls": list(calls), "source": source}
                          for p, (calls, source) in PROVIDER_CALLS.items()},
        },
        "deployRole": {
            "resourceTypes": {t: {"stacks": list(stacks), "calls": list(RESOURCE_ACTIONS.get(t, ()))}
                              for t, stacks in use.resource_types.items() if t.startswith("aws:")},
        },
    }


def render(use: ProgramUse, account: str = DOCUMENTATION_ACCOUNT) -> dict[str, str]:
    """file name -> text of every file of docs/iam/."""
    files = {"preview-role-policy.json": preview_policy(use, account), "derivation.json": derivation(use)}
    files.update({f"deploy-role-policy-{part}.json": doc for part, doc in deploy_policies(use, account).items()})
    return {name: json.dumps(data, indent=2) + "\n" for name, data in sorted(files.items())}


def policy_size(document: dict[str, Any]) -> int:
    """Characters IAM counts against a managed policy's quota (whitespace is not counted)."""
    return len("".join(json.dumps(document, separators=(",", ":")).split()))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.ci_roles", description=__doc__.splitlines()[0])
    parser.add_argument("--account", default=DOCUMENTATION_ACCOUNT, help="12-digit AWS account id of the roles")
    parser.add_argument("--out", type=Path, default=None,
                        help=f"folder to write (default {OUT.relative_to(REPO)}, for the documentation account only; "
                             "another --account needs --out)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file is out of date")
    parser.add_argument("--today", type=datetime.date.fromisoformat, default=None, metavar="YYYY-MM-DD",
                        help="the day the program judges lifecycles at while it runs each stack (default: today)")
    args = parser.parse_args(argv)
    if not (args.account.isdigit() and len(args.account) == 12):
        print(f"error: --account {args.account!r}: not a 12-digit AWS account id", file=sys.stderr)
        return 2
    if args.out is None and args.account != DOCUMENTATION_ACCOUNT:
        # docs/iam/ is tracked and holds the documentation account's policies: another account's go elsewhere.
        print(f"error: --account {args.account}: {OUT.relative_to(REPO)}/ holds the documentation account's "
              f"policies ({DOCUMENTATION_ACCOUNT}) and is tracked; write your account's elsewhere: add --out DIR "
              "(e.g. --out /tmp/iam)", file=sys.stderr)
        return 2
    args.out = args.out if args.out is not None else OUT
    try:
        files = render(derive(REPO, args.today), args.account)
    except DerivationError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    stale = [name for name, text in files.items()
             if not (args.out / name).is_file() or (args.out / name).read_text(encoding="utf-8") != text]
    extra = sorted(p.name for p in args.out.glob("*.json") if p.name not in files) if args.out.is_dir() else []
    if args.check:
        for name in [*stale, *extra]:
            print(f"{args.out / name}: out of date; fix: python -m tools.ci_roles", file=sys.stderr)
        return 1 if stale or extra else 0
    args.out.mkdir(parents=True, exist_ok=True)
    for name in extra:
        (args.out / name).unlink()
    for name, text in files.items():
        (args.out / name).write_text(text, encoding="utf-8")
    print(f"wrote {len(files)} files to {args.out}" + (f", removed {', '.join(extra)}" if extra else ""))
    return 0

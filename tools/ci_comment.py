"""`python -m tools.ci_comment --stack STACK LOG`: the pull-request comment for a failed `pulumi preview`.

pulumi/actions comments on the pull request only when the preview succeeds, so the preview jobs
run this on failure: it reads the CLI's text output (`LOG`) and prints Markdown with every mandatory
policy violation (policy, resource, message), or, when there is none, says the preview failed for
another reason. The CLI prints a violation under "Policies:" as

    - [mandatory]  <policy>  (<type>: <name>)
      <message lines, indented further>

(pulumi/pulumi pkg/backend/display: `renderDiffPolicyViolationEvent`, called with the prefix `- ` for each
violation of the progress view's policy section). Standard library only: the cloud jobs
install the program's runtime, not the development tools.

`--gate FILE` (repeatable) adds the offline gate's part first: each `resources.json` that `make gate` or
`tools.preview --out` wrote, rendered as summary.md renders it (`tools.preview.summary_md`, standard library
too): the verdict, the mandatory findings, the advisories, pending and unjudged folded, the GPU pools and services.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_VIOLATION = re.compile(r"^(?P<indent>\s*)- \[(?P<level>[a-z-]+)\]\s+(?P<policy>\S+)\s+\((?P<resource>[^)]*)\)\s*$")
_MAX_COMMENT = 60_000  # GitHub's comment body limit is 65,536 characters


@dataclass(frozen=True)
class Violation:
    policy: str
    resource: str
    message: str


def mandatory_violations(log: str) -> list[Violation]:
    """Every `[mandatory]` violation of the CLI output, with its message lines joined."""
    lines = [_ANSI.sub("", line).rstrip() for line in log.splitlines()]
    found: list[Violation] = []
    index = 0
    while index < len(lines):
        match = _VIOLATION.match(lines[index])
        index += 1
        if match is None:
            continue
        depth = len(match["indent"])
        message = []
        while index < len(lines) and lines[index].strip() and len(lines[index]) - len(lines[index].lstrip()) > depth \
                and not _VIOLATION.match(lines[index]):
            message.append(lines[index].strip())
            index += 1
        if match["level"] == "mandatory":
            found.append(Violation(match["policy"], match["resource"], " ".join(message)))
    return found


def comment(stack: str, log: str, run_url: str = "") -> str:
    violations = mandatory_violations(log)
    where = f" ([job log]({run_url}))" if run_url else ""
    head = f"### `pulumi preview` of `{stack}` failed{where}\n\n"
    if not violations:
        return head + "No mandatory policy violation in its output: it failed for another reason (see the log).\n"
    body = head + f"{len(violations)} mandatory policy violation(s); nothing deploys until they are fixed:\n\n"
    for v in violations:
        body += f"- **`{v.policy}`** on `{v.resource}`: {v.message}\n"
    if len(body) > _MAX_COMMENT:
        body = body[:_MAX_COMMENT] + "\n\n(truncated; the job log has every violation)\n"
    return body


def gate_part(documents: Sequence[dict[str, object]]) -> str:
    """The offline gate's part of the comment: each result document as summary.md renders it."""
    from tools.preview import summary_md  # noqa: PLC0415 -- standard library only, as this module

    return "\n".join(summary_md.render(doc) for doc in documents)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gpu-platform comment", description=__doc__.splitlines()[0])
    parser.add_argument("--stack", required=True)
    parser.add_argument("--gate", type=Path, action="append", default=[], metavar="RESOURCES_JSON",
                        help="the offline gate's result document of a stack and phase (out/<stack>/<phase>/"
                             "resources.json), rendered first; repeatable")
    parser.add_argument("log", type=Path, help="the text output of the failed `pulumi preview`")
    args = parser.parse_args(argv)
    documents = []
    try:
        log = args.log.read_text(encoding="utf-8", errors="replace")
        for path in args.gate:
            documents.append(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, json.JSONDecodeError) as err:
        print(f"error: cannot read {getattr(err, 'filename', None) or args.log}: {err}", file=sys.stderr)
        return 2
    run_url = ""
    if os.environ.get("GITHUB_RUN_ID"):
        run_url = (f"{os.environ.get('GITHUB_SERVER_URL', 'https://github.com')}/"
                   f"{os.environ.get('GITHUB_REPOSITORY', '')}/actions/runs/{os.environ['GITHUB_RUN_ID']}")
    if documents:
        sys.stdout.write(gate_part(documents) + "\n")
    sys.stdout.write(comment(args.stack, log, run_url))
    return 0


if __name__ == "__main__":
    sys.exit(main())

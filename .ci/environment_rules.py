#!/usr/bin/env python3
"""The protection a deploying environment must have, asserted through GitHub's REST API before anything runs.

    python3 .ci/environment_rules.py ENVIRONMENT    (inside GitHub Actions; GH_TOKEN with `actions: read`)

`.ci/require-reviewers` runs it. GitHub creates an environment silently, with no protection, the first time a job
names it, and its defaults are weak: administrators bypass its rules (`can_admins_bypass` is true unless turned off)
and a reviewer may approve their own run unless "Prevent self-review" is on. So for each protected environment:
- at least one required reviewer, with `prevent_self_review` on
  (GET /repos/{owner}/{repo}/environments/{name}: `protection_rules[]` of type `required_reviewers`;
  https://docs.github.com/en/rest/deployments/environments#get-an-environment);
- `can_admins_bypass` false (the same document);
- its deployment rule admits exactly the refs it deploys from: custom policies naming only those
  (GET .../environments/{name}/deployment-branch-policies;
  https://docs.github.com/en/rest/deployments/branch-policies#list-deployment-branch-policies);
- for environments that deploy `main`: the rules GitHub applies to `main` include a pull request rule that dismisses
  stale approvals and requires approval of the most recent push (GET /repos/{owner}/{repo}/rules/branches/main;
  https://docs.github.com/en/rest/repos/rules#get-rules-for-a-branch), so no commit lands after its approval.
Standard library only: it runs before any virtualenv exists.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

# Each protected environment -> the refs it may deploy from (name, type), and whether those are `main`'s commits.
PROTECTED: dict[str, tuple[tuple[str, str], ...]] = {
    "prod": (("main", "branch"),),
    "policy-publish": (("policy-pack-v*", "tag"),),
    "e2e": (("main", "branch"),),
}


def environment_problems(name: str, environment: dict[str, Any], policies: list[dict[str, Any]] | None) -> list[str]:
    """What environment `name` lacks; `policies` is the deployment-branch-policies list (None: not custom)."""
    problems: list[str] = []
    reviewers = [r for r in environment.get("protection_rules") or [] if r.get("type") == "required_reviewers"]
    count = sum(len(r.get("reviewers") or []) for r in reviewers)
    where = f"Settings > Environments > {name}"
    if count < 1:
        problems.append(f"environment '{name}' has no required reviewer: add one under {where} > Required reviewers")
    elif not all(r.get("prevent_self_review") for r in reviewers):
        problems.append(f"environment '{name}' lets a reviewer approve their own run: turn on {where} > "
                        "Prevent self-review")
    if environment.get("can_admins_bypass", True):
        problems.append(f"environment '{name}' lets administrators bypass its rules: turn off {where} > "
                        "Allow administrators to bypass configured protection rules")
    rule = environment.get("deployment_branch_policy")
    wanted = sorted(PROTECTED[name])
    if not rule or not rule.get("custom_branch_policies") or policies is None:
        admits = "any ref" if not rule else "protected branches"
        problems.append(f"environment '{name}' admits deployments from {admits}: under {where} > Deployment "
                        "branches and tags, select only "
                        + ", ".join(f"{kind} {ref}" for ref, kind in wanted))
    else:
        have = sorted((str(p.get("name")), str(p.get("type", "branch"))) for p in policies)
        if have != wanted:
            problems.append(f"environment '{name}' deploys from {have or 'nothing'}, not only {wanted}: fix {where} > "
                            "Deployment branches and tags")
    return problems


def main_branch_problems(rules: list[dict[str, Any]]) -> list[str]:
    """What the rules on `main` lack so that an approval covers the last push."""
    reviews = [r.get("parameters") or {} for r in rules if r.get("type") == "pull_request"]
    if not reviews:
        return ["the rules on main require no pull request: add the ruleset .github/rulesets/main.json"]
    problems = []
    if not any(p.get("dismiss_stale_reviews_on_push") for p in reviews):
        problems.append("the rules on main keep an approval after a new push: set dismiss_stale_reviews_on_push "
                        "(.github/rulesets/main.json)")
    if not any(p.get("require_last_push_approval") for p in reviews):
        problems.append("the rules on main let the last pusher's own commit land unapproved: set "
                        "require_last_push_approval (.github/rulesets/main.json)")
    if not any(int(p.get("required_approving_review_count") or 0) >= 1 for p in reviews):
        problems.append("the rules on main need no approving review: set required_approving_review_count >= 1")
    return problems


def _api(path: str) -> Any:
    out = subprocess.run(["gh", "api", path], capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def main(argv: list[str]) -> int:
    if len(argv) != 1 or argv[0] not in PROTECTED:
        print(f"usage: environment_rules.py {{{','.join(PROTECTED)}}}", file=sys.stderr)
        return 2
    name = argv[0]
    repo = os.environ.get("GITHUB_REPOSITORY")
    if not repo:
        print("GITHUB_REPOSITORY is not set (run inside GitHub Actions)", file=sys.stderr)
        return 2
    environment = _api(f"repos/{repo}/environments/{name}")
    rule = environment.get("deployment_branch_policy") or {}
    policies = (_api(f"repos/{repo}/environments/{name}/deployment-branch-policies").get("branch_policies", [])
                if rule.get("custom_branch_policies") else None)
    problems = environment_problems(name, environment, policies)
    if ("main", "branch") in PROTECTED[name]:
        problems += main_branch_problems(_api(f"repos/{repo}/rules/branches/main"))
    for problem in problems:
        print(f"::error::{problem}: refusing to run (docs/ci-cd.md, repository settings)", file=sys.stderr)
    if problems:
        return 1
    print(f"environment '{name}': reviewers, self-review prevented, no admin bypass, deploys only from "
          + ", ".join(f"{kind} {ref}" for ref, kind in PROTECTED[name]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))

"""`.ci/require-reviewers` (through .ci/environment_rules.py) asserts each protected environment's protection as the
REST API reports it: a reviewer with self-review prevented, no administrator bypass, a deployment rule that admits
only the environment's refs, and rules on `main` whose approval covers the last push (issue 54: the guard counted
reviewers only). Each property, removed from a compliant answer, is reported."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("environment_rules", REPO / ".ci" / "environment_rules.py")
assert _spec is not None and _spec.loader is not None
rules = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(rules)

# The shapes of GitHub's answers (https://docs.github.com/en/rest/deployments/environments#get-an-environment,
# https://docs.github.com/en/rest/deployments/branch-policies, https://docs.github.com/en/rest/repos/rules).
GOOD_ENVIRONMENT: dict[str, Any] = {
    "name": "prod", "can_admins_bypass": False,
    "protection_rules": [{"type": "required_reviewers", "prevent_self_review": True,
                          "reviewers": [{"type": "Team", "reviewer": {"slug": "platform"}}]},
                         {"type": "branch_policy"}],
    "deployment_branch_policy": {"protected_branches": False, "custom_branch_policies": True},
}
GOOD_POLICIES = [{"name": "main", "type": "branch"}]
GOOD_MAIN: list[dict[str, Any]] = [{"type": "pull_request", "parameters": {"dismiss_stale_reviews_on_push": True,
                                                     "require_last_push_approval": True,
                                                     "required_approving_review_count": 1,
                                                     "require_code_owner_review": True}},
             {"type": "required_status_checks", "parameters": {}}]


def test_a_protected_environment_passes() -> None:
    assert rules.environment_problems("prod", GOOD_ENVIRONMENT, GOOD_POLICIES) == []
    assert rules.main_branch_problems(GOOD_MAIN) == []


@pytest.mark.parametrize(("change", "says"), [
    (lambda e: e.update(protection_rules=[]), "has no required reviewer"),
    (lambda e: e["protection_rules"][0].update(prevent_self_review=False), "Prevent self-review"),
    (lambda e: e.update(can_admins_bypass=True), "administrators bypass"),
    (lambda e: e.pop("can_admins_bypass"), "administrators bypass"),  # GitHub's default is true
    (lambda e: e.update(deployment_branch_policy=None), "admits deployments from any ref"),
    (lambda e: e.update(deployment_branch_policy={"protected_branches": True, "custom_branch_policies": False}),
     "admits deployments from protected branches"),
])
def test_each_missing_protection_is_reported(change: Any, says: str) -> None:
    environment = copy.deepcopy(GOOD_ENVIRONMENT)
    change(environment)
    custom = (environment.get("deployment_branch_policy") or {}).get("custom_branch_policies")
    problems = rules.environment_problems("prod", environment, GOOD_POLICIES if custom else None)
    assert any(says in p for p in problems), problems


def test_a_deployment_rule_admitting_another_branch_is_reported() -> None:
    problems = rules.environment_problems("prod", GOOD_ENVIRONMENT, [*GOOD_POLICIES, {"name": "release/*",
                                                                                      "type": "branch"}])
    assert problems and "not only [('main', 'branch')]" in problems[0]


def test_policy_publishing_deploys_from_its_tags_only() -> None:
    env = {**GOOD_ENVIRONMENT, "name": "policy-publish"}
    assert rules.environment_problems("policy-publish", env, [{"name": "policy-pack-v*", "type": "tag"}]) == []
    assert rules.environment_problems("policy-publish", env, GOOD_POLICIES)


@pytest.mark.parametrize(("key", "says"), [("dismiss_stale_reviews_on_push", "keep an approval after a new push"),
                                           ("require_last_push_approval", "last pusher's own commit"),
                                           ("required_approving_review_count", "need no approving review")])
def test_rules_on_main_whose_approval_misses_the_last_push_are_reported(key: str, says: str) -> None:
    main = copy.deepcopy(GOOD_MAIN)
    main[0]["parameters"][key] = 0 if key == "required_approving_review_count" else False
    assert any(says in p for p in rules.main_branch_problems(main))
    assert "require no pull request" in rules.main_branch_problems(main[1:])[0]


def test_the_shipped_ruleset_satisfies_the_guard() -> None:
    import json  # noqa: PLC0415

    ruleset = json.loads((REPO / ".github" / "rulesets" / "main.json").read_text())
    assert ruleset["target"] == "branch" and ruleset["enforcement"] == "active"
    assert ruleset["conditions"]["ref_name"]["include"] == ["~DEFAULT_BRANCH"]
    assert ruleset.get("bypass_actors", []) == []
    assert rules.main_branch_problems(ruleset["rules"]) == []


@pytest.mark.parametrize(("workflow", "job", "environment"), [("deploy.yml", "up-prod", "prod"),
                                                              ("publish-policy-pack.yml", None, "policy-publish"),
                                                              ("e2e.yml", "e2e", "e2e")])
def test_every_protected_environment_runs_the_guard_first(workflow: str, job: str | None, environment: str) -> None:
    jobs = yaml.safe_load((REPO / ".github" / "workflows" / workflow).read_text())["jobs"]
    matching = [(n, j) for n, j in jobs.items() if j.get("environment") == environment and (job is None or n == job)]
    assert matching, (workflow, environment)
    for name, body in matching:
        runs = [str(s.get("run", "")) for s in body["steps"]]
        guard = runs.index(f"bash .ci/require-reviewers {environment}")
        assert all("make" not in r and "pulumi" not in r for r in runs[:guard]), name
        assert body["permissions"].get("actions") == "read", name


def test_codeowners_cover_what_decides_prod() -> None:
    owners = (REPO / ".github" / "CODEOWNERS").read_text()
    patterns = {line.split()[0] for line in owners.splitlines() if line.strip() and not line.startswith("#")}
    assert {"/.github/", "/.ci/", "/Pulumi.prod.yaml", "/policies/", "/components/"} <= patterns

"""Issue 45: the shipped prod keeps prod's promise. Our own prod stack with a public ALB and no web ACL passed, because
an ALB without the WAF annotation lands on `alb-waf-attached-unseen`, which prod.json did not raise."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import RunPreview, real_stack_file
from tests.shared import REPO

PROD_POLICY = REPO / "policies" / "config" / "prod.json"


def test_our_prod_stack_without_its_web_acl_is_refused_by_prod_policy(run_preview: RunPreview, tmp_path: Path) -> None:
    data = yaml.safe_load(real_stack_file("prod").read_text())
    services = data["config"]["gpu-platform:inferenceServices"]
    public = [s for s in services if (s.get("ingress") or {}).get("scheme") == "internet-facing"]
    assert public and all(s["ingress"].get("wafAclArn") for s in public)  # the shipped stack states its web ACL
    for service in public:
        del service["ingress"]["wafAclArn"]
    stack_file = tmp_path / "Pulumi.prod.yaml"
    stack_file.write_text(yaml.safe_dump(data, sort_keys=False))
    run = run_preview("--stack", "prod", "--config-file", str(stack_file), "--policy-config", str(PROD_POLICY),
                      "--today", "2026-11-30", "--json")
    assert run.returncode == 1, run.explain()
    blocking = [v for v in run.violations() if v["enforcement"] == "mandatory"]
    assert {v["policy"] for v in blocking} == {"alb-waf-attached-unseen"}
    assert all("sets no alb.ingress.kubernetes.io/wafv2-acl-arn" in v["message"] for v in blocking)

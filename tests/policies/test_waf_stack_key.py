"""alb-waf-attached names where the user sets the web ACL (issue 56): this project's inference service sets it with
the stack key `inferenceServices[].ingress.wafAclArn` (docs/configuration.md), any other program with the Ingress
annotation itself (a stack key exists only in this project's stacks: issue 37, class 7)."""

from __future__ import annotations

from types import SimpleNamespace

from policies.gpu_guard.rules import alb_waf_attached
from tests.shared import REPO

INGRESS = "kubernetes:networking.k8s.io/v1:Ingress"
PROPS = {"metadata": {"name": "api", "annotations": {"alb.ingress.kubernetes.io/scheme": "internet-facing"}},
         "spec": {"ingressClassName": "alb"}}


def _messages(urn: str) -> list[str]:
    found: list[str] = []
    args = SimpleNamespace(resource_type=INGRESS, props=PROPS, name="api", urn=urn)

    def report(message: str, urn: str | None = None) -> None:
        found.append(message)

    alb_waf_attached.validate(args, report)
    return found


def test_our_inference_service_is_told_its_stack_key() -> None:
    [message] = _messages("urn:pulumi:dev::gpu-platform::gpu-platform:inference:InferenceService$"
                          f"{INGRESS}::triton-dev-ingress")
    assert "inferenceServices[].ingress.wafAclArn (it sets alb.ingress.kubernetes.io/wafv2-acl-arn)" in message


def test_another_programs_ingress_is_told_the_annotation_and_no_stack_key() -> None:
    [message] = _messages(f"urn:pulumi:dev::guestbook::{INGRESS}::api")
    assert "wafAclArn" not in message
    assert "To let the pack judge it: alb.ingress.kubernetes.io/wafv2-acl-arn:" in message


def test_the_configuration_reference_documents_the_stack_key() -> None:
    text = (REPO / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "ingress.wafAclArn" in text

"""alb-https-only: an internet-facing ALB Ingress serves HTTPS with a certificate, redirects HTTP, uses TLS 1.2+.

Also the `listen-ports` annotation must be valid JSON: the controller rejects `[{HTTP: 80}]` (a
YAML flow mapping pasted into a string) and the Ingress never gets a load balancer.

This module also holds the ALB Ingress detection `alb-waf-attached` shares.

Sources:
- AWS Load Balancer Controller Ingress annotations (listen-ports JSON, certificate-arn, ssl-redirect,
  ssl-policy default ELBSecurityPolicy-2016-08, scheme default internal):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/
- ELB security policies (which allow TLS 1.0/1.1): https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html
- EKS Best Practices, TLS on the load balancer: https://docs.aws.amazon.com/eks/latest/best-practices/load-balancing.html
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import get

ANNOTATION = "alb.ingress.kubernetes.io/"
# Source: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/
ALB_CLASS = "alb"
LEGACY_CLASS_ANNOTATION = "kubernetes.io/ingress.class"
INTERNET_FACING = "internet-facing"
DEFAULT_SSL_POLICY = "ELBSecurityPolicy-2016-08"
# ELB predefined policies whose minimum protocol is TLS 1.2 (or 1.3).
# Source: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html
TLS12_POLICY_PREFIXES = (
    "ELBSecurityPolicy-TLS13-1-2-",
    "ELBSecurityPolicy-TLS13-1-3-",
    "ELBSecurityPolicy-TLS-1-2-",
    "ELBSecurityPolicy-FS-1-2-",
)
RECOMMENDED_SSL_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
HTTPS_PORT = 443
RECOMMENDED_LISTEN_PORTS = '[{"HTTP": 80}, {"HTTPS": 443}]'


def is_ingress(resource_type: str) -> bool:
    return resource_type.startswith(("kubernetes:networking.k8s.io/", "kubernetes:extensions/")) and \
        resource_type.endswith(":Ingress")


def annotation(props: Any, key: str) -> str | None:
    """One annotation, read on its own: an unknown value elsewhere (a WAF ARN output) does not block judging."""
    annotations = get(props, "metadata", "annotations")
    if not isinstance(annotations, Mapping) or key not in list(annotations):
        return None
    return str(annotations[key])


def has_annotation(props: Any, key: str) -> bool:
    """Whether the annotation is set, without reading its (possibly unknown) value."""
    annotations = get(props, "metadata", "annotations")
    return isinstance(annotations, Mapping) and key in list(annotations)


def internet_facing_alb(props: Any) -> bool:
    """An Ingress the AWS Load Balancer Controller serves with an internet-facing ALB."""
    ingress_class = get(props, "spec", "ingressClassName")
    is_alb = str(ingress_class) == ALB_CLASS if ingress_class is not None else \
        annotation(props, LEGACY_CLASS_ANNOTATION) == ALB_CLASS
    return is_alb and annotation(props, ANNOTATION + "scheme") == INTERNET_FACING


def _repair_listen_ports(raw: str) -> str | None:
    """The JSON the author meant, when `raw` is a YAML-style flow mapping such as `[{HTTP: 80}, {HTTPS: 443}]`."""
    quoted = re.sub(r"([\[{,]\s*)'?([A-Za-z]+)'?\s*:", r'\1"\2":', raw).replace("'", '"')
    try:
        return json.dumps(json.loads(quoted))
    except ValueError:
        return None


def _listen_ports(raw: str | None) -> tuple[list[tuple[str, int]] | None, str | None]:
    """(listeners, problem)."""
    if raw is None:
        return None, (f"sets no {ANNOTATION}listen-ports, so the listeners depend on the controller's default. "
                      f"Fix: {ANNOTATION}listen-ports: '{RECOMMENDED_LISTEN_PORTS}'")
    try:
        parsed = json.loads(raw)
    except ValueError:
        fixed = _repair_listen_ports(raw) or RECOMMENDED_LISTEN_PORTS
        return None, (f"has {ANNOTATION}listen-ports {raw!r}, which is not valid JSON (keys must be quoted), so the "
                      f"controller rejects the Ingress. Fix: {ANNOTATION}listen-ports: '{fixed}'")
    listeners: list[tuple[str, int]] = []
    for item in parsed if isinstance(parsed, list) else [None]:
        if not isinstance(item, dict) or len(item) != 1:
            return None, (f"has {ANNOTATION}listen-ports {raw!r}, which is not a JSON list of {{\"PROTOCOL\": port}} "
                          f"objects. Fix: {ANNOTATION}listen-ports: '{RECOMMENDED_LISTEN_PORTS}'")
        (protocol, port), = item.items()
        listeners.append((str(protocol), int(port) if isinstance(port, int) else -1))
    return listeners, None


def validate(args: Any, report_violation: ReportViolation) -> None:
    if not is_ingress(args.resource_type) or not internet_facing_alb(args.props):
        return
    name = get(args.props, "metadata", "name", default=args.name)
    where = f"Internet-facing ALB Ingress '{name}'"

    def report(problem: str) -> None:
        report_violation(f"{where} {problem}.", args.urn)

    listeners, problem = _listen_ports(annotation(args.props, ANNOTATION + "listen-ports"))
    if problem:
        report(problem)
    elif listeners is not None and ("HTTPS", HTTPS_PORT) not in listeners:
        report(f"listens on {listeners} without HTTPS {HTTPS_PORT}. Fix: {ANNOTATION}listen-ports: "
               f"'{RECOMMENDED_LISTEN_PORTS}'")
    if not has_annotation(args.props, ANNOTATION + "certificate-arn"):
        report(f"has no {ANNOTATION}certificate-arn, so it cannot terminate TLS. Fix: set it to the ACM certificate "
               "ARN for the host")
    redirect = annotation(args.props, ANNOTATION + "ssl-redirect")
    if redirect != str(HTTPS_PORT):
        state = "unset" if redirect is None else repr(redirect)
        report(f"has {ANNOTATION}ssl-redirect {state}; plain HTTP must be redirected to HTTPS. "
               f"Fix: {ANNOTATION}ssl-redirect: '{HTTPS_PORT}'")
    policy = annotation(args.props, ANNOTATION + "ssl-policy")
    if policy is None:
        report(f"sets no {ANNOTATION}ssl-policy, so the controller uses {DEFAULT_SSL_POLICY}, which still allows "
               f"TLS 1.0 and 1.1. Fix: {ANNOTATION}ssl-policy: {RECOMMENDED_SSL_POLICY}")
    elif not policy.startswith(TLS12_POLICY_PREFIXES):
        report(f"uses {ANNOTATION}ssl-policy {policy}, which is not a TLS 1.2+ policy. "
               f"Fix: {ANNOTATION}ssl-policy: {RECOMMENDED_SSL_POLICY}")


POLICY = resource_policy(
    "alb-https-only",
    "An internet-facing ALB Ingress listens on HTTPS with a certificate, redirects HTTP, uses a TLS 1.2+ policy and "
    "has valid JSON listen-ports.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)

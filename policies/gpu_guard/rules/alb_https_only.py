"""alb-https-only: an internet-facing ALB Ingress serves HTTPS with a certificate, redirects HTTP, uses TLS 1.2+.

Also the `listen-ports` annotation must be valid JSON: the controller rejects `[{HTTP: 80}]` (a
YAML flow mapping pasted into a string) and the Ingress never gets a load balancer.

This module also holds the ALB Ingress detection `alb-waf-attached` shares.

Cannot see, cannot block: the certificate and the TLS policy need not be on the Ingress. Without a
`certificate-arn` annotation the controller takes `spec.certificateArn` of the IngressClass's IngressClassParams,
else discovers ACM certificates for the Ingress's `tls` hosts and rule hosts (an account's ACM content); without
an `ssl-policy` annotation it takes the IngressClassParams' `spec.sslPolicy`, else its default. The IngressClass
and its parameters are other objects (often the controller chart's), which a resource policy does not see. So a
missing certificate or TLS policy goes to the advisory twin `alb-https-only-unseen`, naming what lets the pack
judge; a value the Ingress states is judged here.

Sources:
- AWS Load Balancer Controller Ingress annotations (listen-ports JSON, certificate-arn, ssl-redirect,
  ssl-policy default ELBSecurityPolicy-2016-08, scheme default internal):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/
- ELB security policies (which allow TLS 1.0/1.1): https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html
- EKS Best Practices, TLS on the load balancer: https://docs.aws.amazon.com/eks/latest/best-practices/load-balancing.html
- Certificate discovery (IngressClassParams spec.certificateArn, then ACM by tls / rule hosts):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/cert_discovery/
- IngressClassParams (spec.certificateArn, spec.sslPolicy take precedence over the annotations):
  https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/ingress_class/
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..base import UNSEEN_MARK, ReportViolation, resource_policy_with_unseen
from ..inventory import as_list, get

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

    def unseen(problem: str, fix: str) -> None:
        report_violation(f"{UNSEEN_MARK}{where} {problem}. To let the pack judge it: {fix}.", args.urn)

    listeners, problem = _listen_ports(annotation(args.props, ANNOTATION + "listen-ports"))
    if problem:
        report(problem)
    elif listeners is not None and ("HTTPS", HTTPS_PORT) not in listeners:
        report(f"listens on {listeners} without HTTPS {HTTPS_PORT}. Fix: {ANNOTATION}listen-ports: "
               f"'{RECOMMENDED_LISTEN_PORTS}'")
    if not has_annotation(args.props, ANNOTATION + "certificate-arn"):
        hosts = _hosts(args.props)
        found = (f"discovers an ACM certificate for {hosts} (the account's ACM certificates, which a preview cannot "
                 "see)" if hosts else "has no host to discover an ACM certificate for")
        unseen(f"has no {ANNOTATION}certificate-arn: its certificate comes from its IngressClassParams' "
               f"spec.certificateArn, which a resource policy does not see, or the controller {found}",
               f"set {ANNOTATION}certificate-arn to the ACM certificate ARN for the host")
    redirect = annotation(args.props, ANNOTATION + "ssl-redirect")
    if redirect != str(HTTPS_PORT):
        state = "unset" if redirect is None else repr(redirect)
        report(f"has {ANNOTATION}ssl-redirect {state}; plain HTTP must be redirected to HTTPS. "
               f"Fix: {ANNOTATION}ssl-redirect: '{HTTPS_PORT}'")
    policy = annotation(args.props, ANNOTATION + "ssl-policy")
    if policy is None:
        unseen(f"sets no {ANNOTATION}ssl-policy: its TLS policy is its IngressClassParams' spec.sslPolicy, which a "
               f"resource policy does not see, else the controller's {DEFAULT_SSL_POLICY}, which still allows TLS "
               "1.0 and 1.1", f"{ANNOTATION}ssl-policy: {RECOMMENDED_SSL_POLICY}")
    elif not policy.startswith(TLS12_POLICY_PREFIXES):
        report(f"uses {ANNOTATION}ssl-policy {policy}, which is not a TLS 1.2+ policy. "
               f"Fix: {ANNOTATION}ssl-policy: {RECOMMENDED_SSL_POLICY}")


def _hosts(props: Any) -> list[str]:
    """The hosts the controller discovers certificates for: spec.tls[].hosts and spec.rules[].host."""
    hosts = [str(h) for t in as_list(get(props, "spec", "tls")) for h in as_list(get(t, "hosts"))]
    hosts += [str(h) for r in as_list(get(props, "spec", "rules")) if (h := get(r, "host"))]
    return sorted(set(hosts))


POLICY = resource_policy_with_unseen(
    "alb-https-only",
    "An internet-facing ALB Ingress listens on HTTPS, redirects HTTP, has valid JSON listen-ports, and states no "
    "weak TLS policy; a certificate or TLS policy it leaves to its IngressClassParams or ACM is advisory.",
    validate,
    unseen_description="Advisory twin of alb-https-only: an internet-facing ALB Ingress whose certificate or TLS "
                       "policy comes from its IngressClassParams or from ACM certificate discovery, which a resource "
                       "policy cannot see; it names what lets the pack judge.",
)

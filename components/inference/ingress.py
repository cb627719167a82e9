"""The ALB Ingress of an inference service (AWS Load Balancer Controller annotations).

- `target-type: ip`: the ALB sends traffic straight to pod IPs, so a draining pod is deregistered
  itself (with the pod readiness gate the controller injects in namespaces labelled for it).
- HTTPS on 443 with the ACM certificate, HTTP on 80 redirected to it, a TLS 1.2+ security policy
  (`ELBSecurityPolicy-TLS13-1-2-2021-06`, the controller's recommended TLS 1.3 policy).
- Health checks on Triton's ready endpoint: the ALB only sends to replicas whose models are loaded.
- Idle timeout above the 60 s default: a long generation can keep a connection silent for minutes.
- Deregistration delay equal to the service's drain time, so the ALB waits for in-flight requests.
- The WAF web ACL when one is given.
- Every JSON-valued annotation is written with json.dumps, so it is valid JSON.
- Only inference and health are routed: the model-repository (load/unload), model-config, shared-memory,
  statistics, trace and logging APIs stay off the ALB, as Triton's "Limit Endpoint Access" asks of a server
  exposed to clients (triton-inference-server/server @ v2.62.0 docs/customization_guide/inference_protocols.md:
  151-205; the flag `--http-restricted-api` is src/command_line_parser.cc:506, and would need a shared header
  secret in the pod's arguments, so routing is done here instead). Health paths are `Exact`; inference paths
  are ALB path patterns (`ImplementationSpecific`: the
  controller passes the path to the ALB as it is, `*` matching any characters;
  kubernetes-sigs/aws-load-balancer-controller @ v3.5.0 pkg/ingress/model_build_listener_rules.go:247-262), which
  cover `/v2/models/<m>/infer` and `/v2/models/<m>/versions/<v>/infer` and the generate extension. Any other
  path gets the listener's default action, a fixed 404, since the Ingress has no default backend
  (pkg/ingress/model_build_listener.go:76-84).

Sources:
- vLLM (runtime: vllm): only the OpenAI routes `/v1/chat/completions`, `/v1/completions`, `/v1/models` and
  `/health` (all `Exact`) reach the ALB. vLLM serves `/metrics`, `/tokenize`, `/invocations` (which its API key does
  not guard), LoRA loading and its development endpoints on the same port, so the path list is what keeps them
  inside the cluster (components/inference/vllm.py cites each route at the pinned release). Health checks on
  `/health`. With `ingress.oidc` the ALB authenticates every request (`auth-type: oidc`, `auth-idp-oidc`,
  `auth-on-unauthenticated-request`); it acts on the HTTPS listener only, and HTTP is redirected to it.
- Annotations: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/
  (every name used here checked against the annotation table of kubernetes-sigs/aws-load-balancer-controller
  docs/guide/ingress/annotations.md at commit 00175c1e2943de94d08ee39fa33b112706573b26)
- Pod readiness gate: https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/deploy/pod_readiness_gate/
- Security policies: https://docs.aws.amazon.com/elasticloadbalancing/latest/application/describe-ssl-policies.html
- ALB attributes (idle_timeout.timeout_seconds, deregistration_delay.timeout_seconds):
  https://docs.aws.amazon.com/elasticloadbalancing/latest/application/application-load-balancers.html
"""

from __future__ import annotations

import json
from typing import Any

from components.config import InferenceServiceConfig, IngressConfig
from components.inference import vllm as vllm_facts
from components.inference.workload import HEALTH_LIVE, HEALTH_READY, service_labels

PREFIX = "alb.ingress.kubernetes.io/"
INGRESS_CLASS = "alb"
SSL_POLICY = "ELBSecurityPolicy-TLS13-1-2-2021-06"
# The namespace label that makes the controller inject its pod readiness gate.
READINESS_GATE_LABEL = ("elbv2.k8s.aws/pod-readiness-gate-inject", "enabled")


def alb_annotations(config: InferenceServiceConfig, ingress: IngressConfig) -> dict[str, str]:
    out = {
        "scheme": ingress.scheme,
        "target-type": "ip",
        "listen-ports": json.dumps([{"HTTP": 80}, {"HTTPS": 443}]),
        "certificate-arn": ingress.certificate_arn,
        "ssl-redirect": "443",
        "ssl-policy": SSL_POLICY,
        "backend-protocol": "HTTP",
        "healthcheck-path": vllm_facts.HEALTH if config.runtime == "vllm" else HEALTH_READY,
        "healthcheck-port": "traffic-port",
        "success-codes": "200",
        "load-balancer-attributes": f"idle_timeout.timeout_seconds={ingress.idle_timeout_seconds}",
        "target-group-attributes": f"deregistration_delay.timeout_seconds={config.drain_seconds}",
    }
    if ingress.waf_acl_arn is not None:
        out["wafv2-acl-arn"] = ingress.waf_acl_arn
    if ingress.oidc is not None:
        oidc = ingress.oidc
        out["auth-type"] = "oidc"
        out["auth-idp-oidc"] = json.dumps({
            "issuer": oidc.issuer, "authorizationEndpoint": oidc.authorization_endpoint,
            "tokenEndpoint": oidc.token_endpoint, "userInfoEndpoint": oidc.user_info_endpoint,
            "secretName": oidc.secret_name}, sort_keys=True)
        out["auth-on-unauthenticated-request"] = oidc.on_unauthenticated
        out["auth-scope"] = "openid"
    return {PREFIX + key: value for key, value in out.items()}


# (path, pathType) of every route the public ALB has; Triton's HTTP endpoints:
# https://github.com/triton-inference-server/server/blob/v2.62.0/docs/protocol/README.md (KServe v2 inference,
# health) and docs/protocol/extension_generate.md (generate, generate_stream).
PUBLIC_PATHS: tuple[tuple[str, str], ...] = (
    (HEALTH_READY, "Exact"),
    (HEALTH_LIVE, "Exact"),
    ("/v2/models/*/infer", "ImplementationSpecific"),
    ("/v2/models/*/generate", "ImplementationSpecific"),
    ("/v2/models/*/generate_stream", "ImplementationSpecific"),
)


# A generating model's routes (POST /v1/responses too; its GET /v1/responses/{id} and .../cancel serve only stored
# responses, off by default: VLLM_ENABLE_RESPONSES_API_STORE, vllm/entrypoints/openai/responses/serving.py:162-167
# at v0.34.0), and an embedding model's (vllm.runner: pooling): components/inference/vllm.py cites the routers.
VLLM_PUBLIC_PATHS: tuple[tuple[str, str], ...] = tuple((path, "Exact") for path in vllm_facts.PUBLIC_PATHS)
VLLM_POOLING_PUBLIC_PATHS: tuple[tuple[str, str], ...] = tuple(
    (path, "Exact") for path in vllm_facts.POOLING_PUBLIC_PATHS)


def public_paths(config: InferenceServiceConfig) -> tuple[tuple[str, str], ...]:
    """The routes the ALB forwards for the service's runtime (and, for vLLM, the model's task)."""
    if config.runtime != "vllm":
        return PUBLIC_PATHS
    pooling = config.vllm is not None and config.vllm.runner == "pooling"
    return VLLM_POOLING_PUBLIC_PATHS if pooling else VLLM_PUBLIC_PATHS


def ingress_manifest(config: InferenceServiceConfig, ingress: IngressConfig) -> dict[str, Any]:
    return {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": config.name, "namespace": config.namespace, "labels": service_labels(config),
                     "annotations": alb_annotations(config, ingress)},
        "spec": {
            "ingressClassName": INGRESS_CLASS,
            "tls": [{"hosts": [ingress.host]}],
            "rules": [{"host": ingress.host, "http": {"paths": [
                {"path": path, "pathType": path_type,
                 "backend": {"service": {"name": config.name, "port": {"name": "http"}}}}
                for path, path_type in public_paths(config)
            ]}}],
        },
    }

"""serving-endpoint-authenticated: a vLLM server behind an internet-facing ALB has an API key or ALB authentication.

Judged over the whole stack, so a hand-written Ingress in front of a hand-written vLLM Deployment is judged as our
InferenceService is (the config check refuses the same for a stack file's service, components/config/serving.py):
an internet-facing ALB Ingress (`alb-https-only`'s reading: ingressClassName or the legacy class annotation `alb`,
`alb.ingress.kubernetes.io/scheme: internet-facing`) routes to a Service (`backend.service.name`, or the
extensions/v1beta1 `serviceName`, in the Ingress's namespace) whose selector matches the pod labels of a workload
with a vLLM container (`_serving.serving_containers`: the vllm/vllm-openai image or `vllm serve`).

That container is authenticated when vLLM has a key: `--api-key` on its command line, or `VLLM_API_KEY` in its
environment (a value that is not empty, or a `valueFrom`): the server takes `--api-key`, else the variable, and
refuses a request to `/v1`, `/v2`, `/inference` or `/cohere` without `Authorization: Bearer <key>`
(https://github.com/vllm-project/vllm/blob/v0.34.0/vllm/entrypoints/serve/middleware/register.py#L32-L33,
vllm/entrypoints/common/cli_args.py:336-346, vllm/envs.py:879). Or the ALB authenticates every request: the
Ingress's (or the backend Service's) `alb.ingress.kubernetes.io/auth-type` is `oidc` or `cognito`
(https://kubernetes-sigs.github.io/aws-load-balancer-controller/latest/guide/ingress/annotations/#authentication;
the controller reads auth annotations on the Ingress and on the Service).

Mandatory: with neither, anyone who reaches the host uses the GPUs; both facts are in the stack. A Service that
is not in the stack, or that selects no vLLM workload of the stack, is not judged here.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs

from ..base import stack_policy
from ..inventory import POD_TEMPLATE_PATHS
from ..matrix import load_matrix
from ..props import as_list, as_str_map, get, properties_pending
from ._serving import ServingContainer, serving_containers
from .alb_https_only import ANNOTATION, annotation, internet_facing_alb, is_ingress

NAME = "serving-endpoint-authenticated"
SERVICE = "kubernetes:core/v1:Service"
INGRESS_TYPES = ("kubernetes:networking.k8s.io/v1:Ingress", "kubernetes:extensions/v1beta1:Ingress")
AUTH_TYPES = ("oidc", "cognito")
API_KEY_FLAG = "--api-key"
API_KEY_ENV = "VLLM_API_KEY"
FIX = ("give the server an API key (VLLM_API_KEY from a Secret, or --api-key; clients send it as a Bearer token), "
       "or authenticate on the ALB (alb.ingress.kubernetes.io/auth-type: oidc or cognito), or make the ALB internal "
       "(alb.ingress.kubernetes.io/scheme: internal)")


def _namespace(props: Any) -> str:
    return str(get(props, "metadata", "namespace", default="default") or "default")


def _backends(props: Any) -> Iterator[str]:
    """The Service names an Ingress routes to (networking/v1 and extensions/v1beta1 spellings)."""
    spec = get(props, "spec", default={})
    backends = [get(spec, "defaultBackend"), get(spec, "backend")]
    for rule in as_list(get(spec, "rules")):
        backends += [get(path, "backend") for path in as_list(get(rule, "http", "paths"))]
    for backend in backends:
        name = get(backend, "service", "name", default=get(backend, "serviceName"))
        if name is not None:
            yield str(name)


def _has_key(container_props: Any, serving: ServingContainer) -> bool:
    if API_KEY_FLAG in serving.words or any(w.startswith(f"{API_KEY_FLAG}=") for w in serving.words):
        return True
    for env in as_list(get(container_props, "env")):
        if get(env, "name") == API_KEY_ENV and (get(env, "valueFrom") is not None or get(env, "value")):
            return True
    return False


def _selects(selector: Mapping[str, str], labels: Mapping[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def _alb_authenticates(*props: Any) -> bool:
    return any(str(annotation(p, ANNOTATION + "auth-type") or "").lower() in AUTH_TYPES for p in props)


def _open_vllm(resource: Any, matrix: Any) -> Iterator[str]:
    """The vLLM containers of a workload that have no API key."""
    path = POD_TEMPLATE_PATHS.get(resource.resource_type)
    if path is None:
        return
    template = get(resource.props, *path) if path else resource.props
    by_name = {str(get(c, "name", default="")): c for c in as_list(get(template, "spec", "containers"))}
    for serving in serving_containers(resource.resource_type, resource.props, matrix, vllm_only=True):
        if not _has_key(by_name.get(serving.name), serving):
            yield serving.name


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    known = [r for r in args.resources if not properties_pending(r.resource_type, r.props)]
    ingresses = [r for r in known if is_ingress(r.resource_type) and internet_facing_alb(r.props)]
    if not ingresses:
        return
    matrix = load_matrix()
    services = {(_namespace(r.props), str(get(r.props, "metadata", "name", default=r.name))): r
                for r in known if r.resource_type == SERVICE}
    workloads = [r for r in known if r.resource_type in POD_TEMPLATE_PATHS]
    for ingress in ingresses:
        namespace = _namespace(ingress.props)
        name = get(ingress.props, "metadata", "name", default=ingress.name)
        for backend in dict.fromkeys(_backends(ingress.props)):
            service = services.get((namespace, backend))
            if service is None or _alb_authenticates(ingress.props, service.props):
                continue
            selector = as_str_map(get(service.props, "spec", "selector"))
            for workload in workloads:
                path = POD_TEMPLATE_PATHS[workload.resource_type]
                template = get(workload.props, *path) if path else workload.props
                if _namespace(workload.props) != namespace or not _selects(
                        selector, as_str_map(get(template, "metadata", "labels"))):
                    continue
                kind = workload.resource_type.rsplit(":", 1)[-1]
                target = get(workload.props, "metadata", "name", default=workload.name)
                for container in _open_vllm(workload, matrix):
                    report(f"Ingress '{namespace}/{name}' puts vLLM {kind} '{target}' (container '{container}', "
                           f"through Service '{backend}') on the internet with no authentication: an internet-facing "
                           f"ALB, no API key on the server (neither {API_KEY_FLAG} nor {API_KEY_ENV}) and no ALB "
                           "auth-type oidc or cognito, so anyone who reaches the host uses its GPUs. "
                           f"Fix: {FIX}.", ingress.urn)


stack_policy(
    NAME,
    "A vLLM server that an internet-facing ALB Ingress routes to has an API key (--api-key or VLLM_API_KEY) or the "
    "ALB authenticates its requests (auth-type oidc or cognito).",
    _validate,
    enforcement=EnforcementLevel.MANDATORY,
    reads=(*INGRESS_TYPES, SERVICE, *POD_TEMPLATE_PATHS),
)

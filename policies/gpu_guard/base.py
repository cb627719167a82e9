"""Registration and shared shape of the gpu-platform policies.

Every policy is one module under `rules/`, building one `pulumi_policy` policy object and handing it
to `register()`. The pack (`policies/__main__.py`) takes `all_policies()`; tests use the same list,
so a policy that is not registered is neither enforced nor tested.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pulumi_policy import (
    EnforcementLevel,
    Policy,
    PolicyConfigSchema,
    ReportViolation,
    ResourceValidation,
    ResourceValidationPolicy,
    StackValidation,
    StackValidationArgs,
    StackValidationPolicy,
)

from .inventory import INVENTORY_KUBERNETES_TYPES
from .props import properties_pending
from .stack_cache import SharedValidation

_LEVEL_ORDER = {
    EnforcementLevel.DISABLED: 0,
    EnforcementLevel.ADVISORY: 1,
    EnforcementLevel.MANDATORY: 2,
    EnforcementLevel.REMEDIATE: 2,
}


@dataclass(frozen=True)
class PolicyMeta:
    """What POLICIES.md says of a policy, beside the policy object itself."""

    name: str
    default: EnforcementLevel
    prod: EnforcementLevel
    kind: str  # "resource" | "stack"
    companion_of: str | None = None  # an advisory twin that carries the caveats of a mandatory policy
    part_of: str | None = None  # the resource-level part of a catalogue policy (see `resource_part`)
    # A stack policy: the Kubernetes types it reads, whose verdicts wait while such an object is pending
    # (`props.properties_pending`); `kubernetes-objects-pending` names the waiting policies per object.
    reads: tuple[str, ...] = ()


_REGISTRY: dict[str, tuple[Policy, PolicyMeta]] = {}


def _register(policy: Policy, meta: PolicyMeta) -> Policy:
    if meta.name in _REGISTRY:
        raise ValueError(f"policy name {meta.name!r} is registered twice; policy names must be unique")
    _REGISTRY[meta.name] = (policy, meta)
    return policy


def resource_policy(
    name: str,
    description: str,
    validate: ResourceValidation,
    *,
    enforcement: EnforcementLevel,
    prod: EnforcementLevel | None = None,
    config_schema: PolicyConfigSchema | None = None,
    companion_of: str | None = None,
) -> Policy:
    """Register a policy that judges one resource at a time (engine `Analyze`); see `stack_policy`."""
    policy = ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement,
        config_schema=config_schema,
    )
    return _register(policy, PolicyMeta(name, enforcement, prod or enforcement, "resource", companion_of))


# Every stack policy says what being one means. A CLI `pulumi up` previews first with the pack, and a
# mandatory violation there stops it before anything is created (pulumi/pulumi pkg/backend/apply.go lines
# 287-303; step_generator.go lines 3609-3630; deployment_executor.go lines 422-435); with --skip-preview
# (the Automation API, pulumi/actions) the update runs the policy only after every step
# (deployment_executor.go line 410). In a first preview, Kubernetes objects reach it with no properties
# (their provider has no kubeconfig yet), so what reads them is judged only after the first update's steps.
STACK_POLICY_NOTE = (
    "(Stack policy: it correlates several resources, so it needs the whole stack. A preview, and the preview "
    "a CLI `pulumi up` runs first, stops a violation before anything is created; `pulumi up --skip-preview` "
    "(Automation API, pulumi/actions) runs it only after every step. In the first preview of a new stack, "
    "Kubernetes objects have no properties yet, so what it reads of them is judged after the first update's "
    "steps.)"
)



def stack_policy(
    name: str,
    description: str,
    validate: StackValidation,
    *,
    enforcement: EnforcementLevel,
    prod: EnforcementLevel | None = None,
    config_schema: PolicyConfigSchema | None = None,
    companion_of: str | None = None,
    reads: tuple[str, ...] | None = None,
    elsewhere: Elsewhere | None = None,
) -> Policy:
    """Register a policy that correlates every resource of the stack (engine `AnalyzeStack`).

    `reads`: the Kubernetes types it reads (default: every type the inventory reads).
    `elsewhere`: its subject may live in another stack (`Elsewhere`); its `-pending` twin says so.

    `companion_of` names the mandatory catalogue policy whose advisory-level findings this one
    reports: the engine gives every policy exactly one enforcement level, so a rule with both
    blocking and warning outcomes (e.g. CUDA minor-version compatibility under
    `cuda-driver-compatible`) is split into the policy and its advisory companion.
    """
    policy = StackValidationPolicy(
        name=name,
        description=f"{description} {STACK_POLICY_NOTE}",
        validate=validate,
        enforcement_level=enforcement,
        config_schema=config_schema,
    )
    reads = INVENTORY_KUBERNETES_TYPES if reads is None else reads
    main = _register(policy, PolicyMeta(name, enforcement, prod or enforcement, "stack", companion_of, reads=reads))
    if reads and companion_of is None:
        _pending_twin(name, reads, config_schema, elsewhere)
    return main


# This project's name, the project part of its stacks' URNs (`urn:pulumi:<stack>::<project>::...`): a stack key of
# the stack file (CONFIG.md section 1) exists only there, so a fix names one only for a resource of this project.
OUR_PROJECT = "gpu-platform"


def in_our_project(urn: str | None) -> bool:
    """Whether `urn` belongs to a stack of this project."""
    parts = (urn or "").split("::")
    return len(parts) > 1 and parts[1] == OUR_PROJECT


PENDING_SUFFIX = "-pending"
# True in every phase that sends such objects (the pack does not know which one it runs in): a first preview, the
# preview a CLI `pulumi up` runs first, a preview that replaces the cluster, a kubeconfig read from another stack.
WAITING_PHASE = (
    "it judges them once that provider is configured: after every step of the `pulumi up` that creates or replaces "
    "what its kubeconfig comes from (a mandatory violation then fails that update once the resources exist), and in "
    "every preview after that; resource policies have judged their inputs already."
)


def pending_message(policy: str, pending: list[tuple[str, str]]) -> str:
    """The one advisory of `<policy>-pending`: the objects `policy` waits on, and when it judges them."""
    names = ", ".join(f"{rtype} '{name}'" for rtype, name in pending)
    return (f"{policy} waits on {len(pending)} Kubernetes object(s) with no properties yet in this preview ({names}): "
            "their provider's kubeconfig is not known in this preview (it comes from a cluster being created or "
            "replaced, or from another value not known yet), so the provider is not configured and the engine plans "
            f"them without properties; {WAITING_PHASE}")


STACK_REFERENCE = "pulumi:pulumi:StackReference"


@dataclass(frozen=True)
class Elsewhere:
    """A stack policy's subject that a split stack keeps in another stack (the system node group, the GPU pools, the
    device plugin): `subject` names it, `absent(resources)` says this stack holds none of it. The policy itself
    stays silent then (`other_stacks`), and its `-pending` twin says, at advisory level, where it may live."""

    subject: str
    absent: Callable[[list[Any]], bool]


def other_stacks(resources: Iterable[Any]) -> list[tuple[str, str]]:
    """(URN, stack name) of every StackReference: a pack sees one stack's resources, never the referenced stack's."""
    return sorted((r.urn, str((r.props or {}).get("name") or r.name)) for r in resources
                  if r.resource_type == STACK_REFERENCE)


def elsewhere_message(policy: str, subject: str, stacks: list[tuple[str, str]]) -> str:
    names = ", ".join(repr(name) for _, name in stacks)
    return (f"{policy} does not judge {subject} here: this stack holds none, and it reads stack(s) {names} through "
            f"StackReference. A policy pack sees only the resources of the stack it runs on, so {subject} may live "
            "there; that stack's own preview with this pack judges it.")


def _pending_twin(name: str, reads: tuple[str, ...], config_schema: PolicyConfigSchema | None,
                  elsewhere: Elsewhere | None = None) -> None:
    """Register `<name>-pending`: the advisory that says, once, what stack policy `name` waits on.

    In the first preview of a new stack (and the preview a CLI `pulumi up` runs first) every Kubernetes
    object reaches the stack policies with no properties (`props.properties_pending`; the engine source is
    cited in tools/engine/view.py). The policy itself never judges such an object absent: its verdict waits,
    and since the engine gives a policy one enforcement level, a mandatory policy cannot say so itself.
    """

    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        # Sorted: the engine sends resources in registration order, which varies with when outputs resolve.
        pending = sorted((r for r in args.resources
                          if r.resource_type in reads and properties_pending(r.resource_type, r.props)),
                         key=lambda r: (r.resource_type, r.name, r.urn))
        if pending:
            report(pending_message(name, [(r.resource_type, r.name) for r in pending]), pending[0].urn)
        stacks = other_stacks(args.resources) if elsewhere is not None else []
        if elsewhere is not None and stacks and elsewhere.absent(list(args.resources)):
            report(elsewhere_message(name, elsewhere.subject, stacks), stacks[0][0])

    policy = StackValidationPolicy(
        name=f"{name}{PENDING_SUFFIX}",
        description=f"What {name} waits on in a preview whose Kubernetes provider is not configured yet (the first "
                    "preview of a new stack, a preview that replaces the cluster)"
                    f"{f', or where {elsewhere.subject} may live in another stack' if elsewhere else ''}, and when "
                    "it judges it. "
                    f"{STACK_POLICY_NOTE}",
        validate=validate,
        enforcement_level=EnforcementLevel.ADVISORY,
        config_schema=config_schema,
    )
    _register(policy, PolicyMeta(policy.name, EnforcementLevel.ADVISORY, EnforcementLevel.ADVISORY, "stack",
                                 companion_of=name))


RESOURCE_PART_SUFFIX = "-resource"


def resource_part(
    of: str,
    description: str,
    validate: ResourceValidation,
    *,
    enforcement: EnforcementLevel,
    prod: EnforcementLevel | None = None,
    config_schema: PolicyConfigSchema | None = None,
) -> Policy:
    """Register `<of>-resource`: the part of catalogue policy `of` that judges one resource alone.

    The engine runs a resource policy before the resource's step (in preview and at `pulumi up`), a
    stack policy only after every step at `pulumi up`
    (pulumi/pulumi pkg/resource/deploy/step_generator.go line 1469, analyzeAll before the step;
    deployment_executor.go line 410, AnalyzeResources after all steps). So what must stop a broken pool
    before it exists is judged here, from the resource's own inputs and the label contract; the
    catalogue policy keeps what needs the whole stack. Both carry the catalogue's enforcement.
    """
    name = f"{of}{RESOURCE_PART_SUFFIX}"
    policy = ResourceValidationPolicy(
        name=name,
        description=description,
        validate=validate,
        enforcement_level=enforcement,
        config_schema=config_schema,
    )
    return _register(policy, PolicyMeta(name, enforcement, prod or enforcement, "resource", part_of=of))


CAVEAT_MARK = "[advisory] "
"""How a rule marks a finding as a caveat: the blocking policy drops it, its `-caveats` twin reports it."""


def _split_by_mark(mark: str, unmarked_side: Callable[[Any, ReportViolation], object],
                   marked_side: Callable[[Any, ReportViolation], object],
                   ) -> tuple[Callable[[Any, ReportViolation], None], Callable[[Any, ReportViolation], None]]:
    """The two validations of a policy and its advisory twin over one rule's findings: the first reports what
    `unmarked_side` finds without `mark`, the second what `marked_side` finds with it (the mark removed)."""

    def unmarked(args: Any, report: ReportViolation) -> None:
        def only_unmarked(message: str, urn: str | None = None) -> None:
            if not message.startswith(mark):
                report(message, urn)

        unmarked_side(args, only_unmarked)

    def marked(args: Any, report: ReportViolation) -> None:
        def only_marked(message: str, urn: str | None = None) -> None:
            if message.startswith(mark):
                report(message[len(mark):], urn)

        marked_side(args, only_marked)

    return unmarked, marked


def stack_policy_with_caveats(
    name: str,
    description: str,
    validate: StackValidation,
    *,
    caveats_description: str,
    enforcement: EnforcementLevel = EnforcementLevel.MANDATORY,
    prod: EnforcementLevel | None = None,
    config_schema: PolicyConfigSchema | None = None,
    reads: tuple[str, ...] | None = None,
    elsewhere: Elsewhere | None = None,
) -> Policy:
    """Register a mandatory stack policy and its advisory twin `<name>-caveats` (`elsewhere`: as `stack_policy`).

    The Pulumi engine reports every violation of a policy at that policy's one enforcement level,
    so a rule that has both blocking outcomes and warnings (CUDA minor-version compatibility under
    `cuda-driver-compatible`, say) cannot report both through one policy without either blocking
    on a warning or passing a real break. `validate` reports everything; findings it marks with
    `CAVEAT_MARK` go to the twin (advisory, mark removed), the rest to the policy itself. Both
    take the same config properties. `validate` runs once per stack for the pair: whichever of the two
    the engine asks first validates, the other is handed the same verdicts (`stack_cache`).
    """
    shared = SharedValidation(validate)
    blocking_side, caveats_side = shared.side(name), shared.side(f"{name}-caveats")

    blocking, caveats = _split_by_mark(CAVEAT_MARK, blocking_side, caveats_side)

    main = stack_policy(name, description, blocking, enforcement=enforcement, prod=prod, config_schema=config_schema,
                        reads=reads, elsewhere=elsewhere)
    stack_policy(f"{name}-caveats", caveats_description, caveats, enforcement=EnforcementLevel.ADVISORY,
                 config_schema=config_schema, companion_of=name, reads=reads)
    return main


UNSEEN_MARK = "[unseen] "
"""How a rule marks a finding on what the pack cannot see: its mandatory policy drops it, `-unseen` reports it."""
UNSEEN_SUFFIX = "-unseen"


def resource_policy_with_unseen(
    name: str,
    description: str,
    validate: ResourceValidation,
    *,
    unseen_description: str,
    enforcement: EnforcementLevel = EnforcementLevel.MANDATORY,
    prod: EnforcementLevel | None = None,
    config_schema: PolicyConfigSchema | None = None,
    unseen_prod: EnforcementLevel | None = None,
) -> Policy:
    """Register a resource policy and its advisory twin `<name>-unseen`: cannot see, cannot block.

    A mandatory finding states a fact the pack saw. What a rule cannot see from the stack (an account
    setting, the content of an image built elsewhere) it still reports, marked with `UNSEEN_MARK` and
    naming what would let it judge; that finding goes to the advisory twin (mark removed), never to the
    policy itself. Both take the same config properties. The twin is advisory by default; `unseen_prod` is the
    level `policies/config/prod.json` raises it to, where prod demands that the stack state what the pack cannot
    see (a prod ALB's web ACL on the Ingress itself), and a stack can keep it advisory by not raising it.
    """

    seen, unseen = _split_by_mark(UNSEEN_MARK, validate, validate)

    main = resource_policy(name, description, seen, enforcement=enforcement, prod=prod, config_schema=config_schema)
    resource_policy(f"{name}{UNSEEN_SUFFIX}", unseen_description, unseen, enforcement=EnforcementLevel.ADVISORY,
                    prod=unseen_prod, config_schema=config_schema, companion_of=name)
    return main


def _import_rules() -> None:
    from . import rules  # noqa: PLC0415 - imported for its side effect: every rule module registers itself

    for module in pkgutil.iter_modules(rules.__path__):
        importlib.import_module(f"{rules.__name__}.{module.name}")


def all_policies() -> list[Policy]:
    """Every registered policy, sorted by name."""
    _import_rules()
    return [policy for _, (policy, _meta) in sorted(_REGISTRY.items())]


def companions_of(name: str) -> list[Policy]:
    """The advisory twins registered for policy `name` (see `stack_policy_with_caveats`)."""
    _import_rules()
    return [policy for _, (policy, meta) in sorted(_REGISTRY.items()) if meta.companion_of == name]


def all_meta() -> dict[str, PolicyMeta]:
    """POLICIES.md metadata (default and prod enforcement) of every registered policy, by name."""
    _import_rules()
    return {name: meta for name, (_policy, meta) in sorted(_REGISTRY.items())}


def is_raise_or_equal(default: EnforcementLevel, configured: EnforcementLevel) -> bool:
    """A stack may raise a policy's enforcement, never lower it."""
    return _LEVEL_ORDER[configured] >= _LEVEL_ORDER[default]


__all__ = [
    "CAVEAT_MARK",
    "UNSEEN_MARK",
    "EnforcementLevel",
    "PolicyMeta",
    "ReportViolation",
    "all_meta",
    "all_policies",
    "companions_of",
    "is_raise_or_equal",
    "resource_part",
    "resource_policy",
    "resource_policy_with_unseen",
    "stack_policy",
    "stack_policy_with_caveats",
]

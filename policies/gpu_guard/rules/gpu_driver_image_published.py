"""gpu-driver-image-published: every operator-installed driver has a published image for each OS it serves.

The drivers judged are the ones the GPU Operator installs on some operator-managed GPU pool: the
Helm values `driver.version` (when the driver is enabled and the default driver reaches a pool) and
each `NVIDIADriver` `spec.version`. For every OS among the pools a driver serves, the pinned
catalogue (`Matrix.driver_image`) says whether `nvcr.io/nvidia/driver:<version>-<os>` (or the
precompiled branch image under that operator release) exists. `535.15.04` never did:
ImagePullBackOff. Ubuntu 26.04 opens the same trap one release later: NVIDIA publishes no `580.*-ubuntu26.04`
image (595.91.07 and 610.57.04 only: NVIDIA/aicr issue 2192), so an R580 pool there is
mandatory here, while an operator release that merely predates NVIDIA's 26.04 support statement is only an
advisory of `gpu-driver-branch-supported` (the operator builds the tag from the node's OS labels; the missing
image is what breaks the deploy).

Live registry check (policy config `verifyRegistry: true`, optional `registry` base URL and
`registryTimeoutSeconds`): the registry is asked for the conventional image's manifest through
`registry.manifest_exists`. Precompiled images are tagged per node kernel (`<branch>-<kernel>-<os>`),
which the stack does not know, so only the catalogue judges them. The registry's answer:

- "not published": a violation, even when the catalogue lists the tag (the catalogue is stale).
- "published" while the catalogue says it is not: the registry wins for existence; the catalogue
  verdict is a caveat (advisory twin `gpu-driver-image-published-caveats`) asking to update
  matrix.yaml.
- no answer (unreachable, timeout, credentials needed): the catalogue verdict stands. Its
  violations say the registry could not be reached; when the catalogue is satisfied the twin
  reports, as an advisory, that the registry was not asked successfully.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs

from .. import registry
from ..base import stack_policy_with_caveats
from ..inventory import DriverSpec, HelmRelease, build_inventory
from ..matrix import Finding, OsName, load_matrix
from ._matrix_common import (
    ADVISORY_PREFIX,
    TODAY_PROPERTY,
    as_os,
    config_today,
    driver_origin,
    finding_text,
    gpu_pools,
    judged,
    operator_drivers_for,
    report_findings,
)

NAME = "gpu-driver-image-published"

# Bound on one registry question (seconds) unless policy config says otherwise; the pack must not
# hang a preview on a slow registry. Source: https://github.com/opencontainers/distribution-spec/blob/main/spec.md
_DEFAULT_REGISTRY_TIMEOUT_S = 5.0


@dataclass
class _Served:
    spec: DriverSpec
    pools: dict[OsName, list[str]] = field(default_factory=dict)


def _describe(spec: DriverSpec, release: HelmRelease) -> str:
    kind = "precompiled driver" if spec.use_precompiled else "driver"
    origin = driver_origin(spec)
    return f"{kind} {spec.version} ({origin}, operator {release.version or 'unpinned'})"


def _registry_settings(config: Mapping[str, Any]) -> tuple[bool, str | None, float]:
    verify = config.get("verifyRegistry", False) is True
    override = config.get("registry")
    timeout = config.get("registryTimeoutSeconds", _DEFAULT_REGISTRY_TIMEOUT_S)
    if not isinstance(timeout, int | float) or isinstance(timeout, bool) or timeout <= 0:
        raise ValueError(
            f"policy config {NAME}.registryTimeoutSeconds={timeout!r} must be a positive number of seconds, e.g. 5"
        )
    return verify, (str(override) if override else None), float(timeout)


def _validate(args: StackValidationArgs, report: ReportViolation) -> None:
    config = args.get_config()
    today = config_today(config)
    verify, override, timeout = _registry_settings(config)
    matrix = load_matrix()
    inv = build_inventory(args.resources)
    release = inv.operator
    if release is None:
        return
    served: dict[tuple[str, str, str], _Served] = {}
    for pool in gpu_pools(inv, matrix):
        if pool.driver_source != "operator":
            continue
        specs = operator_drivers_for(inv, matrix, pool)
        os_name = as_os(pool.os)
        if specs and os_name is None:
            report(
                f"GPU pool {pool.name!r} runs an operator-installed driver but its OS "
                f"(gpu-platform.io/os={pool.os or 'missing'}) is not one of ubuntu-22.04, ubuntu-24.04, "
                "ubuntu-26.04, so the driver image for it cannot be checked; label the nodes with "
                "gpu-platform.io/os=ubuntu-22.04, ubuntu-24.04 or ubuntu-26.04.",
                pool.urn,
            )
            continue
        for spec in specs:
            entry = served.setdefault((spec.urn, spec.name, spec.version), _Served(spec))
            if os_name is not None:
                entry.pools.setdefault(os_name, []).append(pool.name)
    for entry in served.values():
        spec = entry.spec
        _one_os_tag_for_several(report, entry, release)
        for os_name, pools in sorted(entry.pools.items()):
            context = f"{_describe(spec, release)} on {os_name} pool(s) {', '.join(sorted(pools))}"
            findings = judged(matrix.driver_image, spec.version, os_name, precompiled=spec.use_precompiled,
                                           operator=release.version, today=today)
            if not verify or spec.use_precompiled:
                report_findings(report, findings, context=context, urn=spec.urn, advisory_prefix=True)
                continue
            ref = matrix.driver_image_ref(spec.version, os_name)
            answer = registry.manifest_exists(ref, timeout_s=timeout, registry_override=override)
            _report_with_registry(report, findings, answer, ref=ref, context=context, urn=spec.urn)


def _one_os_tag_for_several(report: ReportViolation, entry: _Served, release: HelmRelease) -> None:
    """The ClusterPolicy driver resolves ONE image OS tag for the whole cluster, from the first GPU node the
    operator lists (`getGPUNodeOSInfo`, `client.Limit(1)`, NFD os-release labels:
    https://github.com/NVIDIA/gpu-operator/blob/v26.7.0/controllers/state_manager.go#L579-L611, used by
    `resolveDriverTag`, controllers/object_controls.go:3423-3427). Pools of two Ubuntu releases under that one
    driver (an Ubuntu 26.04 pool added next to 24.04 ones) get the other release's driver container on half of
    their nodes, or no image at all. An `NVIDIADriver` resolves the tag per node pool of OS and kernel
    (internal/state/nodepool.go:60-104, driver.go:551-558), so one per pool is the fix."""
    if entry.spec.source != "helm-values" or len(entry.pools) < 2:
        return
    spread = "; ".join(f"{os_name}: {', '.join(sorted(pools))}" for os_name, pools in sorted(entry.pools.items()))
    report(
        f"{_describe(entry.spec, release)} serves GPU pools of {len(entry.pools)} OS releases ({spread}), but the "
        "ClusterPolicy driver pulls one image for the whole cluster, tagged for the OS of the first GPU node the "
        "operator lists: the other pools' driver pods get an image built for another release. Serve each pool "
        "with its own NVIDIADriver (driver.nvidiaDriverCRD.enabled=true, deployDefaultCR=false), or run one "
        "Ubuntu release for every operator-managed pool.",
        entry.spec.urn,
    )


def _report_with_registry(report: ReportViolation, findings: list[Finding], answer: registry.RegistryAnswer, *,
                          ref: str, context: str, urn: str) -> None:
    blocking = [f for f in findings if f.level == "mandatory"]
    others = [f for f in findings if f.level != "mandatory"]
    report_findings(report, others, context=context, urn=urn, advisory_prefix=True)
    if answer.exists is False:
        if blocking:
            for finding in blocking:
                report(f"{context}: {finding_text(finding)} The registry confirms: {answer.detail}.", urn)
        else:
            report(f"{context}: the registry has no image {ref} ({answer.detail}), although the catalogue lists it; "
                   "the driver pod would sit in ImagePullBackOff. Pin a driver version whose image the registry "
                   "serves and correct matrix.yaml.", urn)
    elif answer.exists is None:
        for finding in blocking:
            report(f"{context}: {finding_text(finding)} (The registry could not be reached: {answer.detail}; "
                   "the pinned catalogue decided.)", urn)
        if not blocking:
            report(f"{ADVISORY_PREFIX}{context}: the registry could not be asked for {ref} ({answer.detail}); "
                   "the pinned catalogue lists it as published. Check registry reachability, or set "
                   "verifyRegistry: false to rely on the catalogue alone.", urn)
    else:
        for finding in blocking:
            report(f"{ADVISORY_PREFIX}{context}: the registry serves {ref} ({answer.detail}) but the catalogue says: "
                   f"{finding_text(finding)} Update matrix.yaml.", urn)


stack_policy_with_caveats(
    name=NAME,
    description="Every operator-installed driver version has a published driver container image for the OS of "
                "every pool it serves.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
    caveats_description=(
        "Caveats of gpu-driver-image-published: images judged by the catalogue alone (registry "
        "unreachable) or served by the registry though the catalogue disagrees."
    ),
    config_schema=PolicyConfigSchema(properties={
        "today": TODAY_PROPERTY,
        "verifyRegistry": {"type": "boolean", "default": False,
                           "description": "Also ask the registry for each driver image manifest"},
        "registry": {"type": "string",
                     "description": "Registry base URL to ask instead of the image's own (tests, mirrors)"},
        "registryTimeoutSeconds": {"type": "number", "default": _DEFAULT_REGISTRY_TIMEOUT_S, "exclusiveMinimum": 0,
                                   "description": "Bound on each registry question, in seconds"},
    }),
)

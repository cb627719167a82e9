"""What the matrix policies share: which driver each pool runs, a workload's CUDA, policy config, reporting.

Not a policy (it registers nothing). The rules of the driver / OS / CUDA matrix all ask the same
questions of the stack, answered here once so they agree:

- Which driver does a pool run? An operator-managed pool (`gpu-platform.io/driver-source:
  operator`, or an Ubuntu pool) runs every operator driver whose node selector matches it
  (`Inventory.drivers_for`); a pool whose image bakes the driver (Bottlerocket / AL2023 NVIDIA)
  runs the branch its `gpu-platform.io/driver` label names, else the branch the matrix says a node of
  the pinned image release (EC2NodeClass alias / node group releaseVersion; newest when unpinned) loads
  at that Kubernetes version on each instance type (`Matrix.baked_driver_branch`): AL2023 images since
  v20260917 carry R580 and R595 and pick one per GPU at boot, so one pool may run two branches.
- Which CUDA does a GPU container run? The image tag when the matrix knows it
  (`Matrix.image_cuda`), else the pod template label `gpu-platform.io/cuda`.

Advisory findings of a mandatory policy. The engine gives each policy exactly one enforcement
level, so a mandatory policy whose rule also has "works with caveats" outcomes (CUDA minor-version
compatibility, forward compatibility) marks those with `ADVISORY_PREFIX` (`base.CAVEAT_MARK`) and
is registered with `stack_policy_with_caveats`: the policy reports its blocking findings, its
advisory twin `<name>-caveats` the marked ones. Policies whose own level is advisory report
findings unmarked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from pulumi_policy import ReportViolation

from ..base import CAVEAT_MARK
from ..calendar import judging_day
from ..inventory import DriverSpec, Inventory, Pool, Reach, Workload
from ..matrix import Finding, Matrix, OsName, parse_image_version
from ..versions import parse_cuda_version, parse_driver_version
from ._dockerfile import Builds, base_image

ADVISORY_PREFIX = CAVEAT_MARK

# The OS label values of the label contract (CONFIG.md section 2), the `OsName` the matrix takes.
KNOWN_OS: tuple[OsName, ...] = ("ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04", "bottlerocket", "al2023")

TODAY_PROPERTY: dict[str, Any] = {
    "type": "string",
    "format": "date",
    "description": "ISO date the lifecycle is judged at (default: the day the policy runs); for reproducible runs",
}


def config_today(config: Mapping[str, Any]) -> date:
    """The policy config `today` (ISO date), else the real date (`calendar.judging_day`)."""
    return judging_day(config.get("today") if config else None, what="policy config today")


def as_os(value: str | None) -> OsName | None:
    """The label value as the matrix's `OsName`, or None when it is not one of the contract's values."""
    for name in KNOWN_OS:
        if value == name:
            return name
    return None


@dataclass(frozen=True)
class PoolDriver:
    """One driver a GPU pool runs."""

    pool: Pool
    version: str  # full version (580.173.02) or branch (580)
    source: str  # "operator" | "image"
    spec: DriverSpec | None  # the operator driver (Helm values default or NVIDIADriver), None for baked drivers
    # Baked drivers chosen per GPU at boot: the instance types of the pool that load this one (None: all).
    instance_types: tuple[str, ...] | None = None

    def runs_on(self, instance_type: str) -> bool:
        return self.instance_types is None or instance_type in self.instance_types

    @property
    def precompiled(self) -> bool:
        return self.spec is not None and self.spec.use_precompiled

    def describe(self) -> str:
        if self.spec is None:
            release = f" {self.pool.image_version}" if self.pool.image_version else ""
            image = self.pool.os or ("EKS Auto Mode" if self.pool.auto_mode else "node")
            return f"driver {self.version} baked into the {image}{release} image"
        kind = "precompiled " if self.precompiled else ""
        return f"{kind}driver {self.version} from {driver_origin(self.spec)}"


def driver_origin(spec: DriverSpec) -> str:
    """Where an operator driver is declared, for messages."""
    if spec.source != "helm-values":
        return f"NVIDIADriver {spec.name!r}"
    if spec.name == "chart-default":
        return "the GPU Operator release's default (the values pin no driver.version)"
    return "GPU Operator values driver.version"


def gpu_pools(inv: Inventory, matrix: Matrix) -> list[Pool]:
    return inv.gpu_pools(matrix.is_gpu_instance)


def gpu_classed_pools(inv: Inventory, matrix: Matrix) -> list[tuple[Pool, str]]:
    """Every pool classed as an NVIDIA GPU pool, with why: `gpu_nodes_tainted.gpu_reason` (GPU instance types,
    the label contract, an NVIDIA AMI type, GPU requirements) or the nvidia.com/gpu taint. Unlike `gpu_pools`,
    a pool whose instance types the matrix does not know is one when something else says it is."""
    from .gpu_nodes_tainted import gpu_reason  # noqa: PLC0415 - rules import this module; keep the import lazy

    classed = []
    for pool in inv.pools:
        reason = gpu_reason(pool, matrix.is_gpu_instance) or ("the nvidia.com/gpu taint" if pool.has_gpu_taint
                                                               else None)
        if reason is not None:
            classed.append((pool, reason))
    return classed


def pool_kubernetes(inv: Inventory, pool: Pool) -> str | None:
    """The Kubernetes version of a pool's nodes: its kubelet version, else the control plane's."""
    return pool.kubelet_version or inv.control_plane_version


def chart_default_driver(inv: Inventory, matrix: Matrix) -> str | None:
    """The driver the GPU Operator release installs when its values pin none (`driver.version` chart default)."""
    release = inv.operator
    if release is None or release.version is None:
        return None
    known = matrix.operator(release.version)
    return known.default_driver if known is not None else None


def operator_drivers_for(inv: Inventory, matrix: Matrix, pool: Pool) -> list[DriverSpec]:
    """The operator drivers whose node selector matches the pool (the chart default included)."""
    return inv.drivers_for(pool, chart_default_driver(inv, matrix))


def pool_drivers(inv: Inventory, matrix: Matrix, pool: Pool, today: date) -> list[PoolDriver]:
    """Every driver the pool's nodes run (more than one is a conflict `one-driver-per-pool` reports)."""
    source = pool.driver_source
    if source == "operator":
        return [PoolDriver(pool, d.version, "operator", d) for d in operator_drivers_for(inv, matrix, pool)]
    if source == "image":
        if pool.driver_label:
            return [PoolDriver(pool, pool.driver_label, "image", None)]
        os_name = as_os(pool.os)
        kubernetes = pool_kubernetes(inv, pool)
        if os_name is None or kubernetes is None:
            return []
        return baked_pool_drivers(matrix, pool, os_name, kubernetes, today)
    return []


def baked_pool_drivers(matrix: Matrix, pool: Pool, os_name: OsName, kubernetes: str, today: date) -> list[PoolDriver]:
    """The branches the pool's pinned image release loads, one PoolDriver per branch with the instance types that
    load it (None when every instance type of the pool loads the same one)."""
    image_version = pool.image_version
    if unreadable_image_version(pool, os_name) is not None:
        return []  # never a guess: `gpu-driver-branch-lifecycle-unseen` names the value the gate cannot read
    by_branch: dict[int, list[str]] = {}
    for instance_type in pool.instance_types or (None,):
        branch = matrix.baked_driver_branch(
            os_name, kubernetes, today, instance_type=instance_type, image_version=image_version,
            branch_pin=pool.driver_branch_pin,
        )
        if branch is not None:
            by_branch.setdefault(branch, []).extend([instance_type] if instance_type else [])
    if len(by_branch) == 1:
        return [PoolDriver(pool, str(next(iter(by_branch))), "image", None)]
    return [PoolDriver(pool, str(b), "image", None, tuple(types)) for b, types in sorted(by_branch.items())]


@dataclass(frozen=True)
class JudgedDriver:
    """The driver release a CUDA check judges a pool's driver as, and why, for messages."""

    release: str  # a full version (580.178.04), or the version given when it does not parse
    note: str  # " (judged as ..., ...)", empty when the driver is judged as given


def judged_driver(matrix: Matrix, driver: str, *, os: str | None, image_version: str | None,
                  kubernetes: str | None, instance_types: Iterable[str], today: date) -> JudgedDriver:
    """What a CUDA check judges a pool's driver as.

    A full version is judged as given. A bare branch (`580`, a baked image's label) is judged as the driver the
    pool's pinned image release ships (`Matrix.driver_for_image`) when that release's row is confirmed and every
    instance type of the pool loads that one release of the branch; otherwise as the branch's first known
    release, the weakest driver the image could carry, with the reason the release was not used.
    """
    try:
        release = matrix.weakest_release(driver)
    except ValueError:
        return JudgedDriver(driver, "")  # `judged` turns the unparseable version into a finding naming it
    if release == driver:
        return JudgedDriver(driver, "")
    first = f" (judged as {release}, the branch's first release"
    os_name = as_os(os)
    pinned = parse_image_version_or_none(os_name, image_version) if os_name and image_version else None
    if os_name is None or pinned is None:
        return JudgedDriver(release, first + ": the pool pins no image release)")
    if kubernetes is None:
        return JudgedDriver(release, first + ": the pool's Kubernetes version is unknown)")
    shipped: set[str] = set()
    source = ""
    for instance_type in tuple(instance_types) or (None,):
        try:
            image = matrix.driver_for_image(os_name, image_version, instance_type, kubernetes, today=today)
        except ValueError:
            image = None
        if image is None or image.version is None or not image.confirmed:
            where = f"{os_name} {pinned}"
            why = "its driver table is not confirmed" if image is not None and not image.confirmed else \
                "the matrix cannot tell which driver it loads"
            return JudgedDriver(release, first + f": {where} is pinned but {why})")
        shipped.add(image.version)
        source = image.source
    version = next(iter(shipped))
    shipped_version = parse_driver_version(version)
    branch = parse_driver_version(driver).branch
    if len(shipped) != 1:
        why = f"its nodes load {' or '.join(sorted(shipped))} by instance type"
    elif shipped_version.branch != branch:
        why = f"it ships {version}, not R{branch}"
    elif shipped_version.is_branch_only:
        why = f"the matrix records only the branch R{branch} it ships, not the release"
    else:
        return JudgedDriver(version, f" (judged as {version}, what {os_name} {pinned} ships; source: {source})")
    return JudgedDriver(release, first + f": {os_name} {pinned} is pinned but {why})")


def unreadable_image_version(pool: Pool, os_name: OsName) -> str | None:
    """Why the pool's pinned image release cannot be read (the parser's message, naming the value and the forms
    it reads), or None when it reads or the pool pins none. A pool whose release the gate cannot read loads a
    driver nobody can name: no branch is judged for it, and the unseen twin says so."""
    if pool.image_version is None:
        return None
    try:
        parse_image_version(os_name, pool.image_version)
    except ValueError as err:
        return str(err)
    return None


def parse_image_version_or_none(os_name: OsName, value: str) -> str | None:
    """The canonical pinned release, or None for `latest` or a value that does not parse (config validates it)."""
    try:
        return parse_image_version(os_name, value)
    except ValueError:
        return None


@dataclass(frozen=True)
class ContainerCuda:
    """The CUDA runtime of one GPU container and what the image tells about forward compatibility."""

    cuda: str
    forward_compat: bool
    admitted_branches: tuple[int, ...] | None
    origin: str  # where it was read, for messages


def image_cuda(matrix: Matrix, image: str) -> ContainerCuda | None:
    known = matrix.image_cuda(image)
    if known is None:
        return None
    return ContainerCuda(str(known.cuda), known.forward_compat, known.admitted_branches, f"image {image}")


def label_cuda(workload: Workload) -> str | None:
    """The `gpu-platform.io/cuda` label when it is a CUDA version; None when absent or malformed."""
    label = workload.cuda_label
    if not label:
        return None
    try:
        parse_cuda_version(label)
    except ValueError:
        return None
    return label


def built_cuda(matrix: Matrix, builds: Builds | None, workload: Workload, image: str) -> ContainerCuda | None:
    """The CUDA of the base image of the Dockerfile the stack builds the container's image from, when the matrix
    knows that base image's tag (`FROM nvidia/cuda:12.2.0-runtime-ubuntu22.04`); None otherwise."""
    build = builds.of(workload.urn, image) if builds else None
    if build is None:
        return None
    base, where = base_image(build)
    known = matrix.image_cuda(base) if base is not None else None
    if known is None:
        return None
    return ContainerCuda(str(known.cuda), known.forward_compat, known.admitted_branches,
                         f"FROM {base} of {where}, built by '{build.resource.name}'")


def container_cuda(matrix: Matrix, workload: Workload, image: str,
                   builds: Builds | None = None) -> ContainerCuda | None:
    """The image's CUDA when the matrix knows the tag, else the base image of the Dockerfile the stack builds it
    from (`builds`), else the workload's label; None when none tells."""
    from_image = image_cuda(matrix, image) or built_cuda(matrix, builds, workload, image)
    if from_image is not None:
        return from_image
    label = label_cuda(workload)
    if label is None:
        return None
    return ContainerCuda(label, False, None, f"label gpu-platform.io/cuda={label}")


@dataclass(frozen=True)
class GpuContainerReach:
    """A GPU container whose CUDA is known, and the GPU pools its workload can be scheduled on."""

    workload: Workload
    container: str
    cuda: ContainerCuda
    reaches: list[Reach]


def gpu_container_reaches(inv: Inventory, matrix: Matrix, builds: Builds | None = None) -> Iterator[GpuContainerReach]:
    """Every container that requests a GPU and whose CUDA is known, with the GPU pools it can reach.

    `builds`: the images the stack builds, whose Dockerfile's FROM line tells a CUDA the tag does not.

    The pools are every pool gpu-nodes-tainted calls a GPU pool (instance types, families of the matrix, GPU
    label requirements, EKS Auto Mode's eks.amazonaws.com labels), as gpu-workload-schedulable reaches them.
    """
    from .gpu_nodes_tainted import gpu_reason  # noqa: PLC0415 - rules import this module; keep the import lazy

    pools = [p for p in inv.pools if gpu_reason(p, matrix.is_gpu_instance)]
    for workload in inv.workloads:
        containers = [c for c in workload.containers if c.gpus > 0]
        if not containers:
            continue
        reaches = inv.reach(workload, pools)
        for container in containers:
            cuda = container_cuda(matrix, workload, container.image, builds)
            if cuda is not None:
                yield GpuContainerReach(workload, container.name, cuda, reaches)


def judged(query: Callable[..., list[Finding]], *args: Any, **kwargs: Any) -> list[Finding]:
    """Run a matrix query; a value it cannot parse (`ValueError`) becomes a mandatory finding naming it.

    Stack values are user input (`driver.version: latest`, `version: "1.3x"`): the policy fails
    closed with the parser's message (value, expected form) instead of crashing the whole pack.
    """
    try:
        return query(*args, **kwargs)
    except ValueError as err:
        return [Finding("mandatory", "value-invalid", str(err), "")]


def finding_text(finding: Finding) -> str:
    """The finding's message, its nearest valid choices when the message does not already give them, its source."""
    text = finding.message.rstrip()
    if finding.nearest and finding.nearest[0] not in text:
        text += f" Nearest valid: {', '.join(finding.nearest)}."
    if finding.source and finding.source not in text:
        text += f" (source: {finding.source})"
    return text


def report_findings(report: ReportViolation, findings: Iterable[Finding], *, context: str, urn: str | None,
                    advisory_prefix: bool, seen: set[str] | None = None) -> None:
    """Report every non-ok finding as `<context>: <finding>`.

    `advisory_prefix`: the policy is mandatory, so its advisory findings carry `ADVISORY_PREFIX`
    for its `-caveats` twin. `seen` drops a message already reported (several pools, one fact).
    """
    for finding in findings:
        if finding.level == "ok":
            continue
        message = f"{context}: {finding_text(finding)}"
        if finding.level == "advisory" and advisory_prefix:
            message = ADVISORY_PREFIX + message
        if seen is not None:
            if message in seen:
                continue
            seen.add(message)
        report(message, urn)

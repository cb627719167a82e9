"""`python -m tools.matrix`: ask the compatibility matrix offline.

    python -m tools.matrix check --os ubuntu-24.04 --driver 580.173.02 --operator v26.7.0 \
        [--instance-type g5.xlarge] [--cuda 12.8] [--kubernetes 1.35] [--kubelet 1.35]
        [--image-version v20260917] [--driver-branch lts|pb] [--pool-kind karpenter-nodepool]
        [--from-driver 580.173.02] [--json]
    python -m tools.matrix drivers --os ubuntu-24.04 --operator v26.7.0 [--instance-type p6-b200.48xlarge]
        [--image-version v1.68.0] [--json]
    python -m tools.matrix refresh [--fetch] [--write] [--upstream DIR] [--matrix FILE] [--lock FILE]
    python -m tools.matrix stale [--days 180] [--today YYYY-MM-DD] [--matrix FILE]

Exit status: 0 compatible (advisories allowed), 1 not compatible, 2 bad arguments (one error line on stderr).
`refresh` exits 1 when matrix.yaml differs from what NVIDIA publishes (tools.matrix.nvidia_upstream reads it)
or, with --fetch, from the AL2023 / Bottlerocket release notes and driver tables (tools.matrix.image_releases);
`refresh --fetch --write` also moves the NVIDIA pins of upstream.lock.json forward (tools.upstream.pins).
`stale` lists rows whose `reviewed` date is older than --days and always exits 0.
The contract is CONFIG.md section 3; the facts and rules live in policies/gpu_guard/matrix.{yaml,py}.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import date, timedelta
from pathlib import Path
from typing import Annotated, Any, cast

import typer
from pydantic import BaseModel

from policies.gpu_guard.matrix import (
    MATRIX_PATH,
    OS_NAMES,
    UNJUDGED_MARK,
    Finding,
    Matrix,
    MatrixError,
    OsName,
    ToolkitMode,
    load_matrix,
    load_matrix_file,
    parse_image_version,
    worst_level,
)
from policies.gpu_guard.versions import parse_cuda_version, parse_driver_version, parse_kube_minor
from tools.matrix import image_releases as release_sources
from tools.matrix import refresh as matrix_refresh
from tools.matrix.coverage import coverage, json_verdict, verdict_line
from tools.matrix.image_env import require_cuda_differences
from tools.matrix.nvidia_upstream import UpstreamError, default_upstream_dir, read_upstream
from tools.upstream import lock as upstream_lock
from tools.upstream import pins as upstream_pins

EXIT_OK = 0
EXIT_INCOMPATIBLE = 1
EXIT_USAGE = 2
PROG = "gpu-platform matrix"  # .venv/bin/gpu-platform matrix (tools/cli.py); python -m tools.matrix runs the same

app = typer.Typer(
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    help="Check driver / OS / GPU Operator / CUDA / Kubernetes combinations against the compatibility matrix.",
)


class UsageProblem(Exception):
    """A bad argument: printed as one `error:` line, exit status 2."""


def _os(value: str) -> OsName:
    if value not in OS_NAMES:
        raise UsageProblem(f"--os {value!r} is not a node OS; choose one of {', '.join(OS_NAMES)}")
    return cast(OsName, value)


def _today(value: str | None) -> date:
    if value is None:
        return date.today()
    try:
        return date.fromisoformat(value)
    except ValueError as err:
        raise UsageProblem(f"--today {value!r} is not an ISO date; use YYYY-MM-DD, e.g. 2026-11-29") from err


def _operator(matrix: Matrix, value: str) -> str:
    if matrix.operator(value) is None:
        newer = matrix.newer_operator(value)
        if newer is not None:
            raise UsageProblem(f"--operator {value!r}: {newer}")
        text, _nearest = matrix.unknown_operator_text(value)
        raise UsageProblem(f"--operator {value!r}: {text}")
    return value


def _instance(matrix: Matrix, value: str | None) -> str | None:
    if value is not None and not matrix.is_gpu_instance(value):
        family = value.partition(".")[0]
        sizes = [name for name in matrix.instance_types() if name.partition(".")[0] == family]
        hint = f"sizes of {family}: {', '.join(sizes)}" if sizes else "not a known GPU instance family"
        raise UsageProblem(f"--instance-type {value!r} is not a known GPU instance type ({hint})")
    return value


IMAGE_VERSION_HELP = (
    "AL2023 / Bottlerocket image release the pool pins (v20260917, al2023@v20260917, v1.68.0); default: the newest"
)


def _image_version(os_value: OsName, value: str | None) -> None:
    if value is None:
        return
    if os_value not in ("al2023", "bottlerocket"):
        raise UsageProblem(
            f"--image-version applies to al2023 and bottlerocket (their images bake the driver), not {os_value}"
        )
    try:
        parse_image_version(os_value, value)
    except ValueError as err:
        raise UsageProblem(f"--image-version: {err}") from err


# The values of a Bottlerocket pool's nvidiaDriverBranch (CONFIG.md: settings.kernel.drivers.nvidia.branch).
DRIVER_BRANCHES = ("lts", "pb")
POOL_KINDS = ("managed-node-group", "self-managed", "karpenter-nodepool")


def _driver_branch(os_value: OsName, value: str | None) -> None:
    if value is None:
        return
    if os_value != "bottlerocket":
        raise UsageProblem(
            f"--driver-branch applies to bottlerocket (settings.kernel.drivers.nvidia.branch), not {os_value}"
        )
    if value not in DRIVER_BRANCHES:
        raise UsageProblem(f"--driver-branch {value!r} is not a branch setting; use lts or pb")


def _validate(kind: str, value: str | None, parse: Any) -> None:
    if value is None:
        return
    try:
        parse(value)
    except ValueError as err:
        raise UsageProblem(f"--{kind}: {err}") from err


def _finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "level": finding.level,
        "rule": finding.rule,
        "message": finding.message,
        "source": finding.source,
        "nearest": list(finding.nearest),
    }


def serving_image_checks(matrix: Matrix, image: str | None, instance_type: str | None,
                         ) -> tuple[list[Finding], list[tuple[str, str]]]:
    """The serving-image checks of a recorded serving image (vLLM, TGI) given as --cuda: the architectures it is
    compiled for against --instance-type's GPU (serving-image-architecture), and what this query cannot judge."""
    if image is None or matrix.serving_tag(image) is None:
        return [], []
    not_checked = [("serving-model-fits", "the model, its size and the server's flags are not inputs of this query: "
                                          "the stack's config check and the policy pack judge them")]
    if instance_type is None:
        not_checked.insert(0, ("serving-image-architecture",
                               f"no --instance-type: the GPU {image} must be compiled for is not known"))
        return [], not_checked
    return matrix.image_architecture(image, instance_type), not_checked


@app.command()
def check(
    *,
    os_name: Annotated[str, typer.Option("--os", help=f"Node OS: {', '.join(OS_NAMES)}")],
    driver: Annotated[str, typer.Option(help="Driver version (580.173.02), or the branch for baked images (580)")],
    operator: Annotated[str | None, typer.Option(help="GPU Operator release, e.g. v26.7.0")] = None,
    instance_type: Annotated[str | None, typer.Option(help="EC2 instance type, e.g. g5.xlarge")] = None,
    cuda: Annotated[
        str | None, typer.Option(help="CUDA runtime (12.8, 12.2.2) or an image (nvidia/cuda:13.0.0-runtime-...)")
    ] = None,
    kubernetes: Annotated[str | None, typer.Option(help="EKS control plane version, e.g. 1.35")] = None,
    kubelet: Annotated[str | None, typer.Option(help="Node kubelet version (default: --kubernetes)")] = None,
    from_driver: Annotated[
        str | None,
        typer.Option(help="The driver the pool runs now, for a move to --driver: a shorter-supported branch is named"),
    ] = None,
    precompiled: Annotated[bool, typer.Option(help="Precompiled driver containers (driver.usePrecompiled)")] = False,
    image_version: Annotated[str | None, typer.Option(help=IMAGE_VERSION_HELP)] = None,
    toolkit_mode: Annotated[
        str | None,
        typer.Option(help="How the container toolkit injects GPUs: legacy, cdi or jit-cdi (default: the operator "
                          "chart's; CDI off on toolkit v1.18.0+ is jit-cdi)"),
    ] = None,
    disable_require: Annotated[
        bool, typer.Option(help="The container sets NVIDIA_DISABLE_REQUIRE=true (no NVIDIA_REQUIRE_CUDA check)")
    ] = False,
    driver_branch: Annotated[
        str | None,
        typer.Option(help="Bottlerocket: the pool's nvidiaDriverBranch, lts or pb (settings.kernel.drivers.nvidia."
                          "branch); default: the image picks from the GPU"),
    ] = None,
    pool_kind: Annotated[
        str | None,
        typer.Option(help="The pool: managed-node-group, self-managed or karpenter-nodepool (default: answer for "
                          "each where it matters, e.g. fractional GPUs)"),
    ] = None,
    today: Annotated[str | None, typer.Option(help="Judge lifecycles at this ISO date (default: today)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document")] = False,
) -> int:
    """Print a verdict, each reason with its source, and the nearest valid choices."""
    matrix = load_matrix()
    os_value = _os(os_name)
    _validate("driver", driver, parse_driver_version)
    _validate("kubernetes", kubernetes, parse_kube_minor)
    _validate("kubelet", kubelet, parse_kube_minor)
    _validate("from-driver", from_driver, parse_driver_version)
    if cuda is not None and ":" not in cuda and "/" not in cuda:
        _validate("cuda", cuda, parse_cuda_version)
    if kubelet is not None and kubernetes is None:
        raise UsageProblem("--kubelet needs --kubernetes (the control plane version it is compared with)")
    _image_version(os_value, image_version)
    modes: dict[str, ToolkitMode] = {"legacy": "legacy", "cdi": "cdi", "jit-cdi": "jit-cdi"}
    if toolkit_mode is not None and toolkit_mode not in modes:
        raise UsageProblem(f"--toolkit-mode {toolkit_mode!r} is not a mode; use legacy, cdi or jit-cdi")
    mode: ToolkitMode | None = modes.get(toolkit_mode) if toolkit_mode is not None else None
    _driver_branch(os_value, driver_branch)
    if pool_kind is not None and pool_kind not in POOL_KINDS:
        raise UsageProblem(f"--pool-kind {pool_kind!r} is not a pool kind; use {', '.join(POOL_KINDS)}")
    when = _today(today)
    findings = matrix.check(
        os=os_value,
        driver=driver,
        operator=_operator(matrix, operator) if operator is not None else None,
        kubernetes=kubernetes,
        kubelet=kubelet,
        instance_type=_instance(matrix, instance_type),
        cuda=cuda,
        precompiled=precompiled,
        image_version=image_version,
        today=when,
        toolkit_mode=mode,
        disable_require=disable_require,
        branch_pin=driver_branch,
        pool_kind=pool_kind,
    )
    if from_driver is not None:
        findings = [*findings, *matrix.branch_move(from_driver, driver)]
    assumptions, not_checked = coverage(
        matrix, os_value, driver=driver, operator=operator, kubernetes=kubernetes, instance_type=instance_type,
        cuda=cuda, image_version=image_version, toolkit_mode=mode, today=when,
    )
    serving, serving_not_checked = serving_image_checks(matrix, cuda, instance_type)
    findings, not_checked = [*findings, *serving], [*not_checked, *serving_not_checked]
    # A check whose fact is unconfirmed ran but judged nothing: cannot see, cannot pass (the verdict names it).
    not_checked = [*not_checked, *((f.rule, "its fact is unconfirmed, so it judged nothing (its advisory below)")
                                   for f in findings
                                   if f.level == "advisory" and UNJUDGED_MARK in f.message)]
    verdict = verdict_line(findings, not_checked)
    if as_json:
        document = {
            "verdict": json_verdict(findings, not_checked),
            "verdict_text": verdict,
            "level": worst_level(findings),
            "input": {
                "os": os_value,
                "driver": driver,
                "operator": operator,
                "instance_type": instance_type,
                "cuda": cuda,
                "kubernetes": kubernetes,
                "kubelet": kubelet,
                "from_driver": from_driver,
                "precompiled": precompiled,
                "image_version": image_version,
                "toolkit_mode": toolkit_mode,
                "disable_require": disable_require,
                "driver_branch": driver_branch,
                "pool_kind": pool_kind,
            },
            "assumptions": assumptions,
            "not_checked": [{"check": check, "why": why} for check, why in not_checked],
            "findings": [_finding_json(f) for f in findings],
        }
        typer.echo(json.dumps(document, indent=2))
    else:
        typer.echo(f"verdict: {verdict}")
        for assumption in assumptions:
            typer.echo(f"  assumes: {assumption}")
        for check_name, why in not_checked:
            typer.echo(f"  not checked: {check_name} ({why})")
        order = {"mandatory": 0, "advisory": 1, "ok": 2}
        for finding in sorted(findings, key=lambda f: order[f.level]):
            typer.echo(f"  [{finding.level}] {finding.rule}: {finding.message}")
            typer.echo(f"      source: {finding.source}")
            if finding.nearest and finding.level != "ok":
                typer.echo(f"      nearest valid: {', '.join(finding.nearest)}")
    return EXIT_INCOMPATIBLE if worst_level(findings) == "mandatory" else EXIT_OK


@app.command()
def drivers(
    *,
    os_name: Annotated[str, typer.Option("--os", help=f"Node OS: {', '.join(OS_NAMES)}")],
    operator: Annotated[str, typer.Option(help="GPU Operator release, e.g. v26.7.0")],
    instance_type: Annotated[str | None, typer.Option(help="EC2 instance type the pool launches")] = None,
    image_version: Annotated[str | None, typer.Option(help=IMAGE_VERSION_HELP)] = None,
    today: Annotated[str | None, typer.Option(help="Judge lifecycles at this ISO date (default: today)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON document")] = False,
) -> int:
    """List the driver versions that fit the OS, operator release and instance type: in support first, newest first."""
    matrix = load_matrix()
    os_value = _os(os_name)
    _operator(matrix, operator)
    _instance(matrix, instance_type)
    _image_version(os_value, image_version)
    when = _today(today)
    versions = matrix.drivers(
        os=os_value, operator=operator, instance_type=instance_type, image_version=image_version, today=when
    )
    op = matrix.operator(operator)
    rows: list[dict[str, Any]] = []
    for version in versions:
        lifecycle = matrix.branch_lifecycle(version, when)
        advisories = [f.message for f in lifecycle if f.level == "advisory"]
        rows.append(
            {"version": version, "default": op is not None and version == op.default_driver, "notes": advisories}
        )
    if as_json:
        document = {
            "os": os_value,
            "operator": operator,
            "instance_type": instance_type,
            "drivers": rows,
            "source": op.source if op else None,
        }
        typer.echo(json.dumps(document, indent=2))
    else:
        target = f"{os_value}, GPU Operator {operator}" + (f", {instance_type}" if instance_type else "")
        if not rows:
            typer.echo(f"no driver fits {target}")
        else:
            typer.echo(f"drivers that fit {target} (in support first, newest first):")
            for row in rows:
                flags = " (operator default)" if row["default"] else ""
                notes = f"  [advisory] {row['notes'][0]}" if row["notes"] else ""
                typer.echo(f"  {row['version']}{flags}{notes}")
        if op is not None:
            typer.echo(f"source: {op.source}")
    return EXIT_OK if rows else EXIT_INCOMPATIBLE


@app.command()
def images(
    stack: Annotated[str, typer.Option(help="Stack whose Pulumi.<stack>.yaml is read")] = "dev",
    config_file: Annotated[Path | None, typer.Option(help="A stack file to read instead")] = None,
) -> None:
    """The node image of each GPU node group: the pinned imageId, or the first-deploy image it holds."""
    from components.gpu_node_group import stack_image_pins  # noqa: PLC0415 - the program's modules, only here

    for line in stack_image_pins(config_file or Path(__file__).resolve().parents[2] / f"Pulumi.{stack}.yaml"):
        typer.echo(line)


@app.command()
def refresh(
    *,
    fetch: Annotated[bool, typer.Option(help="Read the live sources (GitHub, nvcr.io), not the snapshots")] = False,
    write: Annotated[bool, typer.Option(help="Write the upstream values into the data rows of matrix.yaml")] = False,
    upstream: Annotated[
        Path | None, typer.Option(help="Snapshot folder (default: nvidia/ of the upstream cache, see make upstream)")
    ] = None,
    matrix_file: Annotated[Path, typer.Option("--matrix", help="Matrix file to compare")] = MATRIX_PATH,
    docs_url: Annotated[str, typer.Option(help="Base URL of gpu-operator/*.rst (--fetch)")] = matrix_refresh.DOCS_BASE,
    ci_url: Annotated[str, typer.Option(help="URL of .common-ci.yml (--fetch)")] = matrix_refresh.CI_URL,
    registry: Annotated[
        str | None, typer.Option(help="Registry base URL instead of https://nvcr.io (--fetch)")
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds allowed for each live request (--fetch)")] = 20.0,
    images: Annotated[
        bool, typer.Option(help="Also read NVIDIA_REQUIRE_CUDA from each recorded nvidia/cuda image (--fetch)")
    ] = True,
    image_registry: Annotated[
        str | None, typer.Option(help="Registry base URL instead of Docker Hub for nvidia/cuda (--fetch)")
    ] = None,
    image_releases: Annotated[
        bool,
        typer.Option(help="Also read the AL2023 and Bottlerocket release notes and driver tables (--fetch)"),
    ] = True,
    eks_ami_changelog_url: Annotated[
        str, typer.Option(help="URL of awslabs/amazon-eks-ami CHANGELOG.md (--fetch)")
    ] = release_sources.EKS_AMI_CHANGELOG,
    bottlerocket_changelog_url: Annotated[
        str, typer.Option(help="URL of bottlerocket-os/bottlerocket CHANGELOG.md (--fetch)")
    ] = release_sources.BOTTLEROCKET_CHANGELOG,
    bottlerocket_docs_url: Annotated[
        str, typer.Option(help="Base URL of the bottlerocket.dev GPU driver pages (--fetch)")
    ] = release_sources.BOTTLEROCKET_DOCS,
    today: Annotated[str | None, typer.Option(help="Date of the reading and of new rows (default: today)")] = None,
    lock: Annotated[Path, typer.Option(help="Upstream lockfile whose NVIDIA pins --fetch --write moves")] = (
        upstream_lock.LOCK_PATH
    ),
    github_api: Annotated[str, typer.Option(help="GitHub API base (--fetch --write)")] = upstream_pins.API_BASE,
    github_raw: Annotated[str, typer.Option(help="Raw file base (--fetch --write)")] = upstream_lock.RAW_BASE,
) -> int:
    """Print the differences between matrix.yaml and what NVIDIA, AWS and Bottlerocket publish; exit 1 on one."""
    when = _today(today)
    if timeout <= 0:
        raise UsageProblem(f"--timeout {timeout:g} must be positive, e.g. 20")
    if fetch and write:
        _move_pins(lock, github_api, github_raw, timeout)
    data = load_matrix_file(matrix_file).data
    try:
        if fetch:
            reading = matrix_refresh.fetch_reading(
                docs_base=docs_url, ci_url=ci_url, registry=registry, timeout_s=timeout, today=when
            )
        else:
            reading = read_upstream(upstream or default_upstream_dir())
    except UpstreamError as err:
        hint = "" if fetch else "; run `make upstream`, or pass --upstream DIR (laid out as nvidia/) or --fetch"
        raise UsageProblem(f"cannot read upstream: {err}{hint}") from err
    differences = matrix_refresh.compare(data, reading)
    if fetch and images:
        try:
            found = require_cuda_differences(data, registry=image_registry, timeout_s=timeout)
        except UpstreamError as err:
            raise UsageProblem(f"cannot read upstream: {err}; pass --no-images to skip the image environments") from err
        differences += [
            matrix_refresh.Difference("image_require_cuda", image, "admitted_branches", list(mine), list(theirs), False)
            for image, mine, theirs in found
        ]
    origin = reading.origin
    if fetch and image_releases:
        try:
            differences += release_sources.image_release_differences(
                data,
                timeout_s=timeout,
                eks_ami_changelog=eks_ami_changelog_url,
                bottlerocket_changelog=bottlerocket_changelog_url,
                bottlerocket_docs=bottlerocket_docs_url,
            )
        except UpstreamError as err:
            raise UsageProblem(
                f"cannot read upstream: {err}; pass --no-image-releases to skip the node image release notes"
            ) from err
        origin += f", {eks_ami_changelog_url}, {bottlerocket_changelog_url}, {bottlerocket_docs_url}"
    if not differences:
        typer.echo(f"{matrix_file} agrees with upstream ({origin})")
        return EXIT_OK
    typer.echo(f"{len(differences)} difference(s) between {matrix_file} and upstream ({origin}):")
    for difference in differences:
        typer.echo(f"  {difference.describe()}")
    if not write:
        typer.echo("run with --write to put the upstream values into the data rows, or add a row-level override")
        return EXIT_INCOMPATIBLE
    written = matrix_refresh.write(matrix_file, differences, when)
    left = [d for d in differences if d not in written]
    typer.echo(f"wrote {len(written)} field(s) into {matrix_file}; each row keeps its source and reviewed date")
    for difference in left:
        typer.echo(f"  needs a hand edit: {difference.describe()}")
    return EXIT_INCOMPATIBLE if left else EXIT_OK


def _move_pins(lock: Path, api: str, raw: str, timeout: float) -> None:
    """Move the NVIDIA pins of `lock` to the newest upstream commits; rewrite it when one moved."""
    try:
        pins = upstream_lock.load(lock)
        moved, said = upstream_pins.move(pins, cache=upstream_lock.cache_dir(), api=api, raw=raw, timeout_s=timeout)
    except (upstream_lock.LockError, upstream_pins.PinError) as err:
        raise UsageProblem(f"cannot move the upstream pins: {err}") from err
    if not said:
        typer.echo(f"{lock}: the NVIDIA pins are at the newest upstream commits")
        return
    upstream_lock.dump(moved, lock)
    typer.echo(f"{lock}: {len(said)} pin(s) moved forward (review them in the pull request):")
    for line in said:
        typer.echo(f"  {line}")


# The field that names a row, per section, in the order the first present one is taken.
_ROW_KEYS = ("version", "release", "cuda", "family", "model", "os", "os_tag", "repository", "id", "major", "branch")


def _reviewed_rows(data: BaseModel, path: str = "") -> Iterator[tuple[str, date]]:
    for name in type(data).model_fields:
        value = getattr(data, name)
        rows = value if isinstance(value, tuple) else ()
        for row in rows:
            if not isinstance(row, BaseModel):
                continue
            key = next((str(getattr(row, k)) for k in _ROW_KEYS if k in type(row).model_fields), "")
            since = getattr(row, "since", None)
            key = f"{key}@{since.isoformat()}" if isinstance(since, date) else key
            where = f"{path}{name}[{key}]"
            reviewed = getattr(row, "reviewed", None)
            if isinstance(reviewed, date):
                yield where, reviewed
            yield from _reviewed_rows(row, f"{where}.")


@app.command()
def stale(
    *,
    days: Annotated[int, typer.Option(help="A row is stale when reviewed more than this many days ago")] = 180,
    today: Annotated[str | None, typer.Option(help="Judge at this ISO date (default: today)")] = None,
    matrix_file: Annotated[Path, typer.Option("--matrix", help="Matrix file to read")] = MATRIX_PATH,
) -> int:
    """List the rows whose `reviewed` date is older than --days; always exit 0 (a reminder, not a gate)."""
    if days < 0:
        raise UsageProblem(f"--days {days} must be zero or more, e.g. 180")
    cutoff = _today(today) - timedelta(days=days)
    data = load_matrix_file(matrix_file).data
    old = sorted((row for row in _reviewed_rows(data) if row[1] < cutoff), key=lambda row: row[1])
    if not old:
        typer.echo(f"no row of {matrix_file} was reviewed before {cutoff.isoformat()} ({days} days)")
        return EXIT_OK
    typer.echo(f"{len(old)} row(s) of {matrix_file} reviewed before {cutoff.isoformat()} ({days} days):")
    for where, reviewed in old:
        typer.echo(f"  {where}: reviewed {reviewed.isoformat()}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 compatible, 1 not, 2 bad arguments)."""
    command = typer.main.get_command(app)
    try:
        result = command.main(args=list(argv) if argv is not None else None, prog_name=PROG, standalone_mode=False)
    except UsageProblem as err:
        typer.echo(f"error: {err}", err=True)
        return EXIT_USAGE
    except typer.TyperException as err:
        typer.echo(f"error: {err.format_message()} (see {PROG} --help)", err=True)
        return EXIT_USAGE
    except MatrixError as err:
        typer.echo(f"error: the compatibility matrix is invalid: {err}", err=True)
        return EXIT_USAGE
    return result if isinstance(result, int) else EXIT_OK


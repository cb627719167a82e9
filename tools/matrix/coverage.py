"""What `tools.matrix check` assumed for the inputs it was not given, the checks it could not run without them, and
the verdict line that says so: COMPATIBLE only when every check ran (issue 46)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from policies.gpu_guard.matrix import Finding, Matrix, OsName, ToolkitMode, worst_level
from policies.gpu_guard.versions import parse_driver_version, parse_kube_minor


def verdict_line(findings: Sequence[Finding], not_checked: Sequence[tuple[str, str]] = ()) -> str:
    """The verdict line: COMPATIBLE only when every check ran; otherwise it names the checks that ran."""
    level = worst_level(findings)
    if level == "mandatory":
        return "INCOMPATIBLE"
    verdict = "COMPATIBLE (with advisories)" if level == "advisory" else "COMPATIBLE"
    if not not_checked:
        return verdict
    ran = ", ".join(dict.fromkeys(f.rule for f in findings)) or "none"
    return f"{verdict} for the checks run: {ran}; {len(not_checked)} not run (below)"


def json_verdict(findings: Sequence[Finding], not_checked: Sequence[tuple[str, str]]) -> str:
    """incompatible; compatible (every check ran); compatible-for-checks-run (some could not run: `not_checked`)."""
    if worst_level(findings) == "mandatory":
        return "incompatible"
    return "compatible-for-checks-run" if not_checked else "compatible"


def _variants_shipping(
    matrix: Matrix, os_value: OsName, driver: str, *, instance_type: str | None, image_version: str | None, today: date
) -> str:
    """`; R595 only in its Kubernetes 1.37 variant` where the release ships the branch for some versions only."""
    branch = parse_driver_version(driver).branch
    minors = sorted({m for row in matrix.image_releases(os_value) for m in row.drivers if m != "*"},
                    key=parse_kube_minor)
    shipping: list[str] = []
    for minor in minors:
        image = matrix.driver_for_image(os_value, image_version, instance_type, minor, today=today)
        if image is None or not image.published:
            continue
        loaded = [image.version] if image.version is not None else list(image.drivers)
        if any(parse_driver_version(v).branch == branch for v in loaded):
            shipping.append(minor)
    published = [m for m in minors if (i := matrix.driver_for_image(os_value, image_version, instance_type, m,
                                                                    today=today)) is not None and i.published]
    if not published or shipping == published:
        return ""
    if not shipping:
        return ""  # the baked-driver-branch finding says so
    return f"; R{branch} only in its Kubernetes {', '.join(shipping)} variant{'s' if len(shipping) > 1 else ''}"


def coverage(
    matrix: Matrix, os_value: OsName, *, driver: str, operator: str | None, kubernetes: str | None,
    instance_type: str | None, cuda: str | None, image_version: str | None, toolkit_mode: ToolkitMode | None,
    today: date,
) -> tuple[list[str], list[tuple[str, str]]]:
    """What `check` assumed for the inputs it was not given, and the checks it could not run without them."""
    assumptions: list[str] = []
    not_checked: list[tuple[str, str]] = []
    baked = os_value in ("al2023", "bottlerocket")
    if baked and image_version is None:
        release = matrix.newest_image_release(os_value, today)
        assumptions.append(
            f"no --image-version: judged as {release}, the newest {os_value} release recorded as of {today.isoformat()}"
            if release is not None
            else f"no --image-version: judged as the {os_value} image in force on {today.isoformat()} (no recorded "
                 "release)"
        )
    if kubernetes is None:
        if baked:
            assumptions.append(
                "no --kubernetes: the image's driver judged over every Kubernetes version the release publishes (a "
                "pool's variant, one Kubernetes version, may ship only one of those branches)"
                + _variants_shipping(matrix, os_value, driver, instance_type=instance_type,
                                   image_version=image_version, today=today)
            )
        not_checked.append(("kubernetes-version-lifecycle", "no --kubernetes: EKS support of the control plane"))
        not_checked.append(("node-image-published", "no --kubernetes: a node image for the pool's Kubernetes version"))
        if operator is not None:
            not_checked.append(
                ("operator-kubernetes-supported", f"no --kubernetes: the Kubernetes range of GPU Operator {operator}")
            )
    if operator is None and not baked:
        not_checked.append(("driver-branch-supported", "no --operator: whether a GPU Operator release installs this "
                                                       "driver on the OS"))
    if instance_type is None:
        not_checked.append(("gpu-architecture-supported", "no --instance-type: whether the driver runs the GPU"))
        if cuda is not None:
            assumptions.append(
                "no --instance-type: the GPU is assumed to be a data-center GPU (CUDA forward compatibility needs one)"
            )
    if cuda is not None and toolkit_mode is None and (baked or operator is None):
        assumptions.append(
            "no --toolkit-mode" + ("" if baked else " or --operator")
            + ": the container toolkit is assumed in legacy mode (it checks the image's NVIDIA_REQUIRE_CUDA)"
        )
    return assumptions, not_checked

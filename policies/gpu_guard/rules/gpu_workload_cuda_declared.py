"""gpu-workload-cuda-declared: a GPU workload's CUDA runtime is known.

A container that requests `nvidia.com/gpu` must reveal its CUDA runtime: through its image tag
(`nvidia/cuda:12.2.2-...`, NGC release tags the matrix knows, `Matrix.image_cuda`) or through the
pod template label `gpu-platform.io/cuda` (CONFIG.md section 2). A label that is not a CUDA version,
or one that disagrees with the image tag, is a violation too: the matrix policies would judge the
wrong runtime. A two-part label (`12.8`) agrees with any update of that release (`12.8.1`).
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs

from ..base import resource_policy
from ..inventory import CUDA_LABEL, build_inventory
from ..matrix import load_matrix
from ..versions import parse_cuda_version
from ._matrix_common import image_cuda

NAME = "gpu-workload-cuda-declared"


def _agrees(label: str, image: str) -> bool:
    declared, actual = parse_cuda_version(label), parse_cuda_version(image)
    if len(label.strip().split(".")) == 2:
        return declared.minor_key == actual.minor_key
    return declared == actual


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    inv = build_inventory([args])
    if not inv.workloads:
        return
    matrix = load_matrix()
    workload = inv.workloads[0]
    label = workload.cuda_label
    if label is not None:
        try:
            parse_cuda_version(label)
        except ValueError:
            if workload.gpus > 0:
                report(f"{workload.kind} {workload.name!r} label {CUDA_LABEL}={label!r} is not a CUDA version; "
                       "set it to the image's CUDA runtime as <major>.<minor>[.<update>], e.g. 12.8 or 12.2.2.", None)
            return
    for container in workload.containers:
        if container.gpus <= 0:
            continue
        known = image_cuda(matrix, container.image)
        where = f"{workload.kind} {workload.name!r} container {container.name!r} (image {container.image})"
        if known is None and label is None:
            report(f"{where} requests nvidia.com/gpu but its CUDA runtime is unknown: the image tag is not "
                   "an nvidia/cuda or known NGC release tag and the pod template has no "
                   f"{CUDA_LABEL} label; add the label with the image's CUDA version, e.g. {CUDA_LABEL}: \"12.8\".",
                   None)
        elif known is not None and label is not None and not _agrees(label, known.cuda):
            report(f"{where} declares {CUDA_LABEL}={label} but the image tag says CUDA {known.cuda}; "
                   f"set the label to {known.cuda} (or drop it: the tag already tells).", None)


resource_policy(
    name=NAME,
    description="A GPU workload's CUDA runtime is known from its image tag or the gpu-platform.io/cuda label.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

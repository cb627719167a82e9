"""gpu-workload-cuda-declared: a GPU workload's CUDA runtime is known.

A container that requests `nvidia.com/gpu` reveals its CUDA runtime through its image tag
(`nvidia/cuda:12.2.2-...`, NGC release tags the matrix knows, `Matrix.image_cuda`), through the `FROM`
line of the Dockerfile the program builds the image from (`_dockerfile`: pulumi-docker-build, pulumi-docker,
awsx `ecr.Image`), or through the pod template label `gpu-platform.io/cuda` (CONFIG.md section 2).

What the pack sees and blocks on (`gpu-workload-cuda-declared`, mandatory): a label that is not a CUDA
version, or one that disagrees with the image tag: the matrix policies would judge the wrong runtime. A
two-part label (`12.8`) agrees with any update of that release (`12.8.1`).

Cannot see, cannot block: a runtime that neither the tag, nor a Dockerfile the stack builds, nor the label
tells is not known to the pack, and an unknown is no fault of the workload. The advisory twin
`gpu-workload-cuda-declared-unseen` (a stack policy: only the whole stack links a workload to the image it
builds) names the label that lets the pack judge, and why the Dockerfile did not tell where there is one;
`cuda-driver-compatible` cannot judge that workload until then.
"""

from __future__ import annotations

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, StackValidationArgs

from ..base import resource_policy, stack_policy
from ..inventory import CUDA_LABEL, Workload, build_inventory
from ..matrix import load_matrix
from ..versions import parse_cuda_version
from ._dockerfile import Builds, base_image
from ._matrix_common import built_cuda, image_cuda

NAME = "gpu-workload-cuda-declared"
UNSEEN = f"{NAME}-unseen"


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
        if known is not None and label is not None and not _agrees(label, known.cuda):
            report(f"{where} declares {CUDA_LABEL}={label} but the image tag says CUDA {known.cuda}; "
                   f"set the label to {known.cuda} (or drop it: the tag already tells).", None)


def _unseen(workload: Workload, builds: Builds, report: ReportViolation) -> None:
    if workload.cuda_label is not None:
        return  # a label, right or wrong: gpu-workload-cuda-declared judges it
    matrix = load_matrix()
    for container in workload.containers:
        if container.gpus <= 0:
            continue
        if image_cuda(matrix, container.image) or built_cuda(matrix, builds, workload, container.image):
            continue
        where = f"{workload.kind} {workload.name!r} container {container.name!r} (image {container.image})"
        build = builds.of(workload.urn, container.image)
        if build is None:
            why = ("the image tag is not an nvidia/cuda or known NGC release tag, and the stack builds no image "
                   "this container is linked to")
        else:
            base, read = base_image(build)
            why = (f"it runs the image '{build.resource.name}' builds, whose base image {base} (FROM of {read}) is "
                   "not an nvidia/cuda or known NGC release tag" if base is not None
                   else f"it runs the image '{build.resource.name}' builds, but {read}")
        report(f"{where} requests nvidia.com/gpu but the pack cannot see its CUDA runtime: {why}. To let the pack "
               f"judge it (cuda-driver-compatible waits on it): label the pod template {CUDA_LABEL}: \"<the image's "
               "CUDA version>\", e.g. \"12.8\", or build it FROM an nvidia/cuda or NGC image.", workload.urn)


def _validate_unseen(args: StackValidationArgs, report: ReportViolation) -> None:
    builds = Builds(args.resources)
    for workload in build_inventory(args.resources).workloads:
        _unseen(workload, builds, report)


resource_policy(
    name=NAME,
    description="A GPU workload's gpu-platform.io/cuda label is a CUDA version and agrees with its image tag.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)
stack_policy(
    UNSEEN,
    "Advisory twin of gpu-workload-cuda-declared: a GPU workload whose CUDA runtime neither its image tag, nor the "
    "FROM line of a Dockerfile the stack builds it from, nor the gpu-platform.io/cuda label tells; it names what "
    "lets the pack judge.",
    _validate_unseen,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of=NAME,
)

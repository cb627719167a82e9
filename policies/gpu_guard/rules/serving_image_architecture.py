"""serving-image-architecture: a serving image is compiled for the GPU of every instance type its workload can reach.

A vLLM or TGI image carries kernels for the compute capabilities of its TORCH_CUDA_ARCH_LIST only: the list of
that release and variant, per CPU architecture (matrix serving_images, each row citing its tag). On a GPU none of
them runs on, CUDA fails with "no kernel image is available for execution on the device"; on a CPU architecture
the release publishes no image for, the node cannot run it at all. The rule of which entries run on which GPU
(same major at an equal or higher minor, or +PTX) is in policies/gpu_guard/matrix/serving_images.py with its
source. Judged on the workload alone, before it is created, against the pools it declares
(`gpu-platform.io/reachable-pools`). An image whose tag the matrix does not record is not judged here: its CUDA is
declared instead (gpu-workload-cuda-declared), and cuda-architecture-compatible judges that CUDA release against
each GPU.
"""

from __future__ import annotations

from pulumi_policy import ResourceValidationArgs

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..matrix import load_matrix
from ._reach_annotation import declared_reach
from ._serving import serving_containers

NAME = "serving-image-architecture"


def _validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
    matrix = load_matrix()
    containers = list(serving_containers(args.resource_type, args.props, matrix))
    if not containers:
        return
    for reach in declared_reach(args):
        for container in containers:
            seen: set[str] = set()
            for pool in reach.pools:
                for name in pool.instance_types:
                    for finding in matrix.image_architecture(container.image, name):
                        if finding.level == "mandatory" and finding.message not in seen:
                            seen.add(finding.message)
                            report(f"{reach.workload.kind} {reach.workload.name!r} container {container.name!r} can "
                                   f"run on {name} in GPU pool {pool.name!r}: {finding.message} (source: "
                                   f"{finding.source})", args.urn)


resource_policy(
    name=NAME,
    description="A serving image (vLLM, TGI) is compiled for the GPU architecture of every instance type its workload "
                "can reach; judged on the workload alone.",
    validate=_validate,
    enforcement=EnforcementLevel.MANDATORY,
)

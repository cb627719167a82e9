"""CudaSmokeTest: a Job that runs `nvidia-smi` from a CUDA base image on one GPU pool."""

from __future__ import annotations

from collections.abc import Sequence

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.config import GpuPool
from policies.gpu_guard.matrix import load_matrix, worst_level
from policies.gpu_guard.versions import parse_cuda_version

# Source: https://hub.docker.com/r/nvidia/cuda (tags <cuda>-base-ubuntu<release>)
CUDA_IMAGE_REPOSITORY = "nvidia/cuda"


def smoke_test_cuda(pool: GpuPool) -> str:
    """The newest confirmed CUDA release the matrix says runs on the pool's driver and GPUs (no forward compat).

    Raises ValueError when none does (the pool's driver is older than every CUDA release in the matrix).
    """
    matrix = load_matrix()
    releases = sorted(
        (row for row in matrix.data.cuda_releases if row.confirmed),
        key=lambda row: parse_cuda_version(row.cuda),
        reverse=True,
    )
    for row in releases:
        findings = matrix.cuda_driver(
            row.cuda, pool.driver_version, forward_compat_image=False, admitted_branches=None, data_center_gpu=True
        )
        for instance_type in pool.instance_types:
            findings += matrix.cuda_architecture(row.cuda, instance_type)
        if worst_level(findings) == "ok":
            return row.cuda
    raise ValueError(f"no CUDA release in the compatibility matrix runs on driver {pool.driver_version}")


def smoke_test_image(pool: GpuPool, cuda: str) -> str:
    """`nvidia/cuda:<cuda>-base-ubuntu<release>` for an Ubuntu pool."""
    release = pool.os.removeprefix("ubuntu-")
    return f"{CUDA_IMAGE_REPOSITORY}:{cuda}-base-ubuntu{release}"


class CudaSmokeTest(pulumi.ComponentResource):
    """A one-shot Job proving a GPU pool works: a CUDA base image runs `nvidia-smi` on one GPU of the pool.

    The image is the CUDA base image for the pool's Ubuntu release, at the newest CUDA the matrix says
    the pool's driver runs natively; the pod tolerates the GPU taint, selects the pool by its label,
    requests one `nvidia.com/gpu` and declares its CUDA with `gpu-platform.io/cuda`. It runs under the
    `restricted` Pod Security profile (non-root, no privilege escalation, no capabilities). `pulumi up`
    does not wait for it (the pool may be scaled to zero); read the result with
    `kubectl -n <namespace> logs job/<name>`.

    Requires: GpuOperatorRelease (driver, toolkit, device plugin) and a node in the pool.
    Conflicts: none.
    Sources:
    - Verifying the operator with a CUDA workload:
      https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
    - Skipping the Job await: https://www.pulumi.com/registry/packages/kubernetes/api-docs/batch/v1/job/
    """

    job_name: pulumi.Output[str]
    image: str
    cuda: str

    def __init__(
        self,
        name: str,
        pool: GpuPool,
        *,
        namespace: pulumi.Input[str],
        provider: k8s.Provider,
        depends_on: Sequence[pulumi.Resource] = (),
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        super().__init__("gpu-platform:components:CudaSmokeTest", name, None, opts)
        self.cuda = smoke_test_cuda(pool)
        self.image = smoke_test_image(pool, self.cuda)
        pod_labels = {"app.kubernetes.io/name": "cuda-smoke-test", labels.POOL_LABEL: pool.name,
                      **labels.cuda_workload_labels(self.cuda)}
        job = k8s.batch.v1.Job(
            f"{name}-job",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=f"cuda-smoke-{pool.name}",
                namespace=namespace,
                labels=pod_labels,
                annotations={"pulumi.com/skipAwait": "true"},
            ),
            spec=k8s.batch.v1.JobSpecArgs(
                backoff_limit=2,
                active_deadline_seconds=1800,
                template=k8s.core.v1.PodTemplateSpecArgs(
                    metadata=k8s.meta.v1.ObjectMetaArgs(labels=pod_labels),
                    spec=k8s.core.v1.PodSpecArgs(
                        restart_policy="Never",
                        automount_service_account_token=False,
                        node_selector=labels.pool_node_selector(pool.name),
                        tolerations=[
                            k8s.core.v1.TolerationArgs(
                                key=labels.GPU_TAINT.key,
                                operator="Equal",
                                value=labels.GPU_TAINT.value,
                                effect=labels.GPU_TAINT.effect,
                            )
                        ],
                        security_context=k8s.core.v1.PodSecurityContextArgs(
                            run_as_non_root=True,
                            run_as_user=65534,
                            run_as_group=65534,
                            seccomp_profile=k8s.core.v1.SeccompProfileArgs(type="RuntimeDefault"),
                        ),
                        containers=[
                            k8s.core.v1.ContainerArgs(
                                name="nvidia-smi",
                                image=self.image,
                                command=["nvidia-smi"],
                                resources=k8s.core.v1.ResourceRequirementsArgs(
                                    requests={labels.GPU_RESOURCE: "1", "cpu": "100m", "memory": "128Mi"},
                                    limits={labels.GPU_RESOURCE: "1", "memory": "128Mi"},
                                ),
                                security_context=k8s.core.v1.SecurityContextArgs(
                                    allow_privilege_escalation=False,
                                    read_only_root_filesystem=True,
                                    capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
                                ),
                            )
                        ],
                    ),
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on)),
        )
        self.job_name = job.metadata.name
        self.register_outputs({"jobName": self.job_name, "image": self.image, "cuda": self.cuda})

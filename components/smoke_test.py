"""CudaSmokeTest: a Job that runs the GPU probe (components/probe/probe.py) on one GPU pool."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pulumi
import pulumi_kubernetes as k8s

from components import labels
from components.config import GpuPool
from policies.gpu_guard.matrix import load_matrix, worst_level
from policies.gpu_guard.versions import parse_cuda_version

PROBE_DIR = Path(__file__).resolve().parent / "probe"
PROBE_MOUNT = "/opt/probe"
PROBE_SITE = "/opt/probe-site"
# The probe needs only the standard library and the wheels it installs: the official slim Python image.
# Source: https://hub.docker.com/_/python (tag 3.12-slim-bookworm; the wheels are manylinux_2_17,
# bookworm has glibc 2.36)
PROBE_IMAGE = "python:3.12-slim-bookworm"
# checkov findings this Job keeps on purpose, each with its reason on the object (tests/security/test_checkov.py).
# Annotation format: https://www.checkov.io/2.Basics/Suppressing%20and%20Skipping%20Policies.html (Kubernetes)
CHECKOV_SKIPS = {
    "checkov.io/skip1": "CKV_K8S_43=the official python image is pinned by release tag and pulled Always; the "
                        "probe's own code is the mounted file and its wheels are pinned by version",
}


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


def probe_requirements(cuda: str) -> Path:
    """The probe's pinned NVRTC and runtime wheels for a CUDA release (its major.minor)."""
    version = parse_cuda_version(cuda)
    path = PROBE_DIR / "requirements" / f"cuda-{version.major}.{version.minor}.txt"
    if not path.is_file():
        known = sorted(p.stem.removeprefix("cuda-") for p in (PROBE_DIR / "requirements").glob("cuda-*.txt"))
        raise ValueError(f"the GPU probe has no wheels pinned for CUDA {version.major}.{version.minor} "
                         f"(components/probe/requirements/ has {', '.join(known)})")
    return path


def probe_command(pool: GpuPool, cuda: str) -> list[str]:
    """The probe's command line: this pool, its pinned driver, the workload's CUDA major.minor."""
    version = parse_cuda_version(cuda)
    return ["python", f"{PROBE_MOUNT}/probe.py", "check", "--pool", pool.name, "--driver", pool.driver_version,
            "--cuda", f"{version.major}.{version.minor}"]


class CudaSmokeTest(pulumi.ComponentResource):
    """A one-shot Job proving a GPU pool works: the pinned driver is on the node and a CUDA kernel runs right.

    The Job runs components/probe/probe.py (mounted from a ConfigMap holding that very file) on one GPU of
    the pool. The probe fails, naming the pool, the driver found and the driver expected, when the node's
    driver is not the pool's pin; it then builds a vector-add kernel with NVRTC for the newest CUDA the
    matrix says the pool's driver runs natively, as PTX and as SASS for the GPU it finds, runs both through
    the CUDA runtime and checks every element. An init container installs the pinned NVRTC and runtime
    wheels (components/probe/requirements/cuda-<x.y>.txt) into an emptyDir, so the node needs no CUDA
    toolkit. The pod tolerates the GPU taint, selects the pool by its label, requests one
    `nvidia.com/gpu`, declares its CUDA with `gpu-platform.io/cuda` and runs under the `restricted` Pod
    Security profile. `pulumi up` does not wait for it (the pool may be scaled to zero); read the result
    with `kubectl -n <namespace> logs job/<name>` (docs/probe.md, docs/runbook.md).

    Requires: GpuOperatorRelease (driver, toolkit, device plugin), a node in the pool, and egress to PyPI
    from the node (the init container's pip install).
    Conflicts: none.
    Sources:
    - Verifying the operator with a CUDA workload:
      https://docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/getting-started.html
    - NVIDIA_DRIVER_CAPABILITIES (utility mounts nvidia-smi, compute the CUDA driver):
      https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/docker-specialized.html
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
        self.image = PROBE_IMAGE
        requirements = probe_requirements(self.cuda)
        child = pulumi.ResourceOptions(parent=self, provider=provider, depends_on=list(depends_on))
        pod_labels = {"app.kubernetes.io/name": "cuda-smoke-test", labels.POOL_LABEL: pool.name,
                      **labels.cuda_workload_labels(self.cuda)}
        script = k8s.core.v1.ConfigMap(
            f"{name}-probe",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"cuda-smoke-{pool.name}-probe", namespace=namespace,
                                                labels=pod_labels),
            data={"probe.py": (PROBE_DIR / "probe.py").read_text(), "requirements.txt": requirements.read_text()},
            opts=child,
        )
        # Nothing talks to the probe; it talks only to DNS and, from the init container, to PyPI over HTTPS.
        # Enforced where the cluster enforces NetworkPolicy (VPC CNI network policy, or Calico); source:
        # https://kubernetes.io/docs/concepts/services-networking/network-policies/
        k8s.networking.v1.NetworkPolicy(
            f"{name}-netpol",
            metadata=k8s.meta.v1.ObjectMetaArgs(name=f"cuda-smoke-{pool.name}", namespace=namespace,
                                                labels=pod_labels),
            spec=k8s.networking.v1.NetworkPolicySpecArgs(
                pod_selector=k8s.meta.v1.LabelSelectorArgs(match_labels={
                    "app.kubernetes.io/name": "cuda-smoke-test", labels.POOL_LABEL: pool.name}),
                policy_types=["Ingress", "Egress"],
                egress=[k8s.networking.v1.NetworkPolicyEgressRuleArgs(ports=[
                    k8s.networking.v1.NetworkPolicyPortArgs(protocol="UDP", port=53),
                    k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=53),
                    k8s.networking.v1.NetworkPolicyPortArgs(protocol="TCP", port=443),
                ])],
            ),
            opts=child,
        )
        restricted = k8s.core.v1.SecurityContextArgs(
            allow_privilege_escalation=False,
            read_only_root_filesystem=True,
            capabilities=k8s.core.v1.CapabilitiesArgs(drop=["ALL"]),
        )
        mounts = [
            k8s.core.v1.VolumeMountArgs(name="probe", mount_path=PROBE_MOUNT, read_only=True),
            k8s.core.v1.VolumeMountArgs(name="site", mount_path=PROBE_SITE),
            k8s.core.v1.VolumeMountArgs(name="tmp", mount_path="/tmp"),
        ]
        job = k8s.batch.v1.Job(
            f"{name}-job",
            metadata=k8s.meta.v1.ObjectMetaArgs(
                name=f"cuda-smoke-{pool.name}",
                namespace=namespace,
                labels=pod_labels,
                annotations={"pulumi.com/skipAwait": "true", **CHECKOV_SKIPS},
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
                        init_containers=[
                            k8s.core.v1.ContainerArgs(
                                name="install-probe-wheels",
                                image=PROBE_IMAGE,
                                command=["python", "-m", "pip", "install", "--no-cache-dir", "--no-deps",
                                         "--only-binary=:all:", "--disable-pip-version-check", "--target",
                                         PROBE_SITE, "-r", f"{PROBE_MOUNT}/requirements.txt"],
                                env=[k8s.core.v1.EnvVarArgs(name="HOME", value="/tmp")],
                                image_pull_policy="Always",
                                resources=k8s.core.v1.ResourceRequirementsArgs(
                                    requests={"cpu": "100m", "memory": "512Mi"},
                                    limits={"cpu": "1", "memory": "512Mi"}),
                                security_context=restricted,
                                volume_mounts=mounts,
                            )
                        ],
                        containers=[
                            k8s.core.v1.ContainerArgs(
                                name="probe",
                                image=PROBE_IMAGE,
                                image_pull_policy="Always",
                                command=probe_command(pool, self.cuda),
                                env=[
                                    k8s.core.v1.EnvVarArgs(name="PYTHONPATH", value=PROBE_SITE),
                                    k8s.core.v1.EnvVarArgs(name="NVIDIA_DRIVER_CAPABILITIES", value="compute,utility"),
                                ],
                                resources=k8s.core.v1.ResourceRequirementsArgs(
                                    requests={labels.GPU_RESOURCE: "1", "cpu": "100m", "memory": "512Mi"},
                                    limits={labels.GPU_RESOURCE: "1", "cpu": "1", "memory": "512Mi"},
                                ),
                                security_context=restricted,
                                volume_mounts=mounts,
                            )
                        ],
                        volumes=[
                            # The ConfigMap's literal name (ordered by depends_on below): its outputs are
                            # unknown in a first preview (components/gpu_operator.py, the release's namespace).
                            k8s.core.v1.VolumeArgs(name="probe", config_map=k8s.core.v1.ConfigMapVolumeSourceArgs(
                                name=f"cuda-smoke-{pool.name}-probe")),
                            k8s.core.v1.VolumeArgs(name="site", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs()),
                            k8s.core.v1.VolumeArgs(name="tmp", empty_dir=k8s.core.v1.EmptyDirVolumeSourceArgs()),
                        ],
                    ),
                ),
            ),
            opts=pulumi.ResourceOptions(parent=self, provider=provider, depends_on=[*depends_on, script]),
        )
        self.job_name = job.metadata.name
        self.register_outputs({"jobName": self.job_name, "image": self.image, "cuda": self.cuda})

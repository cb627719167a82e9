"""CUDA runtimes: minimum drivers, minor-version and forward compatibility, architectures, image tags."""

from __future__ import annotations

import re

from ..versions import DriverVersion, parse_cuda_version, parse_driver_version
from .findings import (
    NEAREST,
    Finding,
    fmt_versions,
)
from .instances import InstanceQueries
from .results import ImageCuda
from .rows import (
    CudaRelease,
    MvcRow,
    sm_name,
)

_NVIDIA_CUDA_TAG = re.compile(r"^(?P<cuda>\d+\.\d+\.\d+)(?:-|$)")
_NGC_TAG = re.compile(r"^(?P<release>\d{2}\.\d{2})(?:-|$)")


class CudaQueries(InstanceQueries):
    """Queries about CUDA runtimes and the drivers and GPUs they run on."""

    # ---------------------------------------------------------------- CUDA
    def _cuda_row(self, cuda: str) -> CudaRelease | None:
        wanted = parse_cuda_version(cuda)
        rows = [row for version, row in self._cuda_rows if version.minor_key == wanted.minor_key and version <= wanted]
        return rows[-1] if rows else None

    def cuda_min_driver(self, cuda: str) -> str | None:
        """Minimum Linux driver for a CUDA runtime ("12.2.2" -> 535.104.05, "12.8" -> 570.26); None if unknown."""
        row = self._cuda_row(cuda)
        return row.min_driver if row else None

    def _mvc(self, major: int) -> MvcRow | None:
        return next((row for row in self.data.mvc if row.major == major), None)

    def forward_compat_branches(self, cuda: str) -> tuple[int, ...] | None:
        """Branches a CUDA x.y image's cuda-compat package admits, or None when not recorded."""
        wanted = parse_cuda_version(cuda)
        row = next(
            (r for r in self.data.forward_compat if parse_cuda_version(r.cuda).minor_key == wanted.minor_key), None
        )
        return row.admitted_branches if row else None

    def _forward_compat_source(self, cuda: str) -> str:
        wanted = parse_cuda_version(cuda)
        row = next(
            (r for r in self.data.forward_compat if parse_cuda_version(r.cuda).minor_key == wanted.minor_key), None
        )
        return row.source if row else self.data.mvc[0].source

    def cuda_driver(
        self,
        cuda: str,
        driver: str,
        *,
        forward_compat_image: bool,
        admitted_branches: tuple[int, ...] | None,
        data_center_gpu: bool,
    ) -> list[Finding]:
        """Can a CUDA runtime run on this driver? ok / advisory (MVC or forward compat) / mandatory."""
        rule = "cuda-driver-compatible"
        wanted = parse_cuda_version(cuda)
        parsed = parse_driver_version(driver)
        row = self._cuda_row(cuda)
        mvc = self._mvc(wanted.major)
        branch = self.branch(parsed.branch)
        # A bare branch (baked images) is judged by its first known release: the weakest driver it could be.
        driver_key = parse_driver_version(self.weakest_release(driver))
        if row is not None:
            minimum = parse_driver_version(row.min_driver)
            if driver_key >= minimum or (parsed.is_branch_only and parsed.branch > minimum.branch):
                return [
                    Finding(
                        "ok",
                        rule,
                        f"CUDA {wanted.short} needs driver {row.min_driver}+; {driver} satisfies it",
                        row.source,
                    )
                ]
        upgrade = self._upgrade_choices(row.min_driver if row else (mvc.floor if mvc else None))
        driver_major = branch.max_cuda_major if branch else None
        same_major = driver_major is not None and driver_major >= wanted.major
        if mvc is not None and same_major and driver_key >= parse_driver_version(mvc.floor):
            caveats = "; ".join(c.text for c in self.data.mvc_caveats)
            need = row.min_driver if row else "unknown (release not in the matrix)"
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} runs on driver {driver} only through minor version compatibility "
                    f"(CUDA {wanted.major}.x floor {mvc.floor}; full support needs {need}). Not covered: {caveats}. "
                    f"Upgrade the driver to {need} or later for PTX JIT workloads: {fmt_versions(upgrade)}.",
                    mvc.source,
                    upgrade,
                )
            ]
        fc_source = self._forward_compat_source(cuda)
        problems: list[str] = []
        if not forward_compat_image:
            problems.append("the image does not carry the cuda-compat forward-compatibility package")
        if not data_center_gpu:
            problems.append("forward compatibility works only on data-center GPUs")
        if forward_compat_image and admitted_branches is None:
            problems.append(f"the branches CUDA {wanted.major}.{wanted.minor} images admit are not recorded")
        elif forward_compat_image and admitted_branches is not None and parsed.branch not in admitted_branches:
            problems.append(
                f"the image's NVIDIA_REQUIRE_CUDA admits {', '.join('R' + str(b) for b in admitted_branches)}, "
                f"not R{parsed.branch}"
            )
        if not problems:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} on driver {driver} (R{parsed.branch}, CUDA {driver_major or '?'}.x native) "
                    f"runs only through forward compatibility (cuda-compat in the image, data-center GPU, branch "
                    f"admitted). Upgrade to {row.min_driver if row else 'a native driver'} or later to drop it: "
                    f"{fmt_versions(upgrade)}.",
                    fc_source,
                    upgrade,
                )
            ]
        return [
            Finding(
                "mandatory",
                rule,
                f"CUDA {wanted.short} cannot run on driver {driver} (R{parsed.branch} runs CUDA "
                f"{driver_major if driver_major is not None else '?'}.x natively): {'; '.join(problems)}. The "
                f"container toolkit refuses to start it (unsatisfied condition: cuda>={wanted.major}.{wanted.minor}). "
                f"Use driver {row.min_driver if row else (mvc.floor if mvc else 'newer')} or later: "
                f"{fmt_versions(upgrade)}.",
                row.source if row else fc_source,
                upgrade,
            )
        ]

    def _upgrade_choices(self, minimum: str | None) -> tuple[str, ...]:
        if minimum is None:
            return ()
        floor = parse_driver_version(minimum)
        fitting = sorted((parse_driver_version(v) for v in self.known_driver_versions()), reverse=True)
        fitting = [v for v in fitting if v >= floor]
        # One per branch (newest of each), LTSB first: what an operator would actually pick.
        per_branch: dict[int, DriverVersion] = {}
        for version in fitting:
            row = self.branch(version.branch)
            if row is None or row.listed_end_of_life:
                continue
            per_branch.setdefault(version.branch, version)
        order = {"LTSB": 0, "PB": 1, "NFB": 2}
        ranked = sorted(
            per_branch.values(),
            key=lambda v: (order[b.type] if (b := self.branch(v.branch)) else 3, -v.branch),
        )
        return tuple(str(v) for v in ranked[:NEAREST])

    def cuda_architecture(self, cuda: str, instance_type: str) -> list[Finding]:
        """Does the CUDA release know the instance's GPU architecture (sm_89 needs 11.8, sm_100/120 12.8)?"""
        rule = "cuda-architecture-compatible"
        inst = self.instance_type(instance_type)
        if inst is None:
            return [self._unknown_instance(instance_type)]
        gpu = self._gpus[inst.gpu_model]
        wanted = parse_cuda_version(cuda)
        sm = sm_name(gpu)
        if gpu.max_cuda_major is not None and wanted.major > gpu.max_cuda_major:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"CUDA {wanted.short} dropped {gpu.architecture} ({sm}): the last CUDA for {gpu.model} on "
                    f"{inst.name} is {gpu.max_cuda_major}.x. Use a CUDA {gpu.max_cuda_major}.x image, or a newer GPU.",
                    gpu.source,
                    (f"{gpu.max_cuda_major}.x",),
                )
            ]
        first = parse_cuda_version(gpu.min_cuda)
        if wanted < first:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} predates {gpu.architecture} ({sm}, {gpu.model} on {inst.name}), which "
                    f"needs CUDA {gpu.min_cuda}+; kernels run only if PTX is JIT-compiled. Use CUDA {gpu.min_cuda} "
                    "or later.",
                    gpu.source,
                    (gpu.min_cuda,),
                )
            ]
        return [Finding("ok", rule, f"CUDA {wanted.short} supports {sm} ({gpu.model})", gpu.source)]

    def image_cuda(self, image: str) -> ImageCuda | None:
        """The CUDA runtime an image reference reveals (nvidia/cuda tags, NGC release tags), or None."""
        reference = image.strip().split("@", 1)[0]
        repository, sep, tag = reference.rpartition(":")
        if not sep or "/" in tag:
            return None
        for repo in self.data.cuda_image_repositories:
            if repository in (repo.repository, *repo.aliases):
                match = _NVIDIA_CUDA_TAG.match(tag)
                if match is None:
                    return None
                cuda = match.group("cuda")
                admitted = self.forward_compat_branches(cuda) if repo.forward_compat else None
                return ImageCuda(image, cuda, repo.forward_compat, admitted, repo.source)
        match = _NGC_TAG.match(tag)
        if match is None:
            return None
        for row in self.data.ngc_images:
            if row.repository == repository and row.release == match.group("release"):
                # NGC framework containers carry the cuda-compat package (their release notes list the
                # data-center branches they admit).
                return ImageCuda(image, row.cuda, True, self.forward_compat_branches(row.cuda), row.source)
        return None

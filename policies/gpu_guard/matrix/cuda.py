"""CUDA runtimes: minimum drivers, minor-version and forward compatibility, architectures, image tags."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from typing import Literal

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

ToolkitMode = Literal["legacy", "cdi", "jit-cdi"]


def _release_key(version: str) -> tuple[int, ...]:
    """v1.18.0 -> (1, 18, 0); ValueError when the string holds no number."""
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:3])
    if not parts:
        raise ValueError(version)
    return parts


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

    def require_cuda_branches(self, repository: str, cuda: str) -> tuple[int, ...] | None:
        """Branches the NVIDIA_REQUIRE_CUDA of an `nvidia/cuda` tag admits: the row of that CUDA version, else the
        newest recorded row of the same x.y at or below it; None when not recorded."""
        wanted = parse_cuda_version(cuda)
        rows = [
            (version, r)
            for r in self.data.image_require_cuda
            if r.repository == repository
            and (version := parse_cuda_version(r.cuda)).minor_key == wanted.minor_key
            and version <= wanted
        ]
        return max(rows, key=lambda item: item[0])[1].admitted_branches if rows else None

    def toolkit_checks_require(self, mode: ToolkitMode) -> tuple[bool, str]:
        """Whether the container toolkit stops a container whose NVIDIA_REQUIRE_CUDA is unmet, and the source."""
        row = next((r for r in self.data.toolkit_require_check if r.mode == mode), None)
        return (row.checks, row.source) if row is not None else (mode == "legacy", self.data.mvc[0].source)

    def toolkit_mode_for_operator(self, operator: str | None, cdi_enabled: bool | None = None) -> ToolkitMode | None:
        """How the GPU Operator's toolkit injects GPUs: `cdi` when CDI is on (the values' cdi.enabled, else the chart
        default of that release, `operator_cdi_default`); with CDI off the operator leaves the toolkit's runtime
        mode at `auto`, which resolves by the release's toolkit (`toolkit_auto_mode`: legacy before v1.18.0,
        jit-cdi from it). None without an operator (the node image's toolkit) or for an unknown release."""
        if operator is None:
            return "cdi" if cdi_enabled else None
        if cdi_enabled is None:
            if not self.data.operator_cdi_default:
                return None
            try:
                cdi_enabled = _release_key(operator) >= _release_key(self.data.operator_cdi_default[0].since)
            except ValueError:
                return None
        if cdi_enabled:
            return "cdi"
        return self.toolkit_auto_mode(operator)

    def toolkit_auto_mode(self, operator: str) -> ToolkitMode | None:
        """What `auto` resolves to on the toolkit of this operator release; None when the release is not recorded."""
        row = next((r for r in self.data.operators if r.version == operator), None)
        if row is None:
            return None
        steps = sorted(self.data.toolkit_auto_mode, key=lambda r: _release_key(r.since))
        mode: ToolkitMode = "legacy"
        for step in steps:
            if _release_key(row.toolkit) >= _release_key(step.since):
                mode = step.mode
        return mode

    def driver_cuda(self, branch: int) -> tuple[int, int] | None:
        """The CUDA version (major, minor) a driver of this branch reports (`native_cuda`: every release of a branch
        reports its first release's), None when not recorded."""
        row = self.branch(branch)
        if row is None or row.native_cuda is None:
            return None
        version = parse_cuda_version(row.native_cuda)
        return (version.major, version.minor)

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
        toolkit_mode: ToolkitMode | None = None,
        disable_require: bool = False,
        pool: Callable[[str], str | None] | None = None,
        today: date | None = None,
    ) -> list[Finding]:
        """Can a CUDA runtime run on this driver? ok / advisory (MVC or forward compat) / mandatory.

        The drivers it suggests are the newest release of each branch at or above the CUDA release's minimum, on a
        branch not past NVIDIA's end of life (at `today`, else only those NVIDIA names ended), LTSB first; `pool`
        maps each to what the pool would declare (a version, or the branch on a baked image) or None where the pool
        cannot take it (not in the operator release's list, no image for the OS, refused by `check`).

        Order: the driver's own CUDA (ok); the image's NVIDIA_REQUIRE_CUDA (`admitted_branches`), which the
        container toolkit checks in legacy mode and not in CDI mode (`toolkit_mode`, None: legacy assumed), unless
        the container sets NVIDIA_DISABLE_REQUIRE=true; then minor version compatibility; then forward compat."""
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
        level = row.min_driver if row else (mvc.floor if mvc else None)
        upgrade = self._upgrade_choices(level, pool, today)
        # Why the list is empty: nothing at that level is recorded at all, or nothing this pool can take.
        for_pool = pool is not None and bool(self._upgrade_choices(level))
        driver_major = branch.max_cuda_major if branch else None
        same_major = driver_major is not None and driver_major >= wanted.major
        require_note = ""
        driver_cuda = self.driver_cuda(parsed.branch)
        # NVIDIA_REQUIRE_CUDA is "cuda>=X.Y" OR one of the admitted branches' clauses. The `cuda` clause is compared
        # with the CUDA version the driver reports, major.minor only: NVIDIA/libnvidia-container src/driver.c
        # (commit 06deb20d) driver_get_cuda_version_1_svc takes nvmlSystemGetCudaDriverVersion as version / 1000 and
        # version % 100 / 10, and driver_get_cuda_version prints "%u.%u"; the hook passes the variable whole
        # (NVIDIA/nvidia-container-toolkit v1.20.0 internal/config/image/cuda_image.go:113, GetRequirements). So every
        # release of a branch reporting CUDA X.Y or later meets it, whatever driver the X.Y.z patch release asks.
        require_met = driver_cuda is not None and driver_cuda >= (wanted.major, wanted.minor)
        if (
            admitted_branches is not None
            and parsed.branch not in admitted_branches
            and not require_met
            and not disable_require
        ):
            mode: ToolkitMode = toolkit_mode or "legacy"
            checks, toolkit_source = self.toolkit_checks_require(mode)
            admitted = ", ".join("R" + str(b) for b in admitted_branches)
            if checks:
                assumed = " (assumed: no CDI mode given)" if toolkit_mode is None else ""
                named = _listed(upgrade, paren=True, for_pool=for_pool)
                return [
                    Finding(
                        "mandatory",
                        rule,
                        f"CUDA {wanted.short} cannot start on driver {driver}: the image's NVIDIA_REQUIRE_CUDA asks "
                        f"cuda>={wanted.major}.{wanted.minor} or one of {admitted}, and R{parsed.branch} is neither. "
                        f"The container toolkit in legacy mode{assumed} checks it through nvidia-container-cli and "
                        f"refuses the container, whatever minor version compatibility would allow. Use driver "
                        f"{row.min_driver if row else 'newer'} or later{named}, "
                        "a driver of an admitted branch, CDI mode, or NVIDIA_DISABLE_REQUIRE=true in the container.",
                        toolkit_source,
                        upgrade,
                    )
                ]
            require_note = (
                f" The image's NVIDIA_REQUIRE_CUDA does not admit R{parsed.branch} ({admitted} only): the toolkit in "
                f"{'CDI' if mode == 'cdi' else mode} mode does not check it, but legacy mode would refuse the "
                "container."
            )
        if mvc is not None and same_major and driver_key >= parse_driver_version(mvc.floor):
            caveats = "; ".join(c.text for c in self.data.mvc_caveats)
            need = row.min_driver if row else "unknown (release not in the matrix)"
            unconfirmed = (f", UNCONFIRMED: no primary source read gives CUDA {wanted.short}'s minimum driver"
                           if row is not None and not row.confirmed else "")
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} runs on driver {driver} only through minor version compatibility "
                    f"(CUDA {wanted.major}.x floor {mvc.floor}; full support needs {need}{unconfirmed}). "
                    f"Not covered: {caveats}. "
                    f"Upgrade the driver to {need} or later for PTX JIT workloads{_listed(upgrade, for_pool=for_pool)}."
                    f"{require_note}",
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
                f"not R{parsed.branch} (the cuda-compat package of the image targets those branches)"
            )
        if not problems:
            return [
                Finding(
                    "advisory",
                    rule,
                    f"CUDA {wanted.short} on driver {driver} (R{parsed.branch}, CUDA {driver_major or '?'}.x native) "
                    f"runs only through forward compatibility (cuda-compat in the image, data-center GPU, branch "
                    f"admitted). Upgrade to {row.min_driver if row else 'a native driver'} or later to drop it"
                    f"{_listed(upgrade, for_pool=for_pool)}.",
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
                "container starts, and CUDA initialisation fails in it (cudaErrorInsufficientDriver without "
                "cuda-compat; cudaErrorCompatNotSupportedOnDevice for forward compatibility on a non-data-center "
                f"GPU). Use driver {row.min_driver if row else (mvc.floor if mvc else 'newer')} or later"
                f"{_listed(upgrade, for_pool=for_pool)}.",
                row.source if row else fc_source,
                upgrade,
            )
        ]

    def _upgrade_choices(
        self, minimum: str | None, pool: Callable[[str], str | None] | None = None, today: date | None = None
    ) -> tuple[str, ...]:
        if minimum is None:
            return ()
        floor = parse_driver_version(minimum)
        fitting = sorted((parse_driver_version(v) for v in self.known_driver_versions()), reverse=True)
        fitting = [v for v in fitting if v >= floor]
        # One per branch (the newest the pool can take), LTSB first: what an operator would actually pick.
        per_branch: dict[int, tuple[DriverVersion, str]] = {}
        for version in fitting:
            row = self.branch(version.branch)
            if row is None or version.branch in per_branch:
                continue
            if row.listed_end_of_life or (today is not None and row.is_end_of_life(today)):
                continue
            shown = pool(version.text) if pool is not None else version.text
            if shown is not None:
                per_branch[version.branch] = (version, shown)
        order = {"LTSB": 0, "PB": 1, "NFB": 2}
        ranked = sorted(
            per_branch.values(),
            key=lambda vs: (order[b.type] if (b := self.branch(vs[0].branch)) else 3, -vs[0].branch),
        )
        return tuple(dict.fromkeys(shown for _, shown in ranked))[:NEAREST]

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
                admitted = self.require_cuda_branches(repo.repository, cuda)
                if admitted is None and repo.forward_compat:
                    admitted = self.forward_compat_branches(cuda)
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


# What a message says when no released driver at or above the level it asks for is recorded (CUDA 13.5 asks
# R615, and the matrix knows no R615 data-center driver yet): never an empty list.
_NONE_RECORDED = "no released data-center driver at that level is recorded in the matrix yet"


_NONE_FOR_POOL = (
    "no driver at that level that this pool can take (in its GPU Operator release's list, with an image for its OS, "
    "on a branch in support, passing `tools.matrix check`) is recorded in the matrix; change the pool's operator "
    "release or node OS first"
)


def _listed(upgrade: tuple[str, ...], *, paren: bool = False, for_pool: bool = False) -> str:
    """`: a, b` (or ` (a, b)`) naming the drivers to pick; the reason there is none when the list is empty."""
    if not upgrade:
        none = _NONE_FOR_POOL if for_pool else _NONE_RECORDED
        return f" ({none})" if paren else f"; {none}"
    return f" ({fmt_versions(upgrade)})" if paren else f": {fmt_versions(upgrade)}"

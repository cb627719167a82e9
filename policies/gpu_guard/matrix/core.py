"""The `Matrix`: every query, and the aggregate `check` / `drivers` of one node pool configuration."""

from __future__ import annotations

from datetime import date

from ..versions import DriverVersion, parse_driver_version, parse_kube_minor
from .cuda import ToolkitMode
from .findings import (
    BAKED_DRIVER_OS,
    Finding,
    OsName,
    worst_level,
)
from .images import ImageQueries
from .results import ImageDriver, InstanceType


class Matrix(ImageQueries):
    """Queries over the validated matrix. Construct through `load_matrix()`."""

    # ---------------------------------------------------------------- aggregate
    def check(
        self,
        *,
        os: OsName,
        driver: str,
        operator: str | None,
        kubernetes: str | None = None,
        kubelet: str | None = None,
        instance_type: str | None = None,
        cuda: str | None = None,
        precompiled: bool = False,
        image_version: str | None = None,
        today: date | None = None,
        toolkit_mode: ToolkitMode | None = None,
        disable_require: bool = False,
        branch_pin: str | None = None,
    ) -> list[Finding]:
        """Every finding for one node pool configuration. `cuda` is a version or an image reference;
        `image_version` pins the AL2023 / Bottlerocket release (None: the newest as of `today`);
        `toolkit_mode` how the container toolkit injects GPUs (None: the operator chart's default on operator-
        managed OSes, legacy assumed elsewhere); `disable_require`: the container sets NVIDIA_DISABLE_REQUIRE=true."""
        today = today or date.today()
        parsed = parse_driver_version(driver)
        findings: list[Finding] = []
        image_judged = False
        if os in BAKED_DRIVER_OS:
            node_kubernetes = kubelet or kubernetes
            if node_kubernetes is not None:
                image = self.driver_for_image(os, image_version, instance_type, node_kubernetes, today=today,
                                              branch_pin=branch_pin)
                image_judged = image is not None and image.release is not None
                findings.extend(
                    self.image_findings(os, image_version, instance_type, node_kubernetes, driver=driver, today=today,
                                        branch_pin=branch_pin)
                )
            else:
                findings.extend(self._baked_driver_findings(os, parsed, today, image_version))
        else:
            findings.extend(self.driver_image(driver, os, precompiled=precompiled, operator=operator, today=today))
        if operator is not None:
            findings.extend(self.operator_branch_support(operator, os, driver, precompiled=precompiled))
            if kubernetes is not None:
                findings.extend(self.operator_kubernetes(operator, kubernetes, os))
                op = self.operator(operator)
                if op is not None and os not in BAKED_DRIVER_OS and os not in op.kubernetes:
                    findings.extend(self.operator_kubernetes(operator, kubernetes))  # no range for the OS: EKS's
        findings.extend(self.branch_lifecycle(driver, today))
        if kubernetes is not None:
            findings.extend(self.eks_lifecycle(kubernetes, today))
            if kubelet is not None:
                findings.extend(self.kubelet_skew(kubernetes, kubelet))
            if not image_judged:
                findings.extend(
                    self.node_image_findings(os, kubelet or kubernetes, today=today, control_plane=kubernetes)
                )
        inst = None
        if instance_type is not None:
            inst = self.instance_type(instance_type)
            findings.extend(self.architecture_support(instance_type, driver))
            if inst is not None and inst.fraction is not None:
                # What the pool is (the CLI and the config say it; the pack says it where a GPU request meets it,
                # gpu-workload-schedulable): a share of one GPU on the GRID driver, no nvidia.com/gpu.
                findings.append(self.fractional_gpu_finding(inst))
        if cuda is not None:
            if toolkit_mode is None and os not in BAKED_DRIVER_OS:
                toolkit_mode = self.toolkit_mode_for_operator(operator)
            findings.extend(self._cuda_findings(cuda, driver, inst, toolkit_mode, disable_require))
        return findings

    def _baked_driver_findings(
        self, os: OsName, parsed: DriverVersion, today: date, image_version: str | None
    ) -> list[Finding]:
        """No Kubernetes version given: is the declared branch one the release ships for some version?"""
        rule = "baked-driver-branch"
        branches = self._baked_candidates(os, None, image_version, today)
        if not branches:
            return []
        image = self._any_minor_image(os, None, image_version, today)
        source = image.source if image is not None else self.data.node_images[0].source
        shipped = " and ".join(f"R{b}" for b in branches)
        where = (
            f"{os} {image.release} ships driver branch {shipped}"
            if image is not None and image.release is not None
            else f"{os} NVIDIA images ship driver branch {shipped} (as of {today.isoformat()})"
        )
        if str(parsed.branch) not in branches:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{where}, not R{parsed.branch}; declare driver "
                    f"{' or '.join(branches)} for this pool, or use Ubuntu with an operator-installed driver.",
                    source,
                    tuple(branches),
                )
            ]
        return [Finding("ok", rule, where, source)]

    def _cuda_findings(
        self,
        cuda: str,
        driver: str,
        inst: InstanceType | None,
        toolkit_mode: ToolkitMode | None = None,
        disable_require: bool = False,
    ) -> list[Finding]:
        image = self.image_cuda(cuda) if (":" in cuda or "/" in cuda) else None
        if image is None and (":" in cuda or "/" in cuda):
            return [
                Finding(
                    "mandatory",
                    "gpu-workload-cuda-declared",
                    f"the CUDA runtime of image {cuda} is unknown (not an nvidia/cuda tag nor an NGC release in the "
                    "matrix); declare it with the gpu-platform.io/cuda label, e.g. 12.8.",
                    self.data.ngc_images[0].source,
                )
            ]
        version = image.cuda if image else cuda
        findings = self.cuda_driver(
            version,
            driver,
            forward_compat_image=image.forward_compat if image else False,
            admitted_branches=image.admitted_branches if image else None,
            data_center_gpu=inst.data_center if inst else True,
            toolkit_mode=toolkit_mode,
            disable_require=disable_require,
        )
        if inst is None:
            assumed = "no instance type given: judged as a data-center GPU (forward compatibility needs one)"
            findings = [
                Finding(f.level, f.rule, f"{f.message} [{assumed}]", f.source, f.nearest)
                if f.level != "ok" and "forward compatibility" in f.message
                else f
                for f in findings
            ]
        if inst is not None:
            findings.extend(self.cuda_architecture(version, inst.name))
        return findings

    def drivers(
        self,
        *,
        os: OsName,
        operator: str,
        instance_type: str | None = None,
        image_version: str | None = None,
        today: date | None = None,
    ) -> list[str]:
        """Driver versions that fit (no mandatory finding) the OS, operator and instance type, newest first."""
        today = today or date.today()
        op = self.operator(operator)
        if op is None:
            raise ValueError(
                f"GPU Operator {operator} is not in the compatibility matrix; choose one of "
                f"{', '.join(reversed(self.operators()))}"
            )
        if os in BAKED_DRIVER_OS:
            candidates = self._baked_candidates(os, instance_type, image_version, today)
        else:
            candidates = list(op.drivers)
        fitting = []
        for version in candidates:
            findings: list[Finding] = []
            if os not in BAKED_DRIVER_OS:
                findings += self.driver_image(version, os, operator=operator, today=today)
                findings += self.operator_branch_support(operator, os, version)
            if instance_type is not None:
                findings += self.architecture_support(instance_type, version)
            if worst_level(findings) != "mandatory":
                fitting.append(version)
        return [str(v) for v in sorted((parse_driver_version(v) for v in fitting), reverse=True)]

    def _any_minor_image(
        self, os: OsName, instance_type: str | None, image_version: str | None, today: date
    ) -> ImageDriver | None:
        """The image of the newest Kubernetes version any recorded release (or the image line) publishes."""
        minors = sorted(
            {m for row in self.image_releases(os) for m in row.drivers if m != "*"}, key=parse_kube_minor
        )
        node_row = self._node_image_row(os)
        minor = minors[-1] if minors else (node_row.published[-1] if node_row and node_row.published else None)
        if minor is None:
            return None
        return self.driver_for_image(os, image_version, instance_type, minor, today=today)

    def _baked_candidates(
        self, os: OsName, instance_type: str | None, image_version: str | None, today: date
    ) -> list[str]:
        """Branches a baked-driver image of that release loads on that instance type, over every Kubernetes
        version the release publishes."""
        image = self._any_minor_image(os, instance_type, image_version, today)
        if image is None:
            return []
        row = next((r for r in self.image_releases(os) if r.release == image.release), None)
        minors = [m for m in row.drivers if m != "*"] if row is not None else []
        images = [image] + [
            found
            for m in minors
            if (found := self.driver_for_image(os, image_version, instance_type, m, today=today)) is not None
        ]
        chosen = {v for found in images for v in ([found.version] if found.version else found.drivers)}
        return sorted({str(parse_driver_version(v).branch) for v in chosen})

"""The `Matrix`: every query, and the aggregate `check` / `drivers` of one node pool configuration."""

from __future__ import annotations

from datetime import date

from ..versions import DriverVersion, parse_driver_version, parse_kube_minor
from .findings import (
    BAKED_DRIVER_OS,
    Finding,
    OsName,
    worst_level,
)
from .nodes import NodeQueries
from .results import InstanceType


class Matrix(NodeQueries):
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
        today: date | None = None,
    ) -> list[Finding]:
        """Every finding for one node pool configuration. `cuda` is a version or an image reference."""
        today = today or date.today()
        parsed = parse_driver_version(driver)
        findings: list[Finding] = []
        if os in BAKED_DRIVER_OS:
            findings.extend(self._baked_driver_findings(os, parsed, today, kubelet or kubernetes))
        else:
            findings.extend(self.driver_image(driver, os, precompiled=precompiled, operator=operator, today=today))
        if operator is not None:
            findings.extend(self.operator_branch_support(operator, os, driver, precompiled=precompiled))
            if kubernetes is not None:
                findings.extend(self.operator_kubernetes(operator, kubernetes, os))
        findings.extend(self.branch_lifecycle(driver, today))
        if kubernetes is not None:
            findings.extend(self.eks_lifecycle(kubernetes, today))
            if kubelet is not None:
                findings.extend(self.kubelet_skew(kubernetes, kubelet))
            findings.extend(self.node_image_findings(os, kubelet or kubernetes, today=today))
        inst = None
        if instance_type is not None:
            inst = self.instance_type(instance_type)
            findings.extend(self.architecture_support(instance_type, driver))
        if cuda is not None:
            findings.extend(self._cuda_findings(cuda, driver, inst))
        return findings

    def _baked_driver_findings(
        self, os: str, parsed: DriverVersion, today: date, kubernetes: str | None = None
    ) -> list[Finding]:
        rule = "baked-driver-branch"
        row = self._node_image_row(os)
        if row is None:
            return []
        step = self._baked_row(row, today, str(parse_kube_minor(kubernetes)) if kubernetes else None)
        if step is None:
            return []
        baked, source = step.branch, step.source
        if parsed.branch != baked:
            return [
                Finding(
                    "mandatory",
                    rule,
                    f"{os} NVIDIA images ship driver branch R{baked} (as of {today.isoformat()}), "
                    f"not R{parsed.branch}; "
                    f"declare driver {baked} for this pool, or use Ubuntu with an operator-installed driver.",
                    source,
                    (str(baked),),
                )
            ]
        return [Finding("ok", rule, f"{os} NVIDIA images ship R{baked}", source)]

    def _cuda_findings(self, cuda: str, driver: str, inst: InstanceType | None) -> list[Finding]:
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
        )
        if inst is not None:
            findings.extend(self.cuda_architecture(version, inst.name))
        return findings

    def drivers(
        self, *, os: OsName, operator: str, instance_type: str | None = None, today: date | None = None
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
            row = self._node_image_row(os)
            baked = self._baked_branch(row, today) if row else None
            candidates = [str(baked)] if baked is not None else []
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

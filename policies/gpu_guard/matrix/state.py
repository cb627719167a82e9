"""Indexes over the validated rows of matrix.yaml; the query classes build on it."""

from __future__ import annotations

from ..versions import parse_cuda_version
from .rows import MatrixData, OperatorRelease


class MatrixState:
    """Indexes over the validated matrix rows."""

    def __init__(self, data: MatrixData) -> None:
        self.data = data
        self._branches = {row.branch: row for row in data.driver_branches}
        self._operators = {row.version: row for row in data.operators}
        self._gpus = {row.model: row for row in data.gpus}
        self._families = {row.family: row for row in data.instance_families}
        self._capacity = {row.family: row for row in data.instance_capacity}
        self._images = {row.os_tag: row for row in data.driver_images}
        self._unpublished = {row.version: row for row in data.unpublished_drivers}
        self._eks = {row.version: row for row in data.eks_versions}
        self._skew = data.kubelet_skew[0]
        self._cuda_rows = sorted(
            ((parse_cuda_version(row.cuda), row) for row in data.cuda_releases), key=lambda item: item[0]
        )

    def operator(self, version: str) -> OperatorRelease | None:
        """The GPU Operator release row for `v26.7.0` (leading v optional), or None."""
        text = version.strip()
        return self._operators.get(text if text.startswith("v") else f"v{text}")

    def operators(self) -> list[str]:
        """Known GPU Operator releases, oldest first."""
        return [row.version for row in self.data.operators]

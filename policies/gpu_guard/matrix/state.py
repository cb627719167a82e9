"""Indexes over the validated rows of matrix.yaml; the query classes build on it."""

from __future__ import annotations

from ..versions import parse_cuda_version
from .findings import ADD_OPERATOR
from .rows import MatrixData, OperatorRelease


def operator_key(version: str) -> tuple[int, ...]:
    """v26.10.0 -> (26, 10, 0); ValueError when it is not dotted numbers."""
    return tuple(int(part) for part in version.strip().lstrip("vV").split("."))


class MatrixState:
    """Indexes over the validated matrix rows."""

    def __init__(self, data: MatrixData) -> None:
        self.data = data
        self._branches = {row.branch: row for row in data.driver_branches}
        self._operators = {row.version: row for row in data.operators}
        self._gpus = {row.model: row for row in data.gpus}
        self._families = {row.family: row for row in data.instance_families}
        self._other_families = {row.family: row for row in data.other_accelerator_families}
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

    def newer_operator(self, version: str) -> str | None:
        """The sentence for a GPU Operator release newer than every release of the matrix (None: it is not): the
        matrix was reviewed before it existed, so the fix is to add it, never to step down to an older one."""
        if any(r.version == version for r in self.data.operators_unconfirmed):
            return None  # named second-hand: its own note says why it is not in the matrix
        try:
            wanted = operator_key(version)
            newest = max(self.data.operators, key=lambda r: operator_key(r.version))
        except ValueError:
            return None
        if wanted <= operator_key(newest.version):
            return None
        reviewed = max(r.reviewed for r in self.data.operators)
        return (f"GPU Operator {version} is newer than the matrix (its newest release is {newest.version}; the "
                f"operator rows were reviewed on {reviewed.isoformat()}). {ADD_OPERATOR}")

"""Typed loader and queries for the GPU compatibility matrix (`matrix.yaml` next to this package).

Consumers: the policy rules, the components' fail-fast config checks and `python -m tools.matrix`.
Every fact lives in matrix.yaml with its `source` and `reviewed` date; this package only holds rules
(how facts combine), never version numbers. Queries return `Finding`s whose message says the rule,
the offending value and the fix, with the nearest valid choices in `nearest`.

One module per concept: `findings` (levels, OS names), `rows` (the pydantic rows of matrix.yaml),
`loader`, `results` (joined query results), and the query classes, each building on the previous one:
`state` -> `drivers` -> `operators` -> `instances` -> `cuda` -> `nodes` -> `images` -> `core` (`Matrix`).
Import from here: `from policies.gpu_guard.matrix import Matrix, load_matrix` (or `from ..matrix import`
inside the pack).
"""

from __future__ import annotations

from ..versions import DriverVersion
from .core import Matrix
from .cuda import ToolkitMode
from .findings import OS_NAMES, UNJUDGED_MARK, Finding, Level, MatrixError, OsName, pick, worst_level
from .images import parse_image_version, release_key
from .loader import MATRIX_PATH, load_matrix, load_matrix_file, parse_matrix
from .results import ImageCuda, ImageDriver, InstanceType, NodeImage
from .rows import (
    BakedDriver,
    CudaRelease,
    DriverBranch,
    DriverImages,
    EksVersion,
    GpuModel,
    ImageRelease,
    InstanceFamily,
    MatrixData,
    NodeImageRow,
    OperatorRelease,
    Override,
    PrecompiledBuild,
)

__all__ = [
    "MATRIX_PATH",
    "OS_NAMES",
    "UNJUDGED_MARK",
    "BakedDriver",
    "CudaRelease",
    "DriverBranch",
    "DriverImages",
    "DriverVersion",
    "EksVersion",
    "Finding",
    "GpuModel",
    "ImageCuda",
    "ImageDriver",
    "ImageRelease",
    "InstanceFamily",
    "InstanceType",
    "Level",
    "Matrix",
    "MatrixData",
    "MatrixError",
    "NodeImage",
    "NodeImageRow",
    "OperatorRelease",
    "OsName",
    "Override",
    "PrecompiledBuild",
    "ToolkitMode",
    "load_matrix",
    "load_matrix_file",
    "parse_image_version",
    "parse_matrix",
    "pick",
    "release_key",
    "worst_level",
]

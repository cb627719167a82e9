"""Loading matrix.yaml: validation with one error naming the file, the row and the key."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from .core import Matrix
from .findings import MatrixError
from .rows import MatrixData

MATRIX_PATH = Path(__file__).resolve().parent.parent / "matrix.yaml"

# libyaml's safe loader when PyYAML was built with it: the same documents and errors as `yaml.safe_load`,
# in a tenth of the time (matrix.yaml is read at the start of every program and every policy pack process).
# Source: https://pyyaml.org/wiki/PyYAMLDocumentation ("CSafeLoader ... using the LibYAML based parser")
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _describe_error(error: dict[str, Any], raw: dict[str, Any]) -> str:
    loc = tuple(error.get("loc", ()))
    where = ".".join(str(part) for part in loc)
    row_hint = ""
    if len(loc) >= 2 and isinstance(loc[0], str) and isinstance(loc[1], int):
        rows = raw.get(loc[0])
        if isinstance(rows, list) and loc[1] < len(rows) and isinstance(rows[loc[1]], dict):
            row = rows[loc[1]]
            names = ("version", "release", "cuda", "branch", "family", "model", "os", "os_tag")
            key = next((row[k] for k in names if k in row), None)
            if key is not None:
                row_hint = f" (row {key!r})"
    return f"{where}{row_hint}: {error.get('msg', 'invalid')}"


def parse_matrix(text: str, origin: str = "matrix.yaml") -> MatrixData:
    """Validate matrix YAML text; raise MatrixError naming the file, the row and the key on bad data."""
    try:
        raw = yaml.load(text, Loader=_SAFE_LOADER)
    except yaml.YAMLError as exc:
        raise MatrixError(f"{origin}: not valid YAML: {exc}") from exc
    if not isinstance(raw, dict):
        raise MatrixError(f"{origin}: expected a mapping at the top level, got {type(raw).__name__}")
    try:
        return MatrixData.model_validate(raw)
    except ValidationError as exc:
        details = "; ".join(_describe_error(dict(err), raw) for err in exc.errors()[:10])
        raise MatrixError(f"{origin}: {exc.error_count()} invalid value(s): {details}") from exc


def load_matrix_file(path: Path) -> Matrix:
    """Load and validate a matrix file (uncached; tests use it with temporary files)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise MatrixError(f"{path}: cannot read the compatibility matrix: {exc}") from exc
    return Matrix(parse_matrix(text, str(path)))


class _Once:
    """The packaged matrix, validated once per process (raises MatrixError on bad data). Callers that come while
    it is being read (the pack's start-up thread, policies/__main__.py, and a first Analyze) wait for that read
    instead of reading it again beside it. `cache_clear()` forgets it (tests)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._matrix: Matrix | None = None

    def __call__(self) -> Matrix:
        matrix = self._matrix
        if matrix is None:
            with self._lock:
                if self._matrix is None:
                    self._matrix = load_matrix_file(MATRIX_PATH)
                matrix = self._matrix
        return matrix

    def cache_clear(self) -> None:
        with self._lock:
            self._matrix = None


load_matrix = _Once()

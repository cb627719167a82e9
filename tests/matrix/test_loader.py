"""The loader validates matrix.yaml: every row needs `source` and `reviewed`, no unknown keys, quoted versions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from policies.gpu_guard.matrix import MATRIX_PATH, MatrixError, load_matrix, load_matrix_file


def _write_variant(tmp_path: Path, mutate) -> Path:
    data = yaml.safe_load(MATRIX_PATH.read_text(encoding="utf-8"))
    mutate(data)
    path = tmp_path / "matrix.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def test_packaged_matrix_loads_and_is_cached():
    assert load_matrix() is load_matrix()


def test_unmodified_copy_of_the_matrix_loads(tmp_path):
    path = _write_variant(tmp_path, lambda data: None)
    assert load_matrix_file(path).operator("v26.7.0") is not None


def test_rejects_a_row_without_source(tmp_path):
    path = _write_variant(tmp_path, lambda data: data["operators"][0].pop("source"))
    with pytest.raises(MatrixError, match=r"operators\.0\.source \(row 'v24\.9\.0'\): Field required"):
        load_matrix_file(path)


def test_rejects_a_row_without_reviewed_date(tmp_path):
    path = _write_variant(tmp_path, lambda data: data["cuda_releases"][3].pop("reviewed"))
    with pytest.raises(MatrixError, match=r"cuda_releases\.3\.reviewed .*Field required"):
        load_matrix_file(path)


def test_rejects_a_nested_row_without_source(tmp_path):
    def drop(data):
        data["node_images"][2]["baked_driver"][0].pop("source")

    with pytest.raises(MatrixError, match=r"node_images\.2\.baked_driver\.0\.source"):
        load_matrix_file(_write_variant(tmp_path, drop))


def test_rejects_a_source_that_is_not_a_url(tmp_path):
    def bad(data):
        data["gpus"][0]["source"] = "the internet"

    with pytest.raises(MatrixError, match=r"gpus\.0\.source"):
        load_matrix_file(_write_variant(tmp_path, bad))


def test_rejects_unknown_keys(tmp_path):
    def extra(data):
        data["driver_branches"][0]["colour"] = "green"

    with pytest.raises(MatrixError, match=r"driver_branches\.0\.colour .*Extra inputs are not permitted"):
        load_matrix_file(_write_variant(tmp_path, extra))


def test_rejects_unquoted_versions_that_yaml_reads_as_numbers(tmp_path):
    def numeric(data):
        data["cuda_releases"][0]["min_driver"] = 570.26

    with pytest.raises(MatrixError, match="must be a quoted string"):
        load_matrix_file(_write_variant(tmp_path, numeric))


def test_rejects_a_malformed_driver_version_in_an_operator_row(tmp_path):
    def junk(data):
        data["operators"][-1]["drivers"].append("580.x")

    with pytest.raises(MatrixError, match=r"operators\.\d+\.drivers .*not an NVIDIA driver version"):
        load_matrix_file(_write_variant(tmp_path, junk))


def test_reports_a_file_that_is_not_yaml(tmp_path):
    path = tmp_path / "matrix.yaml"
    path.write_text("operators: [unclosed", encoding="utf-8")
    with pytest.raises(MatrixError, match="not valid YAML"):
        load_matrix_file(path)


def test_reports_a_missing_file(tmp_path):
    with pytest.raises(MatrixError, match="cannot read the compatibility matrix"):
        load_matrix_file(tmp_path / "absent.yaml")


def _v25_3_0(data: dict[str, Any]) -> dict[str, Any]:
    return next(row for row in data["operators"] if row["version"] == "v25.3.0")


def test_rejects_an_override_without_a_source(tmp_path):
    path = _write_variant(tmp_path, lambda data: _v25_3_0(data)["override"][0].pop("source"))
    with pytest.raises(MatrixError, match=r"operators\.3\.override\.0\.source \(row 'v25\.3\.0'\): Field required"):
        load_matrix_file(path)


def test_rejects_an_override_without_a_reason(tmp_path):
    path = _write_variant(tmp_path, lambda data: _v25_3_0(data)["override"][1].pop("reason"))
    with pytest.raises(MatrixError, match=r"operators\.3\.override\.1\.reason \(row 'v25\.3\.0'\): Field required"):
        load_matrix_file(path)


# Each section's rows are named in an error by the first of its identifying keys (version, release, cuda,
# branch, family, model, os, os_tag); sections whose rows have none of them get no hint.
@pytest.mark.parametrize(("section", "hint"), [
    ("cuda_releases", " (row '13.5.0')"),
    ("driver_branches", " (row 620)"),
    ("unpublished_drivers", " (row '535.15.04')"),
    ("precompiled_kernels", " (row 'ubuntu22.04')"),
    ("gpus", " (row 'T4')"),
    ("instance_families", " (row 'g4dn')"),
    ("node_images", " (row 'ubuntu-22.04')"),
    ("image_releases", " (row 'v20251217')"),
    ("mvc", ""),
])
def test_a_bad_row_is_named_by_its_identifying_key(tmp_path, section: str, hint: str):
    path = _write_variant(tmp_path, lambda data: data[section][0].pop("source"))
    with pytest.raises(MatrixError) as caught:
        load_matrix_file(path)
    assert str(caught.value) == f"{path}: 1 invalid value(s): {section}.0.source{hint}: Field required"


def test_a_bad_top_level_value_has_no_row_hint(tmp_path):
    path = _write_variant(tmp_path, lambda data: data.update(schema_version="two"))
    with pytest.raises(MatrixError) as caught:
        load_matrix_file(path)
    assert str(caught.value).startswith(f"{path}: 1 invalid value(s): schema_version: ")

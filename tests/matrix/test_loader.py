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


# How one validation error is told (`_describe_error`): the dotted location, the row's own name when the
# location points into a list of rows, and pydantic's message. Written from survivors of the mutation run.
@pytest.mark.parametrize("key", ["version", "release", "cuda", "branch", "family", "model", "os", "os_tag"])
def test_a_row_is_named_by_its_first_naming_key(key: str) -> None:
    from policies.gpu_guard.matrix.loader import _describe_error  # noqa: PLC0415

    raw = {"rows": [{"other": 1}, {key: "R-1", "source": "s"}]}
    assert _describe_error({"loc": ("rows", 1), "msg": "bad"}, raw) == "rows.1 (row 'R-1'): bad"
    assert _describe_error({"loc": ("rows", 1, "source"), "msg": "bad"}, raw) == "rows.1.source (row 'R-1'): bad"


@pytest.mark.parametrize(
    ("error", "text"),
    [
        ({"msg": "bad"}, ": bad"),  # no location at all
        ({"loc": ("rows",), "msg": "bad"}, "rows: bad"),  # the list itself
        ({"loc": ("rows", 2), "msg": "bad"}, "rows.2: bad"),  # past the last row: no name
        ({"loc": ("rows", 0), "msg": "bad"}, "rows.0: bad"),  # a row with no naming key
        ({"loc": ("rows", "0"), "msg": "bad"}, "rows.0: bad"),  # not an index
        ({"loc": (0, 1), "msg": "bad"}, "0.1: bad"),  # not a key of the file
        ({"loc": ("scalar", 0), "msg": "bad"}, "scalar.0: bad"),  # not a list
        ({"loc": ("listed", 0), "msg": "bad"}, "listed.0: bad"),  # a row that is not a mapping
        ({"loc": ("rows", 1)}, "rows.1 (row 'v1'): invalid"),  # no message
    ],
)
def test_an_error_outside_a_named_row_gives_its_location_only(error: dict[str, Any], text: str) -> None:
    from policies.gpu_guard.matrix.loader import _describe_error  # noqa: PLC0415

    raw = {"rows": [{"other": 1}, {"release": "v1"}], "scalar": 3, "listed": ["x"]}
    assert _describe_error(error, raw) == text


def test_the_version_names_a_row_before_its_os() -> None:
    from policies.gpu_guard.matrix.loader import _describe_error  # noqa: PLC0415

    raw = {"drivers": [{"os": "al2023", "version": "580.65.06"}]}
    assert _describe_error({"loc": ("drivers", 0), "msg": "m"}, raw) == "drivers.0 (row '580.65.06'): m"


def test_bad_rows_are_counted_and_the_first_ten_named() -> None:
    from policies.gpu_guard.matrix.loader import parse_matrix  # noqa: PLC0415

    data = yaml.safe_load(MATRIX_PATH.read_text(encoding="utf-8"))
    rows = data["cuda_releases"]
    for row in rows[:12]:
        del row["source"]
    named = "; ".join(f"cuda_releases.{i}.source (row {rows[i]['cuda']!r}): Field required" for i in range(10))
    with pytest.raises(MatrixError) as raised:
        parse_matrix(yaml.safe_dump(data, sort_keys=False))
    assert str(raised.value) == f"matrix.yaml: 12 invalid value(s): {named}"


@pytest.mark.parametrize(("text", "kind"), [("[]", "list"), ("just text", "str"), ("3", "int")])
def test_a_file_that_is_not_a_mapping_names_what_it_is(text: str, kind: str) -> None:
    from policies.gpu_guard.matrix.loader import parse_matrix  # noqa: PLC0415

    with pytest.raises(MatrixError) as raised:
        parse_matrix(text)
    assert str(raised.value) == f"matrix.yaml: expected a mapping at the top level, got {kind}"

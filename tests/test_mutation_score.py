"""The chunk merge of tests/mutation_score.py: a chunk's results count only for the code this checkout has."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.mutation_score import chunks, merge, merge_meta, pack, tally


def _meta(codes: dict[str, int | None], hashes: dict[str, str]) -> dict[str, Any]:
    return {"exit_code_by_key": codes, "hash_by_function_name": hashes, "durations_by_key": {},
            "estimated_durations_by_key": {}, "type_check_error_by_key": {}}


def test_a_result_is_taken_only_where_the_function_hash_matches() -> None:
    target = _meta({"m.x_a__mutmut_1": None, "m.x_b__mutmut_1": None, "m.x_b__mutmut_2": 1},
                   {"x_a": "aaa", "x_b": "bbb"})
    source = _meta({"m.x_a__mutmut_1": 1, "m.x_b__mutmut_1": 0, "m.x_b__mutmut_2": None, "m.x_c__mutmut_1": 1},
                   {"x_a": "aaa", "x_b": "changed", "x_c": "ccc"})
    assert merge_meta(target, source) == (1, 2)
    # x_a: same code, taken; x_b: measured on other code, left out; an unchecked source result keeps ours;
    # x_c: a mutant this checkout lacks, left out
    assert target["exit_code_by_key"] == {"m.x_a__mutmut_1": 1, "m.x_b__mutmut_1": None, "m.x_b__mutmut_2": 1}


def test_pack_then_merge_round_trips_and_the_later_chunk_wins(tmp_path: Path) -> None:
    here = tmp_path / "here" / "mutants"
    (here / "policies").mkdir(parents=True)
    base = _meta({"p.x_f__mutmut_1": None, "p.x_f__mutmut_2": None}, {"x_f": "h"})
    (here / "policies" / "p.py.meta").write_text(json.dumps(base), encoding="utf-8")
    archives = []
    chunk_codes: list[dict[str, int | None]] = [{"p.x_f__mutmut_1": 0, "p.x_f__mutmut_2": None},
                                                {"p.x_f__mutmut_1": 1, "p.x_f__mutmut_2": 33}]
    for i, codes in enumerate(chunk_codes):
        there = tmp_path / f"there{i}" / "mutants" / "policies"
        there.mkdir(parents=True)
        (there / "p.py.meta").write_text(json.dumps(_meta(codes, {"x_f": "h"})), encoding="utf-8")
        archive = tmp_path / f"chunk{i}.tgz"
        assert pack(archive, there.parent) == 1
        archives.append(archive)
    counts = merge(archives, here)
    assert (counts["taken"], counts["stale"]) == (3, 0)
    merged = json.loads((here / "policies" / "p.py.meta").read_text(encoding="utf-8"))
    assert merged["exit_code_by_key"] == {"p.x_f__mutmut_1": 1, "p.x_f__mutmut_2": 33}


def test_chunks_split_the_unchecked_functions_by_count(tmp_path: Path) -> None:
    mutants = tmp_path / "mutants" / "policies"
    mutants.mkdir(parents=True)
    codes: dict[str, int | None] = {f"p.x_big__mutmut_{i}": None for i in range(1, 5)}
    codes |= {"p.x_small__mutmut_1": None, "p.x_mid__mutmut_1": None, "p.x_mid__mutmut_2": None,
              "p.x_done__mutmut_1": 1}
    (mutants / "p.py.meta").write_text(json.dumps(_meta(codes, {})), encoding="utf-8")
    assert chunks(2, mutants.parent) == [["p.x_big__mutmut_*"], ["p.x_mid__mutmut_*", "p.x_small__mutmut_*"]]
    assert chunks(5, mutants.parent, prefixes=("components/",)) == []


def test_a_timeout_is_killed_and_no_tests_survived(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.mutation_score as score  # noqa: PLC0415

    mutants = tmp_path / "mutants"
    (mutants / "policies" / "gpu_guard").mkdir(parents=True)
    meta = mutants / "policies" / "gpu_guard" / "versions.py.meta"
    meta.write_text(json.dumps(_meta({"v.x__mutmut_1": 36, "v.x__mutmut_2": 33, "v.x__mutmut_3": 0,
                                      "v.x__mutmut_4": None}, {})), encoding="utf-8")
    monkeypatch.setattr(score, "MUTANTS", mutants)
    counts = tally([meta], {"v.x__mutmut_3"})["policies/gpu_guard/versions.py"]
    assert (counts["killed"], counts["survived"], counts["equivalent"], counts["not checked"]) == (1, 1, 1, 1)

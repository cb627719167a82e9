"""docs/policies.md is the pack's own catalogue: generated from it, and checked against it here."""

from __future__ import annotations

from pathlib import Path

from tools.policy_docs import DOCS, Row, main, pack_rows, parse, render

REPO = Path(__file__).resolve().parents[2]


def test_docs_policies_md_is_what_the_pack_says(capsys):
    assert main(["--check"]) == 0, capsys.readouterr().err
    assert DOCS.read_text(encoding="utf-8") == render(pack_rows())


def test_every_registered_policy_has_one_row_with_its_levels_and_source():
    from policies.gpu_guard.base import all_meta  # noqa: PLC0415

    rows = parse(DOCS.read_text(encoding="utf-8"))
    meta = all_meta()
    assert set(rows) == set(meta)
    for name, (_kind, default, prod) in rows.items():
        assert (default, prod) == (meta[name].default.value, meta[name].prod.value), name
    assert all((REPO / row.module).is_file() for row in pack_rows())


def test_check_refuses_a_stale_catalogue(tmp_path, capsys):
    stale = tmp_path / "policies.md"
    stale.write_text(DOCS.read_text(encoding="utf-8").replace("| advisory | mandatory |", "| advisory | advisory |", 1))
    assert main(["--check", "--out", str(stale)]) == 1
    assert "differs from the pack" in capsys.readouterr().err


def test_a_row_renders_and_parses_back_with_its_kind_and_levels():
    row = Row("x-policy", "stack, caveats of `y`", "advisory", "mandatory", "No a|b here.", "policies/x.py", "")
    text = render([row])
    assert "No a\\|b here." in text
    assert parse(text) == {"x-policy": ("stack, caveats of `y`", "advisory", "mandatory")}


def test_no_test_or_tool_reads_the_shared_checkout_directly():
    """Only tools/upstream knows ../shared (the local copy `make upstream` may copy from)."""
    offenders = []
    for path in [*REPO.glob("tests/**/*.py"), *REPO.glob("tools/**/*.py"), *REPO.glob("policies/**/*.py")]:
        where = path.relative_to(REPO).as_posix()
        if where.startswith("tools/upstream/") or where == "tests/tools/test_policy_docs.py":
            continue
        text = path.read_text(encoding="utf-8")
        reads = ('parent / "shared"', '"shared" / "upstream"', "shared_dir()", '"POLICIES.md"')
        if any(read in text for read in reads):
            offenders.append(path.relative_to(REPO).as_posix())
    assert offenders == []

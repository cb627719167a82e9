"""`tools.preview.forked`: a function run in a forked child, its value or its exception back in this process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tools.preview.forked import Forked, preload_program


def test_the_childs_value_comes_back_and_it_ran_elsewhere() -> None:
    assert Forked(lambda: ("ok", os.getpid())).result() != ("ok", os.getpid())
    assert Forked(lambda: ["a", {"b": 1}]).result() == ["a", {"b": 1}]


def test_the_childs_exception_is_raised_here() -> None:
    def fail() -> None:
        raise ValueError("bad stack file: key x")

    with pytest.raises(ValueError, match="bad stack file: key x"):
        Forked(fail).result()


def test_a_child_that_dies_without_an_answer_has_the_work_run_here() -> None:
    here = os.getpid()

    def work() -> int:
        if os.getpid() != here:
            os._exit(3)  # the child dies before it answers
        return 7

    assert Forked(work).result() == 7


def test_preload_imports_the_programs_top_level_modules(tmp_path: Path) -> None:
    (tmp_path / "preload_probe_mod.py").write_text("VALUE = 1\n")
    main = tmp_path / "__main__.py"
    main.write_text("import json\nfrom preload_probe_mod import VALUE\nimport no_such_module_here\nprint(VALUE)\n")
    preload_program(main)
    import sys  # noqa: PLC0415

    assert "preload_probe_mod" in sys.modules
    assert str(tmp_path) not in sys.path
    preload_program(tmp_path / "missing.py")  # nothing to read: the run reports it

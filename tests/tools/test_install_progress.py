"""The first install shows progress of ours (issue 56): tools/install.py reads pip's output and prints a count."""

from __future__ import annotations

from pathlib import Path

from tests.shared import REPO
from tools.install import EVERY, pinned, progress

# pip's lines as pip 25 prints them (pip/_internal/operations/prepare.py, req/__init__.py).
PIP = [f"Collecting pkg{i}==1.{i}\n  Downloading pkg{i}-1.{i}-py3-none-any.whl (12 kB)\n" for i in range(23)]
PIP_OUTPUT = "".join(PIP) + ("Requirement already satisfied: pip in ./.venv/lib/python3.11/site-packages\n"
                             "Installing collected packages: " + ", ".join(f"pkg{i}" for i in range(23)) + "\n"
                             "Successfully installed pkg0-1.0\n")


def test_a_count_every_ten_packages_and_the_install_step() -> None:
    lines = list(progress(PIP_OUTPUT.splitlines(keepends=True), total=7))
    assert lines == [
        f"== {EVERY} packages collected (7 pinned, the rest their dependencies): pkg9==1.9",
        f"== {2 * EVERY} packages collected (7 pinned, the rest their dependencies): pkg19==1.19",
        "== installing 23 packages (23 collected, 1 already there)"]


def test_the_pinned_count_follows_includes_once(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("-r b.txt\nx==1  # a comment\n# y==2\n", encoding="utf-8")
    (tmp_path / "b.txt").write_text("-r a.txt\nz==3\nX==1\n", encoding="utf-8")
    assert pinned([tmp_path / "a.txt"]) == 2
    assert pinned([REPO / "requirements.txt"]) >= 10


def test_the_makefile_installs_through_it() -> None:
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "PIP_INSTALL = $(PY) tools/install.py" in makefile

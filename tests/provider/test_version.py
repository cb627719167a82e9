"""The package states what it is: its version is the changelog's newest entry and the git tag it is released
as, and it states the Python it needs, refusing an older one in one line before anything else runs."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from provider.floor import FLOOR, too_old
from provider.host import VERSION, schema
from tests.shared import REPO

CHANGELOG = REPO / "provider" / "CHANGELOG.md"
_ENTRY = re.compile(r"^## v(\S+)", re.MULTILINE)
_SEMVER = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")  # release tags: v<major>.<minor>.<patch>


def _release(tag: str) -> tuple[int, int, int] | None:
    match = _SEMVER.match(tag)
    return (int(match[1]), int(match[2]), int(match[3])) if match else None


def version_problems(version: str, changelog: str, tags: list[str], head_tags: list[str]) -> list[str]:
    """What disagrees between VERSION, the changelog's newest entry, the newest `v*` tag and the tags of HEAD."""
    problems = []
    entries = _ENTRY.findall(changelog)
    if not entries:
        problems.append("provider/CHANGELOG.md has no `## v<version>` entry")
    elif entries[0] != version:
        problems.append(f"VERSION {version} is not the changelog's newest entry v{entries[0]}")
    released = [(r, tag) for tag in tags if (r := _release(tag)) is not None]
    current = _release(version)
    if current is None:
        problems.append(f"VERSION {version} is not <major>.<minor>.<patch>")
    elif released and max(released)[0] > current:
        problems.append(f"VERSION {version} is older than the newest tag {max(released)[1]}")
    for tag in head_tags:
        if tag.startswith("v") and tag != f"v{version}":
            problems.append(f"HEAD is tagged {tag} but VERSION is {version}")
    return problems


def _git(*args: str) -> list[str]:
    done = subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"no git history here (git {' '.join(args)}: {done.stderr.strip()})")
    return done.stdout.split()


def test_the_version_is_the_changelogs_newest_entry_and_the_git_tag() -> None:
    problems = version_problems(VERSION, CHANGELOG.read_text(), _git("tag", "--list", "v*"),
                                _git("tag", "--points-at", "HEAD"))
    assert problems == []
    assert schema()["version"] == VERSION


@pytest.mark.parametrize(("version", "tags", "head", "expected"), [
    ("0.1.0", [], [], []),
    ("0.2.0", ["v0.1.0", "v0.1.1"], [], []),  # a bump not yet tagged
    ("0.1.0", ["v0.1.0", "v0.2.0"], [], ["VERSION 0.1.0 is older than the newest tag v0.2.0"]),
    ("0.1.0", ["v0.1.1"], ["v0.1.1"], ["VERSION 0.1.0 is older than the newest tag v0.1.1",
                                       "HEAD is tagged v0.1.1 but VERSION is 0.1.0"]),
    ("0.3.0", ["v0.2.0"], [], ["VERSION 0.3.0 is not the changelog's newest entry v0.2.0"]),
])
def test_the_version_check_finds_each_disagreement(version, tags, head, expected) -> None:
    changelog = "# Changelog\n\n## v0.2.0\n\n- b\n\n## v0.1.0\n\n- a\n" if version != "0.1.0" else "## v0.1.0\n"
    assert version_problems(version, changelog, tags, head) == expected


def test_an_old_python_is_refused_in_one_line() -> None:
    assert too_old(FLOOR) is None
    assert too_old(tuple(sys.version_info)) is None
    line = too_old((3, 10, 14, "final", 0))
    assert line is not None and "\n" not in line
    assert line.startswith("gpu-platform provider: Python 3.10.14 is too old; it needs Python >= 3.11")


def test_the_entry_point_checks_the_floor_before_importing_the_sdk() -> None:
    """__main__.py refuses before it imports pulumi: run it with the floor raised past this interpreter."""
    code = ("import runpy, sys\nimport provider.floor as f\nf.FLOOR = (99, 0)\nsys.argv = ['provider']\n"
            "try:\n    runpy.run_path('provider', run_name='__main__')\n"
            "finally:\n    print('pulumi imported:', 'pulumi' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 1
    assert done.stdout.strip() == "pulumi imported: False"
    assert done.stderr.strip().startswith("gpu-platform provider: Python ") and "needs Python >= 99.0" in done.stderr
    assert "Traceback" not in done.stderr

"""Every command the docs mark runnable works as written, on a fresh clone, offline (issue 46).

A fenced block whose info string is `sh runnable` (or `sh runnable exit=N`) in README.md or docs/*.md is run as
one `bash -e` script from the root of a fresh copy of the checkout (`tools.fresh_clone`: no upstream cache, no
../shared, downloads to a closed port), and must exit 0 (or N). Blocks left `sh` or plain are synopses with
placeholders, or need a cloud account; the pages a user follows for a task (adding a stack, asking the matrix,
gating their own program) carry at least one runnable block each.

Also, through `make` on the same clone: `make preview-json` prints only the JSON document on stdout, even when
its requirements are (re)installed first; `make preview` ends 0 on a pass and shows the preview's own status
(make's `Error 1`, `Error 2`) otherwise, and `gpu-platform` passes each tool's status through unchanged.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.shared import REPO
from tools import cli
from tools.fresh_clone import fresh_clone, make_command, offline_env

VENV = REPO / ".venv"
RUNNABLE = re.compile(r"^```sh runnable(?: exit=(\d+))?[ \t]*\n(.*?)^```[ \t]*$", re.M | re.S)
FENCE = re.compile(r"^```", re.M)
# The pages a new user follows for a task, each with a runnable example.
TASK_PAGES = {"docs/configuration.md", "docs/matrix.md", "docs/own-stack.md"}
TODAY = "2026-11-30"


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    script: str
    exit: int

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def doc_pages(root: Path = REPO) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def runnable_blocks(root: Path = REPO) -> list[Block]:
    blocks = []
    for page in doc_pages(root):
        text = page.read_text(encoding="utf-8")
        for match in RUNNABLE.finditer(text):
            blocks.append(Block(str(page.relative_to(root)), text.count("\n", 0, match.start()) + 1,
                                match.group(2), int(match.group(1) or 0)))
    return blocks


BLOCKS = runnable_blocks()


def test_the_task_pages_each_carry_a_runnable_block_and_the_marker_parses() -> None:
    assert {b.page for b in BLOCKS} >= TASK_PAGES
    assert any(b.exit == 1 for b in BLOCKS)
    # A marker with a typo (`sh runable`, `exit 1`) would silently leave its block untested.
    for page in doc_pages():
        for info in re.findall(r"^```(sh \S.*)$", page.read_text(encoding="utf-8"), flags=re.M):
            assert re.fullmatch(r"sh runnable(?: exit=\d+)?", info.strip()), f"{page.name}: ```{info}"


def test_no_page_says_plain_python_m_tools() -> None:
    """`python -m tools.X` fails outside the venv (No module named 'typer'); the docs name `.venv/bin/gpu-platform`."""
    for page in doc_pages():
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            assert not re.search(r"(?<![\w/.])python3? -m tools\.", line), f"{page.name}:{n}: {line}"


def test_every_gpu_platform_command_the_docs_name_exists() -> None:
    named = {m for page in doc_pages() for m in re.findall(r"bin/gpu-platform ([a-z][\w-]*)", page.read_text("utf-8"))}
    assert named, "the docs name no gpu-platform command"
    assert named <= set(cli.COMMANDS), named - set(cli.COMMANDS)


def test_gpu_platform_passes_each_tools_exit_status_through(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["matrix", "check", "--os", "ubuntu-26.04", "--driver", "580.173.02", "--operator", "v26.7.0",
                     "--today", TODAY]) == 1
    assert "INCOMPATIBLE" in capsys.readouterr().out
    assert cli.main(["preview", "--stack", "no-such-stack"]) == 2
    assert "no-such-stack" in capsys.readouterr().err
    assert cli.main(["nope"]) == 2 and "one of: preview, gate" in capsys.readouterr().err


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (VENV / "bin" / "python").exists():
        pytest.skip(f"{VENV} is not there: make venv")
    path = fresh_clone(tmp_path_factory.mktemp("fresh-clone"))
    # The launcher, as `make program-venv` writes it (the shared .venv may predate it; the content is the same).
    proc = subprocess.run(make_command(".venv/bin/gpu-platform"), cwd=path, capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return path


def _fresh_copy(clone: Path, tmp_path: Path) -> Path:
    """A copy of the clone per block, so one block's files (`cp Pulumi.dev.yaml ...`) never reach another."""
    copy = tmp_path / "clone"
    shutil.copytree(clone, copy, symlinks=True)
    return copy


@pytest.mark.parametrize("block", BLOCKS, ids=str)
def test_a_runnable_block_works_as_written_on_a_fresh_clone_offline(block: Block, clone: Path,
                                                                    tmp_path: Path) -> None:
    root = _fresh_copy(clone, tmp_path)
    proc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", block.script], cwd=root,
                          env=offline_env(tmp_path), capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == block.exit, f"{block}: exit {proc.returncode}\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}"


def test_make_preview_json_prints_only_json_even_when_it_installs_first(clone: Path, tmp_path: Path) -> None:
    # -W requirements.txt: as if requirements.txt had changed, so pip runs (everything is installed already: it
    # only says so) and the launcher is written again, as on a first run.
    proc = subprocess.run([*make_command("preview-json", f"TODAY={TODAY}")[:2], "-W", "requirements.txt",
                           "-o", ".venv/.requirements-installed", "preview-json", f"TODAY={TODAY}"],
                          cwd=clone, env=offline_env(tmp_path), capture_output=True, text=True, timeout=600,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)  # the whole of stdout: one document, nothing before or after
    assert doc["stack"] == "dev" and doc["phase"] == "preview"
    assert "installing the runtime" in proc.stderr and "upstream cache:" in proc.stderr


def test_make_preview_shows_the_previews_own_status(clone: Path, tmp_path: Path) -> None:
    # The field report's stack (R535 past its end of life) under prod's policy config: one mandatory finding.
    root = _fresh_copy(clone, tmp_path)
    shutil.copy(REPO / "tests/tools/fixtures/stacks/Pulumi.fieldreport.yaml", root / "Pulumi.fieldreport.yaml")
    shutil.copy(REPO / "policies/config/prod.json", root / "policies/config/fieldreport.json")
    env = offline_env(tmp_path)
    failed = subprocess.run(make_command("preview", "STACK=fieldreport", f"TODAY={TODAY}"), cwd=root, env=env,
                            capture_output=True, text=True, timeout=600, check=False)
    assert "verdict: FAIL, exit 1" in failed.stdout, failed.stdout + failed.stderr
    # GNU make ends 2 whenever a command fails, and names the command's own status.
    assert failed.returncode == 2 and re.search(r"\[Makefile:\d+: preview\] Error 1$", failed.stderr, re.M)
    refused = subprocess.run(make_command("preview", "STACK=no-such-stack"), cwd=root, env=env,
                             capture_output=True, text=True, timeout=600, check=False)
    assert refused.returncode == 2 and re.search(r"\[Makefile:\d+: preview\] Error 2$", refused.stderr, re.M)
    assert "stack config file not found for --stack no-such-stack" in refused.stderr
    direct = subprocess.run([".venv/bin/gpu-platform", "preview", "--stack", "no-such-stack"], cwd=root, env=env,
                            capture_output=True, text=True, timeout=600, check=False)
    assert direct.returncode == 2

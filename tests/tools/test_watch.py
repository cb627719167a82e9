"""Watch mode (`python -m tools.preview --watch`): what a save invalidates, what is printed after it.

No test here measures time; the benchmark does (bench/preview.py).
"""

from __future__ import annotations

import argparse
import io
import os
import shutil
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.shared import REPO
from tools.engine.records import RecordedResource, Violation
from tools.preview import watch
from tools.preview.watch import Verdict, Watched, changed, diff_lines, invalidated, snapshot, verdict_of
from tools.preview.worker import preload_candidates

TINY_PROGRAM = REPO / "tests" / "tools" / "fixtures" / "tiny_program"
URN = "urn:pulumi:dev::gpu-platform::aws:eks/nodeGroup:NodeGroup::gpu"
OTHER = "urn:pulumi:dev::gpu-platform::kubernetes:core/v1:Namespace::ns"
BLOCK = Violation("cuda-driver-compatible", "mandatory", URN, "CUDA 13.0 cannot run on driver 535")
WARN = Violation("gpu-driver-branch-lifecycle", "advisory", URN, "R570 ends soon")


def _bump(path: Path, ns: int) -> None:
    os.utime(path, ns=(ns, ns))


def test_snapshot_and_changed_see_added_removed_and_modified_files(tmp_path: Path) -> None:
    a, b, c = tmp_path / "a.py", tmp_path / "b.py", tmp_path / "c.py"
    a.write_text("a")
    b.write_text("b")
    before = snapshot([a, b, c])
    assert set(before) == {a, b}  # a missing file is simply absent
    _bump(a, before[a] + 1_000_000)
    b.unlink()
    c.write_text("c")
    after = snapshot([a, b, c])
    assert changed(before, after) == [a, b, c]
    assert changed(after, snapshot([a, b, c])) == []


def test_python_files_skip_virtualenvs_tests_and_hidden_folders(tmp_path: Path) -> None:
    for rel in ("__main__.py", "components/x.py", "components/data.yaml", ".venv/lib/y.py", "tests/test_z.py",
                ".hidden/h.py", "venv/v.py", "components/__pycache__/x.cpython-311.py"):
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("")
    assert watch.python_files(tmp_path) == [tmp_path / "__main__.py", tmp_path / "components" / "x.py"]


def test_watched_files_of_this_repository_split_program_and_pack() -> None:
    watched = watch.watched_files(REPO, REPO / "Pulumi.prod.yaml", REPO / "policies/config/prod.json",
                                  REPO / "policies")
    assert REPO / "components" / "program.py" in watched.program
    assert REPO / "__main__.py" in watched.program
    assert REPO / "policies" / "gpu_guard" / "matrix.yaml" in watched.pack
    assert REPO / "policies" / "gpu_guard" / "base.py" in watched.pack
    assert not set(watched.program) & set(watched.pack)
    assert not any("tests" in p.parts or "bench" in p.parts for p in watched.program)
    assert watched.all()[:2] == [REPO / "Pulumi.prod.yaml", REPO / "policies/config/prod.json"]


def test_what_a_save_invalidates() -> None:
    stack, policy, prog, pack = Path("/s.yaml"), Path("/p.json"), Path("/c.py"), Path("/policies/m.yaml")
    watched = Watched(stack, policy, (prog,), (pack,))
    assert invalidated(watched, [stack]) == watch.Invalidated(runner=False, pack=False, policy_config=False)
    assert invalidated(watched, [policy]) == watch.Invalidated(runner=False, pack=False, policy_config=True)
    assert invalidated(watched, [prog]) == watch.Invalidated(runner=True, pack=False, policy_config=False)
    # The program imports the matrix too: a pack file makes both stale.
    assert invalidated(watched, [pack, stack]) == watch.Invalidated(runner=True, pack=True, policy_config=False)
    assert invalidated(Watched(stack, None, (), ()), [stack]).policy_config is False


def test_first_verdict_prints_the_count_and_every_violation_blocking_first() -> None:
    lines = diff_lines(None, Verdict(None, frozenset({WARN, BLOCK}), {URN: {}, OTHER: {}}))
    assert lines == [
        "2 resources",
        "+ mandatory cuda-driver-compatible [aws:eks/nodeGroup:NodeGroup::gpu]: CUDA 13.0 cannot run on driver 535",
        "+ advisory gpu-driver-branch-lifecycle [aws:eks/nodeGroup:NodeGroup::gpu]: R570 ends soon",
    ]


def test_later_verdicts_print_only_what_changed() -> None:
    before = Verdict(None, frozenset({BLOCK}), {URN: {"maxSize": 2}, OTHER: {}})
    same = Verdict(None, frozenset({BLOCK}), {URN: {"maxSize": 2}, OTHER: {}})
    assert diff_lines(before, same) == []
    after = Verdict(None, frozenset({WARN}), {URN: {"maxSize": 3}, "urn:a::b::t::new": {}})
    assert diff_lines(before, after) == [
        "+ resource t::new",
        "- resource kubernetes:core/v1:Namespace::ns",
        "~ resource aws:eks/nodeGroup:NodeGroup::gpu (inputs changed)",
        "- mandatory cuda-driver-compatible [aws:eks/nodeGroup:NodeGroup::gpu]: CUDA 13.0 cannot run on driver 535",
        "+ advisory gpu-driver-branch-lifecycle [aws:eks/nodeGroup:NodeGroup::gpu]: R570 ends soon",
    ]


def test_rejection_is_printed_once_and_recovery_relists_the_violations() -> None:
    good = Verdict(None, frozenset({WARN}), {URN: {}})
    bad = Verdict(rejected="Pulumi.dev.yaml: gpuOperator.driverVersion = \"x\": not a driver version")
    assert diff_lines(good, bad) == [f"rejected: {bad.rejected}"]
    assert diff_lines(bad, bad) == []  # the same rejection after another save: nothing new
    assert diff_lines(bad, good) == [
        "accepted: the configuration is valid again",
        "+ resource aws:eks/nodeGroup:NodeGroup::gpu",
        "+ advisory gpu-driver-branch-lifecycle [aws:eks/nodeGroup:NodeGroup::gpu]: R570 ends soon",
    ]


def test_status_line_counts_and_names_the_saved_files() -> None:
    verdict = Verdict(None, frozenset({BLOCK, WARN}), {URN: {}})
    line = watch.status_line(verdict, 0.25, [REPO / "Pulumi.dev.yaml", Path("/tmp/x.yaml")], REPO, " (detail)")
    assert line.endswith("1 mandatory, 1 advisory violation(s), 1 resources; judged in 0.25 s (detail) "
                         "after saving Pulumi.dev.yaml, /tmp/x.yaml")
    assert "configuration rejected (exit 2)" in watch.status_line(Verdict(rejected="no"), 1.0, [], REPO)


def test_verdict_of_keys_resources_by_urn() -> None:
    res = RecordedResource(urn=URN, type="aws:eks/nodeGroup:NodeGroup", name="gpu", parent=None, custom=True,
                           inputs={"maxSize": 2}, properties=None)
    verdict = verdict_of([res], [BLOCK, BLOCK])
    assert verdict.resources == {URN: {"maxSize": 2}} and verdict.violations == {BLOCK} and verdict.mandatory == 1


def test_preload_candidates_are_installed_and_program_modules_never_main(tmp_path: Path) -> None:
    import pulumi  # noqa: PLC0415

    from tools.preview import worker  # noqa: PLC0415

    class Fake:
        def __init__(self, path: Path) -> None:
            self.__file__ = str(path)

    program = tmp_path / "prog"
    (program / "components").mkdir(parents=True)
    modules = {"pulumi": pulumi, "components.x": Fake(program / "components" / "x.py"),
               "__main__": Fake(program / "__main__.py"), "tools.preview.worker": worker, "builtin": object()}
    assert preload_candidates(modules, program) == ("components.x", "pulumi")


def test_watch_judges_then_rejudges_after_a_save(tmp_path: Path) -> None:
    """The whole loop on the tiny program: a real runner process and a real policy pack kept warm."""
    program = tmp_path / "tiny"
    shutil.copytree(TINY_PROGRAM, program)
    stack = program / "Pulumi.dev.yaml"
    args = argparse.Namespace(program=program, stack="dev", config_file=None, phase="preview", today=None,
                              policy_config=None, interval=0.05)
    out = io.StringIO()

    def edit_after_first_verdict() -> None:
        deadline = time.monotonic() + 240
        while "judged in" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.05)
        stack.write_text(stack.read_text().replace("tiny:greeting: hello", "tiny:greeting: bonjour"))

    editor = threading.Thread(target=edit_after_first_verdict)
    editor.start()
    assert watch.watch(args, out, max_verdicts=2) == 0
    editor.join()
    text = out.getvalue()
    assert text.count("judged in") == 2, text
    assert "~ resource kubernetes:core/v1:ConfigMap::settings (inputs changed)" in text
    assert "after saving Pulumi.dev.yaml" in text


def test_runner_preload_imports_from_the_program_folder_and_makes_the_warm_calls(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tools.preview import worker  # noqa: PLC0415

    (tmp_path / "warmmod_for_test.py").write_text("calls = []\ndef warm():\n    calls.append(1)\n")
    (tmp_path / "brokenmod_for_test.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.setattr(worker, "WARM_CALLS", (("warmmod_for_test", "warm"), ("not_imported_mod", "warm")))
    path_before = list(sys.path)
    try:
        worker.preload(["warmmod_for_test", "brokenmod_for_test"], tmp_path)
        assert sys.modules["warmmod_for_test"].calls == [1]
        assert "brokenmod_for_test" not in sys.modules  # its failure is left for the run to report
        assert sys.path == path_before
    finally:
        sys.modules.pop("warmmod_for_test", None)

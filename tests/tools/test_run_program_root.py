"""A program run in process starts with no root stack resource, whatever ran before it in the thread: a test that
ran Pulumi's mocks earlier in the same worker left the SDK's root context variable set, and every later in-process
run failed with "Only one root Pulumi Stack may be active at once" (found when the merged suite ran both)."""

from __future__ import annotations

import datetime

from pulumi.runtime import settings

from tests.shared import REPO
from tools.preview.command import run_program
from tools.preview.stack_files import load_project, load_stack_config


def test_a_root_left_set_in_the_thread_does_not_stop_the_next_run_and_is_given_back() -> None:
    project = load_project(REPO)
    config = load_stack_config(REPO / "Pulumi.dev.yaml", project.name, REPO)
    left = object()
    token = settings.ROOT.set(left)  # type: ignore[arg-type]  # what an earlier run left
    try:
        recording = run_program(project, "dev", config, "preview", datetime.date(2026, 12, 7))
        assert any(r.type == "pulumi:pulumi:Stack" for r in recording.resources)
        assert settings.ROOT.get() is left
    finally:
        settings.ROOT.reset(token)

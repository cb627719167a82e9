"""One pack process asked about several previews (watch mode, a pack started while the program runs)."""

from __future__ import annotations

import os

import pytest

from tests.tools.conftest import MakeResource
from tools.engine.gate import GateError, run_gate
from tools.engine.records import RecordedResource
from tools.engine.warm_pack import WarmPack


def _widgets(make_resource: MakeResource, size: object) -> list[RecordedResource]:
    group = make_resource("g", "sample:index:Group")
    return [group, make_resource("w", "sample:index:Widget", {"size": size}, parent=group)]


def _judge(pack: WarmPack, resources: list[RecordedResource], config: dict[str, object] | None = None):
    return pack.judge(resources, stack="dev", project="sample", phase="preview", policy_config=config)


def test_one_process_judges_each_stack_as_a_fresh_pack_would(sample_pack, make_resource, tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("SAMPLE_PACK_PID_FILE", str(pid_file))
    with WarmPack(pack_dir=sample_pack, stack="dev", project="sample") as pack:
        big = _judge(pack, _widgets(make_resource, 20))
        pid = int(pid_file.read_text())
        small = _judge(pack, _widgets(make_resource, 3))
        raised = _judge(pack, _widgets(make_resource, 20), {"widget-size-limit": "mandatory"})
        again = _judge(pack, _widgets(make_resource, 20))
        assert int(pid_file.read_text()) == pid  # the same process every time
    fresh = run_gate(_widgets(make_resource, 20), pack_dir=sample_pack, stack="dev", project="sample")
    assert big.violations == again.violations == fresh.violations
    assert [(v.policy, v.enforcement) for v in big.violations] == [("widget-size-limit", "advisory")]
    assert small.violations == ()
    assert [v.enforcement for v in raised.violations] == ["mandatory"]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # closed with the `with`


def test_refuses_another_stack_project_or_phase(sample_pack, make_resource):
    with WarmPack(pack_dir=sample_pack, stack="dev", project="sample") as pack:
        for stack, project, phase in (("prod", "sample", "preview"), ("dev", "other", "preview"),
                                      ("dev", "sample", "up")):
            with pytest.raises(GateError, match="start another"):
                pack.judge(_widgets(make_resource, 3), stack=stack, project=project, phase=phase)  # type: ignore[arg-type]


def test_a_pack_that_failed_is_started_again_for_the_next_stack(tmp_path, make_resource, sample_pack, monkeypatch):
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("SAMPLE_PACK_PID_FILE", str(pid_file))
    pack = WarmPack(pack_dir=sample_pack, stack="dev", project="sample")
    try:
        _judge(pack, _widgets(make_resource, 3))
        first = int(pid_file.read_text())
        pack.close()
        assert not pack.alive
        assert _judge(pack, _widgets(make_resource, 20)).violations
        assert int(pid_file.read_text()) != first
    finally:
        pack.close()

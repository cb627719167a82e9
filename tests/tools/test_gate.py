"""The policy gate starts a real pack as a child process and speaks the analyzer protocol to it."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from tests.tools.conftest import UNKNOWN, MakeResource
from tools.engine.gate import ConfigError, GateError, load_policy_config, run_gate
from tools.engine.records import RecordedResource


def _gate(pack: Path, resources: list[RecordedResource], config: dict[str, object] | None = None, **kw):
    return run_gate(resources, pack_dir=pack, stack="dev", project="sample", policy_config=config, **kw)


def _grouped_widget(make_resource: MakeResource, size: object) -> list[RecordedResource]:
    group = make_resource("g", "sample:index:Group")
    return [group, make_resource("w", "sample:index:Widget", {"size": size}, parent=group)]


def _process_is_gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def test_reports_resource_violation_at_its_default_advisory_level(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, 20))

    assert [(v.policy, v.enforcement) for v in result.violations] == [("widget-size-limit", "advisory")]
    violation = result.violations[0]
    assert violation.urn == "urn:pulumi:dev::sample::sample:index:Group$sample:index:Widget::w"
    assert "widget w has size 20" in violation.message
    assert result.pack_name == "sample-pack"


def test_reports_nothing_for_a_compliant_stack(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, 3))

    assert result.violations == ()


def test_describes_each_policy_with_its_default_and_applied_enforcement(sample_pack, make_resource):
    result = _gate(sample_pack, [], {"widget-size-limit": "mandatory"})

    by_name = {p.name: p for p in result.policies}
    assert by_name["widget-size-limit"].kind == "resource"
    assert by_name["widget-size-limit"].default_enforcement == "advisory"
    assert by_name["widget-size-limit"].enforcement == "mandatory"
    assert by_name["widgets-grouped"].kind == "stack"
    assert by_name["widgets-grouped"].enforcement == "mandatory"


def test_config_raises_advisory_policy_to_mandatory(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, 20), {"widget-size-limit": "mandatory"})

    assert [(v.policy, v.enforcement) for v in result.violations] == [("widget-size-limit", "mandatory")]
    assert [v.policy for v in result.mandatory] == ["widget-size-limit"]


def test_config_all_raises_every_policy(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, 20), {"all": "mandatory"})

    assert {p.enforcement for p in result.policies} == {"mandatory"}
    assert result.violations[0].enforcement == "mandatory"


def test_config_properties_reach_the_policy(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, 20), {"widget-size-limit": {"maxSize": 50}})

    assert result.violations == ()


def test_rejects_config_that_lowers_a_mandatory_policy(sample_pack, make_resource, tmp_path):
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps({"widgets-grouped": {"enforcementLevel": "advisory"}}))

    with pytest.raises(ConfigError) as caught:
        _gate(sample_pack, _grouped_widget(make_resource, 3), load_policy_config(path))

    message = str(caught.value)
    assert str(path) in message
    assert "`widgets-grouped`" in message
    assert "'advisory'" in message
    assert "never lower" in message
    assert "Fix:" in message
    assert caught.value.key == "widgets-grouped"


def test_rejects_all_advisory_because_it_lowers_the_mandatory_policy(sample_pack, make_resource):
    with pytest.raises(ConfigError) as caught:
        _gate(sample_pack, [], {"all": "advisory"})

    assert caught.value.key == "all"
    assert "lowers policy `widgets-grouped` from mandatory to advisory" in str(caught.value)


def test_accepts_all_advisory_when_the_mandatory_policy_is_kept_by_name(sample_pack, make_resource):
    result = _gate(sample_pack, [], {"all": "advisory", "widgets-grouped": "mandatory"})

    assert {p.name: p.enforcement for p in result.policies} == {
        "widget-size-limit": "advisory",
        "widgets-grouped": "mandatory",
    }


def test_rejects_disabling_a_policy(sample_pack):
    with pytest.raises(ConfigError, match="from advisory to disabled"):
        _gate(sample_pack, [], {"widget-size-limit": "disabled"})


def test_rejects_a_misspelt_policy_name_with_the_nearest_one(sample_pack):
    with pytest.raises(ConfigError, match="did you mean `widget-size-limit`"):
        _gate(sample_pack, [], {"widget-size-limt": "mandatory"})


def test_rejects_properties_that_break_the_policy_config_schema(sample_pack):
    with pytest.raises(ConfigError) as caught:
        _gate(sample_pack, [], {"widget-size-limit": {"maxSize": "big"}})

    assert caught.value.key == "widget-size-limit.maxSize"
    assert "'big'" in str(caught.value)


def test_unknown_value_gives_advisory_cannot_run_violation_even_when_raised(sample_pack, make_resource):
    result = _gate(sample_pack, _grouped_widget(make_resource, UNKNOWN), {"widget-size-limit": "mandatory"})

    assert len(result.violations) == 1
    violation = result.violations[0]
    assert violation.policy == "widget-size-limit"
    assert violation.enforcement == "advisory"
    assert "can't run policy 'widget-size-limit'" in violation.message
    assert "during preview" in violation.message
    assert violation.urn.endswith("::w")


def test_stack_policy_sees_each_resource_parent(sample_pack, make_resource):
    group = make_resource("g", "sample:index:Group")
    inner = make_resource("inner", "sample:index:Widget", {"size": 1}, parent=group)
    nested = make_resource("nested", "sample:index:Widget", {"size": 1}, parent=inner)
    orphan = make_resource("orphan", "sample:index:Widget", {"size": 1})

    result = _gate(sample_pack, [group, inner, nested, orphan])

    stack = {v.urn.rsplit("::", 1)[1]: v for v in result.violations if v.policy == "widgets-grouped"}
    assert set(stack) == {"nested", "orphan"}
    assert "parent inner of type sample:index:Widget" in stack["nested"].message
    assert "has no parent" in stack["orphan"].message
    assert stack["nested"].enforcement == "mandatory"


def test_stops_the_pack_process_after_a_run(sample_pack, make_resource, tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("SAMPLE_PACK_PID_FILE", str(pid_file))

    _gate(sample_pack, _grouped_widget(make_resource, 3))

    assert _process_is_gone(int(pid_file.read_text()))


def test_stops_the_pack_process_when_config_is_rejected(sample_pack, tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    monkeypatch.setenv("SAMPLE_PACK_PID_FILE", str(pid_file))

    with pytest.raises(ConfigError):
        _gate(sample_pack, [], {"all": "disabled"})

    assert _process_is_gone(int(pid_file.read_text()))


def _write_pack(folder: Path, main: str) -> Path:
    folder.mkdir()
    (folder / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (folder / "__main__.py").write_text(textwrap.dedent(main))
    return folder


def test_pack_that_crashes_at_start_gives_gate_error_with_its_stderr(tmp_path):
    pack = _write_pack(tmp_path / "crashing", 'raise RuntimeError("policy table missing: matrix.yaml")\n')

    with pytest.raises(GateError) as caught:
        _gate(pack, [])

    message = str(caught.value)
    assert "exited with status 1 before printing its analyzer port" in message
    assert "RuntimeError: policy table missing: matrix.yaml" in message


def test_pack_that_never_prints_its_port_is_stopped(tmp_path):
    pid_file = tmp_path / "pid"
    pack = _write_pack(
        tmp_path / "silent",
        f"""
        import os, sys, time
        open({str(pid_file)!r}, "w").write(str(os.getpid()))
        sys.stderr.write("warming up forever\\n")
        sys.stderr.flush()
        time.sleep(600)
        """,
    )

    with pytest.raises(GateError) as caught:
        _gate(pack, [], timeout_s=4)

    assert "did not print its analyzer port" in str(caught.value)
    assert "warming up forever" in str(caught.value)
    assert _process_is_gone(int(pid_file.read_text()))


def test_policy_that_raises_gives_gate_error_naming_the_resource(tmp_path, make_resource):
    pack = _write_pack(
        tmp_path / "raising",
        """
        from pulumi_policy import EnforcementLevel, PolicyPack, ResourceValidationPolicy

        def boom(args, report_violation):
            if args.resource_type == "sample:index:Widget":  # not the default provider the engine adds
                raise KeyError("spec")

        PolicyPack(name="raising", policies=[ResourceValidationPolicy(
            name="boom", description="raises", enforcement_level=EnforcementLevel.MANDATORY, validate=boom)])
        """,
    )
    widget = make_resource("w", "sample:index:Widget", {"size": 1})

    with pytest.raises(GateError) as caught:
        _gate(pack, [widget])

    assert f"Analyze({widget.urn})" in str(caught.value)


def test_rejects_a_folder_without_pulumipolicy_yaml(tmp_path):
    with pytest.raises(GateError, match=r"PulumiPolicy\.yaml"):
        _gate(tmp_path, [])


def test_loads_shorthand_and_object_policy_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"all": "mandatory", "widget-size-limit": {"maxSize": 3}}))

    assert load_policy_config(path) == {"all": "mandatory", "widget-size-limit": {"maxSize": 3}}


def test_loads_an_empty_policy_config_file_as_no_config(tmp_path):
    path = tmp_path / "config.json"
    path.write_text("  \n")

    assert load_policy_config(path) == {}


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"widget-size-limit": "strict"}', "`widget-size-limit` = 'strict' is not an enforcement level"),
        ('{"x": {"enforcementLevel": 1}}', "`x.enforcementLevel` = 1 is not an enforcement level"),
        ('{"x": 3}', "`x` = 3 is not a valid policy config value"),
        ('["mandatory"]', "must be a JSON object"),
        ('{"x": ', "line 1 column 7: not valid JSON"),
    ],
)
def test_rejects_malformed_policy_config_naming_file_and_key(tmp_path, content, expected):
    path = tmp_path / "config.json"
    path.write_text(content)

    with pytest.raises(ConfigError) as caught:
        load_policy_config(path)

    assert str(path) in str(caught.value)
    assert expected in str(caught.value)
    assert "fix" in str(caught.value).lower()

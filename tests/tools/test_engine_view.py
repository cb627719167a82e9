"""What the offline gate hands the pack is what the engine hands it.

Each engine fact is pinned to its source in pulumi/pulumi (commit 1b5949891b3c of the mirror read for
issue 7): sdk/go/common/resource/plugin/rpc.go lines 190-263 (how an analyzer sees resource references,
output values, secrets and unknowns), pkg/resource/plugin/analyzer_plugin.go lines 737-764 (the
resource options an analyzer gets), pkg/resource/deploy/default_providers.go lines 139-175 and
providers/provider.go lines 107-125 (default providers), pkg/backend/stack.go lines 177-200 (stack
tags), pkg/resource/deploy/step_generator.go line 292 (reads are never analyzed) and
source_eval.go lines 2826-2882 (a remote component goes to its provider's Construct).
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

from google.protobuf import json_format, struct_pb2

from tests.tools.conftest import MakeResource
from tools.engine.gate import pack_python, run_gate
from tools.engine.mocks.monitor import SIG_KEY, SIG_OUTPUT, SIG_RESOURCE, SIG_SECRET
from tools.engine.records import UNKNOWN, RecordedResource
from tools.engine.view import default_provider, engine_resources, engine_struct, not_seen_offline, stack_tags

ROLE_URN = "urn:pulumi:dev::sample::aws:iam/role:Role::node-role"


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def _plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    return json_format.MessageToDict(struct)


def test_a_resource_reference_reaches_the_pack_as_its_id_or_while_unknown_its_urn() -> None:
    # Sent verbatim, the reference signature would crash the pack: pulumi/pulumi-policy
    # sdk/python/lib/pulumi_policy/deserialize.py line 73 ("Unrecognized signature", commit 805bcbc).
    with_id = {SIG_KEY: SIG_RESOURCE, "urn": ROLE_URN, "id": "node-role-1a2b3c4"}
    without_id = {SIG_KEY: SIG_RESOURCE, "urn": ROLE_URN}
    sent = _plain(engine_struct(_struct({"roles": [with_id], "role": without_id})))

    assert sent == {"roles": ["node-role-1a2b3c4"], "role": ROLE_URN}


def test_output_values_become_their_value_or_the_unknown_sentinel_and_secrets_stay_secret() -> None:
    known = {SIG_KEY: SIG_OUTPUT, "value": "arn:aws:iam::406593072817:role/x", "dependencies": [ROLE_URN]}
    unknown = {SIG_KEY: SIG_OUTPUT, "dependencies": [ROLE_URN]}
    secret_output = {SIG_KEY: SIG_OUTPUT, "value": "s3cr3t", "secret": True}
    secret = {SIG_KEY: SIG_SECRET, "value": "token"}
    sent = _plain(engine_struct(_struct({"a": known, "b": unknown, "c": secret_output, "d": secret})))

    assert sent == {
        "a": "arn:aws:iam::406593072817:role/x",
        "b": UNKNOWN,
        "c": {SIG_KEY: SIG_SECRET, "value": "s3cr3t"},
        "d": {SIG_KEY: SIG_SECRET, "value": "token"},
    }


def test_default_provider_is_named_by_version_at_the_root_with_the_package_config() -> None:
    provider = default_provider("aws", "7.51.1", "dev", "sample", {"aws:region": "eu-west-1", "sample:x": "1"})

    assert provider.urn == "urn:pulumi:dev::sample::pulumi:providers:aws::default_7_51_1"
    assert provider.parent is None
    assert provider.inputs == {"region": "eu-west-1", "version": "7.51.1"}


def test_stack_tags_are_the_project_runtime_description_and_pulumi_tags() -> None:
    tags = stack_tags("sample", "python", "A sample", {"pulumi:tags": json.dumps({"team": "inference"})})

    assert tags == {"pulumi:project": "sample", "pulumi:runtime": "python", "pulumi:description": "A sample",
                    "team": "inference"}


def test_reads_are_not_analyzed_remote_components_only_with_empty_props_and_both_reach_the_stack_policies(
    make_resource: MakeResource,
) -> None:
    read = RecordedResource(urn="urn:pulumi:dev::sample::aws:eks/cluster:Cluster::adopted",
                            type="aws:eks/cluster:Cluster", name="adopted", parent=None, custom=True, inputs={},
                            properties=_struct({}), read=True, outputs={"version": "1.35"})
    remote = RecordedResource(urn="urn:pulumi:dev::sample::eks:index:Cluster::remote", type="eks:index:Cluster",
                              name="remote", parent=None, custom=False, inputs={"version": "1.35"},
                              properties=_struct({"version": "1.35"}), remote=True,
                              outputs={"kubeconfigJson": UNKNOWN})
    items = {i.res.name: i for i in engine_resources([read, remote], stack="dev", project="sample",
                                                       stack_config={})}

    assert not items["adopted"].analyzed
    # The provider's own registration of the component, `{}` props (tools/engine/view.py): never its inputs.
    assert items["remote"].analyzed and _plain(items["remote"].inputs) == {}
    assert _plain(items["adopted"].outputs) == {"version": "1.35"}
    assert _plain(items["remote"].outputs) == {"kubeconfigJson": UNKNOWN}  # its outputs, never its inputs
    assert [g["type"] for g in not_seen_offline([read, remote])] == ["eks:index:Cluster"]


ECHO_PACK = """
    import json
    from pulumi_policy import (EnforcementLevel, PolicyPack, ResourceValidationPolicy, StackValidationPolicy)

    def echo(args, report_violation):
        o = args.opts
        report_violation(json.dumps({
            "props": dict(args.props),
            "ignoreChanges": list(o.ignore_changes),
            "deleteBeforeReplace": o.delete_before_replace,
            "aliases": list(o.aliases),
            "additionalSecretOutputs": list(o.additional_secret_outputs),
            "parent": o.parent,
            "provider": [args.provider.urn, dict(args.provider.props)] if args.provider else None,
            "tags": dict(args.stack_tags),
        }, sort_keys=True))

    def stack(args, report_violation):
        report_violation(json.dumps(sorted(
            [r.urn, r.parent.urn if r.parent else None,
             {k: [d.urn for d in v] for k, v in r.property_dependencies.items()}] for r in args.resources)))

    PolicyPack(name="echo", enforcement_level=EnforcementLevel.ADVISORY, policies=[
        ResourceValidationPolicy(name="echo", description="echo", validate=echo),
        StackValidationPolicy(name="stack", description="stack", validate=stack)])
"""


def _echo_pack(tmp_path: Path) -> Path:
    pack = tmp_path / "echo"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(textwrap.dedent(ECHO_PACK))
    return pack


def test_the_pack_gets_full_options_default_provider_tags_and_references_as_the_engine_sends_them(
    tmp_path: Path, make_resource: MakeResource,
) -> None:
    role = make_resource("node-role", "aws:iam/role:Role", {"name": "node-role"})
    holder_props = {"role": {SIG_KEY: SIG_RESOURCE, "urn": role.urn}}
    holder = RecordedResource(
        urn="urn:pulumi:dev::sample::sample:index:Holder::holder", type="sample:index:Holder", name="holder",
        parent=None, custom=True, inputs={"role": role.urn}, properties=_struct(holder_props),
        property_dependencies={"role": (role.urn,)}, ignore_changes=("tags",), delete_before_replace=True,
        aliases=("urn:pulumi:dev::sample::sample:index:Holder::old",), additional_secret_outputs=("token",),
        version="1.2.3",
    )
    result = run_gate([role, holder], pack_dir=_echo_pack(tmp_path), stack="dev", project="sample",
                      stack_config={"sample:region": "eu-west-1"}, tags={"pulumi:project": "sample"})
    echoed = {v.urn.rsplit("::", 1)[-1]: json.loads(v.message.split("\n", 1)[1])
              for v in result.violations if v.policy == "echo"}

    assert echoed["holder"] == {
        "props": {"role": role.urn},  # no id yet: the URN, as rpc.go marshals it for an analyzer
        "ignoreChanges": ["tags"],
        "deleteBeforeReplace": True,
        "aliases": ["urn:pulumi:dev::sample::sample:index:Holder::old"],
        "additionalSecretOutputs": ["token"],
        "parent": None,
        "provider": ["urn:pulumi:dev::sample::pulumi:providers:sample::default_1_2_3",
                     {"region": "eu-west-1", "version": "1.2.3"}],
        "tags": {"pulumi:project": "sample"},
    }
    assert echoed["node-role"]["deleteBeforeReplace"] is None  # unset stays unset
    # The engine analyzes the default provider it registers, before its first user.
    assert "default_1_2_3" in echoed and "default" in echoed
    stack_view = next(json.loads(v.message.split("\n", 1)[1]) for v in result.violations if v.policy == "stack")
    assert [holder.urn, None, {"role": [role.urn]}] in stack_view
    # A preview's stack verdict stops a CLI `pulumi up` before anything is created: it previews first
    # (pulumi/pulumi pkg/backend/apply.go lines 287-303).
    assert all(v.blocks == "before-create" for v in result.violations)


def test_the_gate_runs_the_pack_with_its_own_venv_when_it_exists(tmp_path: Path) -> None:
    pack = tmp_path / "pack"
    (pack / "venv" / "bin").mkdir(parents=True)
    assert pack_python(pack) != str(pack / "venv" / "bin" / "python")
    (pack / "venv" / "bin" / "python").write_text("")

    assert pack_python(pack) == str(pack / "venv" / "bin" / "python")


def _first_preview_objects() -> list[RecordedResource]:
    k8s = RecordedResource(urn="urn:pulumi:dev::sample::pulumi:providers:kubernetes::k8s",
                           type="pulumi:providers:kubernetes", name="k8s", parent=None, custom=True,
                           inputs={"kubeconfig": UNKNOWN}, properties=_struct({"kubeconfig": UNKNOWN}))
    ns = RecordedResource(urn="urn:pulumi:dev::sample::kubernetes:core/v1:Namespace::gpu",
                          type="kubernetes:core/v1:Namespace", name="gpu", parent=None, custom=True,
                          inputs={"metadata": {"labels": {"a": "b"}}},
                          properties=_struct({"metadata": {"labels": {"a": "b"}}}), provider=f"{k8s.urn}::{UNKNOWN}",
                          outputs={"metadata": {"name": "gpu-1a2b3c", "labels": {"a": "b"}}})
    role = RecordedResource(urn="urn:pulumi:dev::sample::aws:iam/role:Role::node", type="aws:iam/role:Role",
                            name="node", parent=None, custom=True, inputs={"path": "/"},
                            properties=_struct({"path": "/"}), outputs={"name": "node-9f8e7d", "path": "/"})
    return [k8s, ns, role]


def test_a_first_preview_sends_objects_of_an_unconfigured_provider_to_analyze_stack_as_empty() -> None:
    # provider_plugin.go lines 1064-1081 (no Configure with an unknown kubeconfig), 1424-1441 (preview Create
    # returns an empty map), step.go lines 445-459 (it becomes the new state's outputs), step_generator.go
    # line 3520 (AnalyzeStack sends outputs); Analyze still gets the program's inputs, with no checked name.
    preview = {i.res.name: i for i in engine_resources(_first_preview_objects(), stack="dev", project="sample",
                                                         stack_config={}, dry_run=True)}
    update = {i.res.name: i for i in engine_resources(_first_preview_objects(), stack="dev", project="sample",
                                                        stack_config={}, dry_run=False)}

    assert _plain(preview["gpu"].outputs) == {} and preview["gpu"].emptied and preview["gpu"].analyzed
    assert _plain(preview["gpu"].inputs) == {"metadata": {"labels": {"a": "b"}}}
    assert _plain(update["gpu"].outputs)["metadata"]["name"] == "gpu-1a2b3c"


def test_analyze_gets_the_checked_inputs_with_the_name_the_provider_assigned() -> None:
    # step_generator.go lines 1326-1350: `new.Inputs = inputs` after Check, handed to analyzeAll (line 1469).
    items = {i.res.name: i for i in engine_resources(_first_preview_objects(), stack="dev", project="sample",
                                                       stack_config={}, dry_run=False)}

    assert _plain(items["node"].inputs) == {"path": "/", "name": "node-9f8e7d"} and items["node"].checked_name
    assert _plain(items["gpu"].inputs)["metadata"] == {"labels": {"a": "b"}, "name": "gpu-1a2b3c"}


ROOTLESS_PACK = """
from pulumi_policy import EnforcementLevel, PolicyPack, StackValidationPolicy

PolicyPack(name="rootless", enforcement_level=EnforcementLevel.ADVISORY, policies=[
    StackValidationPolicy(name="no-urn", description="no urn", validate=lambda args, report: report("whole stack"))])
"""


def test_a_stack_diagnostic_with_no_urn_is_attributed_to_the_root_stack(tmp_path: Path,
                                                                          make_resource: MakeResource) -> None:
    # step_generator.go lines 3612-3614: resolveStackPolicyViolationURN falls back to DefaultRootStackURN.
    pack = tmp_path / "rootless"
    pack.mkdir()
    (pack / "PulumiPolicy.yaml").write_text("runtime: python\nversion: 0.0.1\n")
    (pack / "__main__.py").write_text(textwrap.dedent(ROOTLESS_PACK))
    result = run_gate([make_resource("node", "aws:iam/role:Role", {"path": "/"})], pack_dir=pack, stack="dev",
                      project="sample")

    assert [(v.policy, v.urn) for v in result.violations] == [
        ("no-urn", "urn:pulumi:dev::sample::pulumi:pulumi:Stack::sample-dev")]

"""Findings a person can act on, and one story per run (issue 46, items 3 and 4).

One line per finding: level, policy, labels, the stack key and value to change, what was found and the fix; the
policy's description and source only with --verbose; a policy's resource-part twin folded into it and counted once,
alike by the verdict line and `tools.ci_gate`; the labels explained once. A refused stack file never ends in PASS;
the API-server line never claims what it did not check.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import SHIPPED_DAY, RunPreview
from tests.shared import REPO, upstream_cache
from tools import ci_gate
from tools.engine.records import RecordedResource, Violation
from tools.preview import findings, result
from tools.preview.model import GateReport, Recording, StackConfig
from tools.preview.render import finding_line, legend, verdict_line
from tools.preview.summary_md import api_server_line

DESCRIPTION = "The driver branch every GPU pool runs is not past NVIDIA's end of life. (Stack policy: boilerplate.)"
SOURCE = "https://docs.nvidia.com/datacenter/tesla/drivers/supported-drivers-and-cuda-toolkit-versions.html"
PARSED = {
    "aws:region": "us-west-2",
    "gpu-platform:gpuOperator": {"version": "v26.7.0", "driverVersion": "580.173.02"},
    "gpu-platform:gpuNodeGroups": [{"name": "l4-spot", "os": "ubuntu-24.04", "driverVersion": "610.57.04"},
                                   {"name": "a10g", "os": "ubuntu-22.04"}],
    "gpu-platform:karpenter": {"pools": [{"name": "gpu-spot", "driverVersion": "580"}]},
}
STACK = "urn:pulumi:dev::gpu-platform::pulumi:pulumi:Stack::gpu-platform-dev"


def _resource(type_: str, name: str, parent: str | None = None) -> RecordedResource:
    urn = f"urn:pulumi:dev::gpu-platform::{type_}::{name}"
    return RecordedResource(urn=urn, type=type_, name=name, parent=parent, custom=True, inputs={}, properties=None)


POOL = _resource("gpu-platform:index:GpuNodeGroup", "l4-spot")
DRIVER = _resource("kubernetes:nvidia.com/v1alpha1:NVIDIADriver", "driver-l4-spot", POOL.urn)
OPERATOR = _resource("kubernetes:helm.sh/v3:Release", "gpu-operator")
KEYS = findings.StackKeys(PARSED, [POOL, DRIVER, OPERATOR], "gpu-platform")


def _v(policy: str, message: str, urn: str = DRIVER.urn, enforcement: str = "mandatory", **kw: object) -> Violation:
    return Violation(policy, enforcement, urn, message, **kw)  # type: ignore[arg-type]


def test_the_headline_is_what_was_found_without_the_description_and_the_source() -> None:
    v = _v("gpu-driver-branch-lifecycle", f"{DESCRIPTION}\nGPU pool(s) 'l4-spot' run driver 610.57.04: R610 reached "
           f"end of life in August 2026. Move to a supported branch: R580, R595. (source: {SOURCE})")
    assert findings.headline(v) == ("GPU pool(s) 'l4-spot' run driver 610.57.04: R610 reached end of life in August "
                                    "2026. Move to a supported branch: R580, R595.")
    assert findings.description(v) == DESCRIPTION and findings.source(v) == SOURCE
    line = finding_line(result.finding(findings.Finding(v), KEYS))
    assert line.startswith("mandatory gpu-driver-branch-lifecycle [before-create] "
                           "gpuNodeGroups[0].driverVersion = 610.57.04: GPU pool(s) 'l4-spot' run driver 610.57.04")
    assert DESCRIPTION not in line and SOURCE not in line and "\n" not in line
    verbose = finding_line(result.finding(findings.Finding(v), KEYS), verbose=True)
    assert DESCRIPTION in verbose and SOURCE in verbose
    # An API-server finding has no description: its message is the headline.
    assert findings.headline(_v("apiserver-required", "spec.x: Required value")) == "spec.x: Required value"


def test_the_stack_key_is_derived_from_the_stack_file_and_the_resources_names() -> None:
    # The pool's own key, found through the NVIDIADriver's parent (named after gpuNodeGroups[0]).
    assert KEYS.where(_v("p", "d\ndriver 610.57.04 is past its end of life")) == \
        "gpuNodeGroups[0].driverVersion = 610.57.04"
    # A value set once for the whole stack: the operator's driver, found by its value wherever the finding is.
    assert KEYS.where(_v("p", "d\nvalues driver.version 580.173.02 has no image", OPERATOR.urn)) == \
        "gpuOperator.driverVersion = 580.173.02"
    # A branch is not a prefix match of a full version: "580" (karpenter.pools[0]) is not named by 580.173.02.
    assert "karpenter" not in KEYS.where(_v("p", "d\ndriver 580.173.02 on the pool", OPERATOR.urn))
    # No value named: the list entry the resource belongs to; nothing at all: the resource as the engine names it.
    assert KEYS.where(_v("p", "d\nthe pool has no taint")) == "gpuNodeGroups[0]"
    assert KEYS.where(_v("p", "d\nno taint", OPERATOR.urn)) == "Release 'gpu-operator'"
    # Keys of another namespace keep it; `name` keys identify an entry and are never the fix.
    assert KEYS.where(_v("p", "d\nno endpoint in us-west-2", STACK)) == "aws:region = us-west-2"
    assert "name" not in KEYS.where(_v("p", "d\npool l4-spot", STACK))
    # A pending advisory fixes nothing: it names its resource.
    assert KEYS.where(_v("p-pending", "waits on driver 610.57.04", enforcement="advisory")) == \
        "NVIDIADriver 'driver-l4-spot'"


def test_twins_of_one_fact_are_shown_and_counted_once() -> None:
    stack_side = _v("gpu-driver-image-published", "d\ndriver 535.15.04 has no published image "
                    "nvcr.io/nvidia/driver:535.15.04-ubuntu22.04", OPERATOR.urn, blocks="after-update")
    resource_side = _v("gpu-driver-image-published-resource", "d\nGPU pool 'a10g' (ubuntu-22.04, "
                       "gpu-platform.io/driver=535.15.04): no published driver image")
    other_fact = _v("gpu-driver-image-published-resource", "d\nGPU pool 'l4-spot': driver 610.1.1 unpublished")
    pending = _v("one-driver-per-pool-pending", "waits", enforcement="advisory")
    shown = findings.merge_twins([stack_side, resource_side, other_fact, pending])
    assert [f.violation for f in shown] == [stack_side, other_fact, pending]
    assert shown[0].twin == resource_side and shown[0].blocks == "before-create"  # the earlier moment
    assert finding_line(result.finding(shown[0], KEYS)).startswith(
        "mandatory gpu-driver-image-published (+ gpu-driver-image-published-resource) [before-create] ")
    assert findings.counts([stack_side, resource_side, other_fact, pending]) == (2, 0, 1)
    # A different level is a different finding.
    advisory = _v("gpu-driver-image-published", stack_side.message, enforcement="advisory")
    assert len(findings.merge_twins([advisory, resource_side])) == 2


def test_the_labels_are_explained_once_and_only_those_used() -> None:
    used = [{"label": "after-update", "offlineOnly": True}, {"label": "after-update", "offlineOnly": False}]
    text = legend(used)
    assert text is not None and text.startswith("labels: after-update: ")
    assert text.count("after-update: ") == 1 and "offline only: " in text and "before-create" not in text
    assert legend([]) is None


def test_a_refused_stack_file_never_ends_in_pass() -> None:
    clean = GateReport(ran=True, detail="ran")
    refused = ("Pulumi.dev.yaml: the stack configuration has 4 problems",)
    line = verdict_line(clean, refused)
    assert line.startswith("verdict: STACK FILE REFUSED, exit 0") and "PASS" not in line
    assert "nothing here blocks" not in line
    failing = GateReport(ran=True, detail="ran", violations=(_v("gpu-nodes-tainted", "d\nno taint"),))
    assert verdict_line(failing, refused).startswith("verdict: FAIL, exit 1")
    assert "refused too" in verdict_line(failing, refused)
    assert verdict_line(clean).startswith("verdict: PASS, exit 0")


def test_the_api_server_line_says_what_was_and_was_not_checked() -> None:
    api = {"objects": 18, "kubernetesVersion": "1.35", "releases": 5, "rejected": [], "notes": []}
    missing = GateReport(ran=True, detail="ran", api_server=api, violations=(
        _v("apiserver-not-checked", "upstream cache: the upstream cache (CRDs, chart values.yaml) is missing",
           STACK, enforcement="advisory"),))
    line = api_server_line(_doc(missing))
    assert "18 objects checked against Kubernetes 1.35's built-in schemas only: 0 rejected" in line
    assert "custom resources (their CRDs and CEL rules) and the 5 Helm releases' values were not checked" in line
    assert "CEL rules included" not in line and "upstream CRDs" not in line
    full = api_server_line(_doc(GateReport(ran=True, detail="ran", api_server=api)))
    assert "and the upstream CRDs (CEL rules included), 5 Helm releases" in full and "not checked" not in full


def _doc(report: GateReport) -> dict[str, Any]:
    recording = Recording(project="gpu-platform", stack="dev", resources=(), stack_outputs={}, logs=())
    config = StackConfig(path=Path("Pulumi.dev.yaml"), values={}, secret_keys=(), parsed={})
    return result.build(recording, report, config, result.PolicyConfigUse(None, "none: test"))


def test_the_gate_counts_as_the_preview_does(tmp_path: Path) -> None:
    violations = [
        {"policy": "gpu-driver-image-published", "enforcement": "mandatory", "urn": "u1", "blocks": "after-update",
         "message": "d\ndriver 535.15.04 has no published image"},
        {"policy": "gpu-driver-image-published-resource", "enforcement": "mandatory", "urn": "u2",
         "blocks": "before-create", "message": "d\npool 'a' (gpu-platform.io/driver=535.15.04): no image"},
        {"policy": "alb-waf-attached", "enforcement": "advisory", "urn": "u3", "message": "d\nno WAF"},
        *({"policy": f"p{i}-pending", "enforcement": "advisory", "urn": "u", "message": "w"} for i in range(15)),
    ]
    report = GateReport(ran=True, detail="ran", violations=tuple(findings.from_json(violations)))
    doc = _doc(report)
    assert doc["counts"] == {"mandatory": 1, "advisory": 1, "pending": 15, "unjudged": 0}
    [twins] = [f for f in doc["findings"] if f["level"] == "mandatory"]
    assert (twins["policy"], twins["twin"], twins["label"]) == (
        "gpu-driver-image-published", "gpu-driver-image-published-resource", "before-create")
    assert verdict_line(report).endswith(": 1 mandatory, 1 advisory finding(s), 15 pending")
    gate = ci_gate.StackResult("dev", "preview", 1, 1, 1, summary="", pending=15, verdict_word=doc["verdict"])
    assert "| dev | preview | FAIL | 1 | 1 | 15 |" in ci_gate.overview_markdown([gate], None)


def test_the_dev_stack_with_a_pool_driver_past_its_end_of_life_names_the_pool_key(run_preview: RunPreview,
                                                                                   tmp_path: Path) -> None:
    text = (REPO / "Pulumi.dev.yaml").read_text(encoding="utf-8")
    anchor = "      os: ubuntu-24.04\n      capacityType: spot\n"
    assert text.count(anchor) == 1
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text(text.replace(anchor, "      os: ubuntu-24.04\n      driverVersion: 610.57.04\n"
                                          "      capacityType: spot\n"), encoding="utf-8")
    run = run_preview("--stack", "dev", "--config-file", str(stack), "--today", SHIPPED_DAY, out=True)
    assert run.returncode == 0, run.explain()
    text_out = " ".join(run.stdout.split())
    assert ("advisory gpu-driver-branch-lifecycle [after-update, offline only] gpuNodeGroups[0].driverVersion = "
            "610.57.04: GPU pool(s) 'l4-spot' run driver 610.57.04") in text_out, run.stdout
    assert "The driver branch every GPU pool runs" not in text_out  # the description: --verbose only
    assert text_out.count("labels: ") == 1
    # The human verdict and the gate's count of the same run's document agree.
    assert run.out_dir is not None
    doc = json.loads((run.out_dir / "resources.json").read_text(encoding="utf-8"))
    mandatory, advisory, pending = (doc["counts"][k] for k in ("mandatory", "advisory", "pending"))
    counted = f": {mandatory} mandatory, {advisory} advisory finding(s), {pending} pending"
    assert run.stdout.splitlines()[-1].endswith(counted)
    assert mandatory == 0 and pending > 0
    # The one advisory is the pool's; without the upstream cache (a fresh clone) the API-server check adds its own
    # `apiserver-not-checked` advisory, and only then: the count follows the cache the preview read, as it does.
    without_cache = not (upstream_cache() / "crds").is_dir()
    advisories = sorted(f["policy"] for f in doc["findings"] if f["level"] == "advisory")
    assert advisories == ["apiserver-not-checked"] * without_cache + ["gpu-driver-branch-lifecycle"], advisories
    assert advisory == len(advisories)


def test_phase_up_of_the_shipped_dev_stack_is_never_pass(run_preview: RunPreview) -> None:
    run = run_preview("--stack", "dev", "--phase", "up", "--today", SHIPPED_DAY)
    assert run.returncode == 0, run.explain()
    assert "a real `pulumi up` of this stack file would be refused" in " ".join(run.stdout.split())
    last = run.stdout.splitlines()[-1]
    assert last.startswith("verdict: STACK FILE REFUSED, exit 0") and "PASS" not in last

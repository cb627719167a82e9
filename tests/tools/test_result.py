"""The one result document (issue 56): its schema, and every surface rendering it alike.

- `tests/tools/fixtures/result/*.json` are documents as `python -m tools.preview --json` printed them (the dev
  stack, a public program with unjudged components, its broken GPU twin), each resource's inputs and options
  emptied for size; summary.md of each is a golden file (`GOLDEN_UPDATE=1` rewrites them: read the diff), and
  renders through GitHub-flavoured Markdown (markdown-it-py's `gfm-like` preset) with its tables and details.
- One live run: `--json` on stdout, resources.json and summary.md of `--out`, the terminal's first and last
  lines and `tools.ci_gate`'s row all say the same verdict and counts.
- The stack's own policy config is applied without `--policy-config`, and named; `--policy-config none` judges
  without one. A rejected stack file is a REFUSED document on stdout with `--json`, each problem with its key.
"""

from __future__ import annotations

import io
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from markdown_it import MarkdownIt  # requirements-dev.txt pins markdown-it-py (4.3.0)

from tests.conftest import SHIPPED_DAY, TINY_PROGRAM, RunPreview, run_preview_process
from tests.result_view import validate
from tools import ci_comment, ci_gate
from tools.preview import render, summary_md
from tools.preview.result import problems_of, split_fix

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "result"
GOLDEN = Path(__file__).resolve().parent / "golden"
DOCS = sorted(p.stem for p in FIXTURES.glob("*.json"))


def _doc(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))
    return doc


def _gfm(markdown: str) -> str:
    return str(MarkdownIt("gfm-like").render(markdown))


@pytest.mark.parametrize("name", DOCS)
def test_each_fixture_document_keeps_the_schema(name: str) -> None:
    validate(_doc(name))


@pytest.mark.parametrize("name", DOCS)
def test_summary_md_is_the_golden_file(name: str) -> None:
    actual = summary_md.render(_doc(name))
    golden = GOLDEN / f"summary-{name}.md"
    if os.environ.get("GOLDEN_UPDATE") == "1":
        golden.write_text(actual, encoding="utf-8")
    assert actual == golden.read_text(encoding="utf-8"), "GOLDEN_UPDATE=1 to accept a deliberate change"


@pytest.mark.parametrize("name", DOCS)
def test_summary_md_reads_verdict_first_then_findings_then_folded_rows_then_tables(name: str) -> None:
    doc = _doc(name)
    markdown = summary_md.render(doc)
    html = _gfm(markdown)
    assert html.startswith("<h1>") and summary_md.HEADLINE[doc["verdict"]] in html.split("</h1>", 1)[0]
    # The tables are GFM tables, the pending and unjudged rows are folded, each behind one line.
    assert html.count("<table>") >= 1 and "|---|" not in html
    assert html.count("<summary>Pending:") == (1 if doc["pending"] else 0)
    assert html.count("<summary>Unjudged:") == (1 if doc["unjudged"] else 0)
    order = [html.find(marker) for marker in ("<h1>", "Mandatory findings", "Advisories", "<summary>Pending",
                                              "<summary>Unjudged", "<h2>GPU pools", "<h2>Services")]
    present = [i for i in order if i >= 0]
    assert present == sorted(present), order
    # Each finding is a row, once.
    for finding in doc["findings"]:
        assert markdown.count(summary_md.cell(finding["message"])) >= 1, finding["message"]


def test_a_program_with_unjudged_components_folds_them_into_one_line_per_reason() -> None:
    doc = _doc("eks-nodegroup")
    assert len(doc["unjudged"]) == 8
    lines = summary_md.unjudged_lines(doc["unjudged"])
    assert len(lines) == 1 and lines[0].startswith("8 components (5 eks:index:NodeGroup, 3 eks:index:NodeGroupV2: ")
    assert lines[0].count("gpu-nodes-tainted") == 1  # the policies once, not once per component
    stream = io.StringIO()
    render.print_summary(stream, doc, None)
    out = stream.getvalue().splitlines()
    assert sum(1 for line in out if line.startswith("Unjudged ")) == 1
    assert sum(line.count("gpu-nodes-tainted") for line in out) == 1


def test_the_terminal_names_the_verdict_first_and_last_and_one_line_per_finding() -> None:
    doc = _doc("gpu-untainted")
    stream = io.StringIO()
    render.print_summary(stream, doc, None)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("Offline preview of stack dev (Pulumi.dev.yaml, phase preview, no policy config): "
                               "FAIL: 1 mandatory, 10 advisory, 0 pending, 0 unjudged")
    assert lines[-1] == summary_md.verdict_sentence(doc)
    for finding in doc["findings"]:
        assert sum(1 for line in lines if line.startswith(f"  {finding['level']} {finding['policy']} ")
                   and finding["message"].rstrip(".") in line) == 1, finding


def test_a_fix_is_split_from_what_was_found() -> None:
    assert split_fix("cluster 'c' has no KMS key (encryptionConfig). Fix: encryptionConfig {provider: {}}.") == (
        "cluster 'c' has no KMS key (encryptionConfig).", "encryptionConfig {provider: {}}")
    assert split_fix("no fix named here") == ("no fix named here", None)


def test_every_surface_renders_the_same_document(run_preview: RunPreview, tmp_path: Path) -> None:
    args = ("--program", str(TINY_PROGRAM), "--stack", "untainted", "--today", SHIPPED_DAY)
    as_json = run_preview(*args, "--json", out=True)
    doc = as_json.json()  # validated, with the resources.json it wrote
    assert as_json.returncode == doc["exitCode"] == 1 and doc["verdict"] == "FAIL"
    assert as_json.out_dir is not None
    assert json.loads((as_json.out_dir / "resources.json").read_text(encoding="utf-8")) == doc
    assert (as_json.out_dir / "summary.md").read_text(encoding="utf-8") == summary_md.render(doc)
    text = run_preview(*args)
    lines = text.stdout.splitlines()
    assert lines[-1] == summary_md.verdict_sentence(doc)
    stream = io.StringIO()
    render.print_summary(stream, doc, None)
    assert text.stdout == stream.getvalue()
    # make gate's row: the same verdict and counts, read from the same document.
    gate_out = tmp_path / "gate"
    status = ci_gate.main(["--program", str(TINY_PROGRAM), "--stack", "untainted", "--phase", "preview",
                           "--today", SHIPPED_DAY, "--out", str(gate_out)], stdout=io.StringIO(),
                          stderr=io.StringIO())
    assert status == 1
    gate_doc = json.loads((gate_out / "untainted" / "preview" / "resources.json").read_text(encoding="utf-8"))
    c = gate_doc["counts"]
    assert c == doc["counts"]
    row = ci_gate.overview_markdown([ci_gate.StackResult("untainted", "preview", 1, c["mandatory"], c["advisory"],
                                                         summary="", pending=c["pending"],
                                                         verdict_word=gate_doc["verdict"])], None)
    assert f"| untainted | preview | FAIL | {c['mandatory']} | {c['advisory']} | {c['pending']} |" in row
    # The pull-request comment's gate part is summary.md.
    assert ci_comment.gate_part([doc]) == summary_md.render(doc)


def test_the_stack_policy_config_is_applied_without_the_flag_and_named(tmp_path: Path) -> None:
    program = tmp_path / "tiny"
    shutil.copytree(TINY_PROGRAM, program)
    config = program / "policies" / "config" / "untainted.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"ebs-encrypted-unseen": {"enforcementLevel": "mandatory"}}), encoding="utf-8")
    base = ("--program", str(program), "--stack", "untainted", "--today", SHIPPED_DAY, "--json")
    own = run_preview_process(*base)
    assert own.json()["policyConfig"] == {"path": "policies/config/untainted.json", "how": "stack default"}
    named = run_preview_process(*base, "--policy-config", str(config))
    none = run_preview_process(*base, "--policy-config", "none")
    assert none.json()["policyConfig"] == {"path": None, "how": "none: --policy-config none"}

    def levels(run: Any) -> list[tuple[str, str]]:
        return sorted((f["policy"], f["level"]) for f in run.json()["findings"])

    # One verdict per stack however it is run: the stack's own config, named or not; without it, another.
    assert levels(own) == levels(named) and ("ebs-encrypted-unseen", "mandatory") in levels(own)
    assert ("ebs-encrypted-unseen", "advisory") in levels(none)
    assert own.json()["counts"]["mandatory"] == none.json()["counts"]["mandatory"] + 1
    text = run_preview_process(*base[:-1])
    assert "policy config policies/config/untainted.json" in text.stdout.splitlines()[0]


def test_a_rejected_stack_file_is_a_refused_document_with_its_keys(tmp_path: Path) -> None:
    stack = tmp_path / "Pulumi.dev.yaml"
    stack.write_text("config:\n  gpu-platform:cluster:\n    kubernetesVersion: '1.35'\n", encoding="utf-8")
    run = run_preview_process("--config-file", str(stack), "--today", SHIPPED_DAY, "--json", out_dir=tmp_path / "o")
    assert run.returncode == 2
    doc = run.json()
    assert (doc["verdict"], doc["exitCode"]) == ("REFUSED", 2)
    assert doc["problems"] and all(p["key"] for p in doc["problems"]), doc["problems"]
    assert "cluster.name" in {p["key"] for p in doc["problems"]}
    assert "error: " in run.stderr  # the message a person reads, as before
    summary = (tmp_path / "o" / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# ⛔ REFUSED") and "`cluster.name`" in summary


def test_the_problems_of_a_rejection_keep_their_keys() -> None:
    message = ("Pulumi.dev.yaml: the stack configuration has 2 problems; nothing was created:\n"
               "  - Pulumi.dev.yaml: cluster.name = (missing): required key is missing\n"
               "  - Pulumi.dev.yaml: gpuNodeGroups[0].driverVersion = \"1\": not a driver version")
    assert [p["key"] for p in problems_of(message)] == ["cluster.name", "gpuNodeGroups[0].driverVersion"]
    assert problems_of("--program x: not a folder") == [{"key": None, "message": "--program x: not a folder"}]


def test_a_release_name_or_namespace_not_known_yet_is_never_the_engines_placeholder() -> None:
    """Issue 55: the engine's unknown placeholder was printed as a Helm release's name and namespace."""
    from tools.engine.records import UNKNOWN, RecordedResource  # noqa: PLC0415
    from tools.preview.model import Recording  # noqa: PLC0415
    from tools.preview.views import NOT_KNOWN, views  # noqa: PLC0415

    release = RecordedResource(
        urn="urn:pulumi:dev::p::kubernetes:helm.sh/v3:Release::operator", type="kubernetes:helm.sh/v3:Release",
        name="operator", parent=None, custom=True, properties=None,
        inputs={"chart": "gpu-operator", "version": "v26.7.0", "namespace": UNKNOWN},
        outputs={"name": UNKNOWN})
    [row] = views(Recording(project="p", stack="dev", resources=(release,), stack_outputs={}, logs=()))["helmReleases"]
    assert (row["name"], row["namespace"]) == (NOT_KNOWN, NOT_KNOWN)
    assert UNKNOWN not in json.dumps(row["name"]) + json.dumps(row["namespace"])

"""`tools.matrix check` says what it assumed and what it could not check (issue 46 item 5).

Before: `check --os bottlerocket --driver 595 --instance-type g6.xlarge` said COMPATIBLE with `"assumptions": []`
(it judged v1.68.0 over every Kubernetes variant, and no variant loads R595 on a g6.xlarge), and Ubuntu without
`--operator` said COMPATIBLE after 2 checks.
"""

from __future__ import annotations

import json

from tools.matrix.cli import main

TODAY = ["--today", "2026-12-05"]
BOTTLEROCKET = ["check", "--os", "bottlerocket", "--driver", "595", "--instance-type", "g6.xlarge", *TODAY]
UBUNTU = ["check", "--os", "ubuntu-24.04", "--driver", "580.173.02", *TODAY]
FULL = [*UBUNTU, "--operator", "v26.7.0", "--kubernetes", "1.35", "--instance-type", "g6.xlarge"]


def test_bottlerocket_without_kubernetes_is_refused_as_with_it_and_says_what_it_assumed(capsys):
    assert main(BOTTLEROCKET) == 1
    out = capsys.readouterr().out
    assert out.startswith("verdict: INCOMPATIBLE\n")
    assert ("  assumes: no --image-version: judged as v1.68.0, the newest bottlerocket release recorded as of "
            "2026-12-05\n") in out
    assert "  assumes: no --kubernetes: the image's driver judged over every Kubernetes version" in out
    assert ("  not checked: kubernetes-version-lifecycle (no --kubernetes: EKS support of the control plane)\n"
            in out)
    assert ("[mandatory] baked-driver-branch: bottlerocket v1.68.0 loads driver branch R580 on g6.xlarge, not R595; "
            "declare driver 580 for this pool") in out
    assert main([*BOTTLEROCKET, "--kubernetes", "1.35"]) == 1  # the same answer with the version given
    assert "[mandatory] baked-driver-branch" in capsys.readouterr().out


def test_bottlerocket_json_names_the_assumptions_and_the_checks_not_run(capsys):
    assert main([*BOTTLEROCKET, "--json"]) == 1
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "incompatible"
    assert [a.split(":")[0] for a in document["assumptions"]] == ["no --image-version", "no --kubernetes"]
    assert [n["check"] for n in document["not_checked"]] == ["kubernetes-version-lifecycle", "node-image-published"]


def test_ubuntu_without_operator_kubernetes_or_instance_is_compatible_only_for_the_checks_run(capsys):
    assert main(UBUNTU) == 0
    out = capsys.readouterr().out
    assert out.startswith("verdict: COMPATIBLE for the checks run: driver-image-published, driver-branch-eol; "
                          "4 not run (below)\n")
    assert ("  not checked: driver-branch-supported (no --operator: whether a GPU Operator release installs this "
            "driver on the OS)\n") in out
    assert "  not checked: gpu-architecture-supported (no --instance-type: whether the driver runs the GPU)\n" in out
    assert main([*UBUNTU, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert document["verdict"] == "compatible-for-checks-run"
    assert document["verdict_text"].startswith("COMPATIBLE for the checks run: ")
    assert {n["check"] for n in document["not_checked"]} == {
        "kubernetes-version-lifecycle", "node-image-published", "driver-branch-supported", "gpu-architecture-supported"}


def test_compatible_only_when_every_check_ran(capsys):
    assert main(FULL) == 0
    assert capsys.readouterr().out.startswith("verdict: COMPATIBLE\n")
    assert main([*FULL, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert (document["verdict"], document["assumptions"], document["not_checked"]) == ("compatible", [], [])


def test_an_operator_without_kubernetes_names_its_range_as_not_checked(capsys):
    assert main([*UBUNTU, "--operator", "v26.7.0", "--instance-type", "g6.xlarge", "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    assert [n["check"] for n in document["not_checked"]] == [
        "kubernetes-version-lifecycle", "node-image-published", "operator-kubernetes-supported"]


# --- a serving image as --cuda runs the serving-image checks, or names them as not run (issue 52) ---------------

TGI = "ghcr.io/huggingface/text-generation-inference:3.3.7"


def test_a_serving_image_on_an_instance_type_it_was_not_built_for_is_incompatible(capsys):
    # Before: COMPATIBLE, the serving-image checks never ran. vLLM's CUDA 13 build compiles no sm_70 (CMakeLists.txt).
    args = [*UBUNTU, "--operator", "v26.7.0", "--kubernetes", "1.35", "--instance-type", "p3.2xlarge",
            "--cuda", "vllm/vllm-openai:v0.16.0-cu130"]
    assert main(args) == 1
    out = capsys.readouterr().out
    assert ("[mandatory] serving-image-architecture: vllm/vllm-openai:v0.16.0-cu130 is compiled for 7.5 8.0 8.9 9.0 "
            "10.0 12.0 only") in out
    assert "  not checked: serving-model-fits (the model, its size and the server's flags" in out


def test_a_serving_image_that_runs_is_judged_and_what_is_not_judged_is_named(capsys):
    assert main([*FULL, "--cuda", TGI]) == 0
    out = capsys.readouterr().out
    assert f"[ok] serving-image-architecture: {TGI} is compiled for 7.5 8.0 8.6 8.9 9.0+PTX" in out
    assert out.splitlines()[0].endswith("serving-image-architecture; 1 not run (below)")
    assert "not checked: serving-model-fits" in out


def test_a_serving_image_without_an_instance_type_names_the_architecture_check_as_not_run(capsys):
    assert main([*UBUNTU, "--operator", "v26.7.0", "--cuda", TGI, "--json"]) == 0
    document = json.loads(capsys.readouterr().out)
    checks = [n["check"] for n in document["not_checked"]]
    assert "serving-image-architecture" in checks and "serving-model-fits" in checks

"""The preview's work, counted, not timed (issue 44): a regression of the kind that made the preview 1.7 times slower
(every module the run imported parsed again for each importer: 461 source files parsed in one prod preview at
3fe0abf) fails here on any machine, however fast or loaded.

Each preview runs in a fresh process under `tests/tools/preview_work.py`, which counts from outside the code it
counts: source files parsed, the analyzer calls and bytes sent to the pack, the pack's own calls and validations,
and the resources registered. Each bound below is written with its reason; a change that moves one on purpose
changes the bound in the same commit, with the new reason. Times stay in `bench/` (`make bench`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from pulumi_policy import ResourceValidationPolicy, StackValidationPolicy

from bench.stacks import write_stack
from policies.gpu_guard.base import all_policies
from tools.preview.program_modules import OWN_PROGRAM_SDK_MODULES

REPO = Path(__file__).resolve().parents[2]
HARNESS = REPO / "tests" / "tools" / "preview_work.py"
PROD_POLICY_CONFIG = REPO / "policies" / "config" / "prod.json"
FOREIGN = REPO / "tests" / "corpus" / "programs" / "examples-aws-py-eks"  # vpc.py registers at import
TODAY = "2026-11-30"

RESOURCE_POLICIES = sum(isinstance(p, ResourceValidationPolicy) for p in all_policies())
STACK_POLICIES = sum(isinstance(p, StackValidationPolicy) for p in all_policies())

# The engine's own sequence for one preview (pkg/resource/deploy/step_generator.go: one Analyze per resource before
# its step, Remediate beside it, AnalyzeStack after all steps; tools/engine/gate.py), plus the stack resource itself.
ONCE = ("Configure", "ConfigureStack", "GetAnalyzerInfo", "Handshake")


def _work(tmp_path: Path, *args: str) -> dict[str, Any]:
    out = tmp_path / "counts.json"
    proc = subprocess.run([sys.executable, str(HARNESS), str(out), "--", *args, "--today", TODAY, "--json"],
                          cwd=REPO, capture_output=True, text=True, check=False, timeout=600)
    assert out.is_file(), proc.stderr[-3000:]
    counts: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert counts["exit"] in (0, None), proc.stderr[-3000:]
    return counts


def _assert_engine_sequence(counts: dict[str, Any]) -> None:
    calls, pack, resources = counts["calls"], counts["pack"], counts["resources"]
    # One Analyze per registered resource and the stack: never twice (a gate that re-sends), never batched.
    assert calls["Analyze"] == resources + 1, calls
    assert calls["Remediate"] <= calls["Analyze"], calls
    # A first preview judges the stack twice: the preview's AnalyzeStack and the one the first `up` leaves.
    assert calls["AnalyzeStack"] <= 2, calls
    assert all(calls[name] == 1 for name in ONCE), calls
    # The pack saw what was sent, and ran each policy once per call: at most every resource policy per Analyze and
    # every stack policy per AnalyzeStack; the stack's resources are built once per AnalyzeStack, not per policy.
    assert pack["Analyze"] == calls["Analyze"] and pack["AnalyzeStack"] == calls["AnalyzeStack"], pack
    assert pack["resource validations"] <= RESOURCE_POLICIES * calls["Analyze"], pack
    assert pack["stack validations"] <= STACK_POLICIES * calls["AnalyzeStack"], pack
    assert pack["stack resource builds"] <= calls["AnalyzeStack"], pack


@pytest.mark.parametrize(("stack", "resource_bound"), [("dev", 125), ("prod", 140)])
def test_a_shipped_stack_parses_nothing_and_sends_each_resource_once(tmp_path: Path, stack: str,
                                                                    resource_bound: int) -> None:
    args = ["--stack", stack]
    if stack == "prod":
        args += ["--policy-config", str(PROD_POLICY_CONFIG)]
    counts = _work(tmp_path, *args)
    # Our own program's modules are known not to register at import (program_modules.OWN_PROGRAM_REGISTERING):
    # the only file read is __main__.py, whose imports are preloaded before the forked `up` run.
    assert counts["parsed"] <= 1, counts
    # dev registers 108 resources and prod 123 (2026-12-05); more means a component grew: raise it knowingly.
    assert counts["resources"] <= resource_bound, counts
    _assert_engine_sequence(counts)
    # About 5.5 KiB per request (the resource, its provider with the kubeconfig, both stack calls) at 2026-12-05.
    assert counts["bytes"] <= 7 * 1024 * counts["calls"]["Analyze"], counts


def test_a_hundred_services_grow_linearly(tmp_path: Path) -> None:
    stack = write_stack(tmp_path, REPO / "Pulumi.prod.yaml", services=100, pools=10)
    counts = _work(tmp_path, "--stack", stack.stem.removeprefix("Pulumi."), "--config-file", str(stack),
                   "--policy-config", str(PROD_POLICY_CONFIG))
    assert counts["parsed"] <= 1, counts
    # 1,062 resources at 100 services and 10 pools (2026-12-05): about 9 per service (Deployment, Service,
    # ScaledObject, PDB, Ingress every second, a model volume every fourth...).
    assert counts["resources"] <= 1100, counts
    _assert_engine_sequence(counts)
    # 17.1 MB at 2026-12-05: each Kubernetes object's request carries its provider (the kubeconfig), as the engine's
    # does (analyzer_plugin.go marshals the provider resource with every Analyze), and two AnalyzeStack calls.
    assert counts["bytes"] <= 18 * 1024 * counts["calls"]["Analyze"], counts


def test_a_foreign_program_parses_each_of_its_files_once_in_an_up(tmp_path: Path) -> None:
    """`--phase up` runs the program twice in one process (the CLI's preview, then the update): each run drops
    and re-imports `vpc.py`, which registers at import, and neither run reads a file twice."""
    counts = _work(tmp_path, "--program", str(FOREIGN), "--phase", "up")
    files = len(list(FOREIGN.glob("*.py")))
    assert counts["resources"] > 0, counts
    # every program file at most once, plus __main__.py's import lines read for the preload
    assert counts["parsed"] <= files + 1, counts


def test_the_sdk_preload_is_what_the_program_loads(tmp_path: Path) -> None:
    """A first preview imports `OWN_PROGRAM_SDK_MODULES` before it forks its `up` run, so both runs share them.
    Runs that do not preload (`--phase update`) say what the program loads: a package missing from the list is
    imported twice (parent and child, about 1 s of CPU for pulumi_aws.ec2 alone), one too many is loaded for nothing.
    """
    loaded: set[str] = set()
    for stack in ("dev", "prod"):
        loaded |= set(_work(tmp_path, "--stack", stack, "--phase", "update")["sdk_modules"])
    named = {".".join(name.split(".")[:i]) for name in OWN_PROGRAM_SDK_MODULES for i in range(2, name.count(".") + 2)}
    named |= {name for name in OWN_PROGRAM_SDK_MODULES if "." not in name}
    assert loaded == named

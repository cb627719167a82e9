"""The class check of issue 39: no suggestion of `tools.matrix check` is one the same tool would refuse.

`Matrix.check` (what `python -m tools.matrix check` prints) runs over a grid of OS x driver x GPU Operator release x
Kubernetes version x instance family x image release (x Bottlerocket branch pin), as pure calls. Every suggestion
(`nearest`) of every finding is then applied to the inputs it names (a driver, a Kubernetes version, an operator
release, an image release) and checked again: the finding's own rule must not refuse it, no rule that did not refuse
before may refuse it, and a driver suggestion must be none of the four kinds the audit found:

- a full driver version on a baked image (Bottlerocket, AL2023: the image decides, a pool declares a branch);
- an end-of-life branch;
- a pairing no source confirms (a branch the instance's GPU or family is not shown to run: R610 on g6f);
- an OS/driver image that does not exist (an nvcr.io/nvidia/driver tag NVIDIA never published for the OS);
- (issue 46) a driver the pool's GPU Operator release does not list for the OS (R570 under v26.7.0).

Issue 46 adds the CUDA runtime to the grid (`cuda-driver-compatible` suggested 570.211.01 and 610.57.04 for a
v26.7.0 pool: one refused by the operator's list, one past end of life), the judging day to the end-of-life test
(the branch's date, not only NVIDIA's "ended" list), and re-checks each suggestion with the CUDA runtime kept.

Issue 55 adds Karpenter pools (a fractional g6f pool was offered 580.173.02, which no operator-installed driver
makes run) and requires a driver suggestion to leave no rule about the pool's driver refusing it (a Bottlerocket g7
pool was told to "declare driver 580", which the g7's GPU refuses): a suggestion is a fix, not a move between two
refusals.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from datetime import date
from typing import Any

from policies.gpu_guard.matrix import OS_NAMES, Finding, Matrix
from policies.gpu_guard.versions import parse_driver_version

TODAY = date(2026, 12, 2)
UBUNTU = ("ubuntu-22.04", "ubuntu-24.04", "ubuntu-26.04")
UBUNTU_DRIVERS = ("535.309.01", "580.173.02", "590.48.01", "595.91.07", "610.57.04", "580")
BAKED_DRIVERS = ("535", "570", "580", "595", "610")
OPERATORS = ("v26.3.3", "v26.7.0")
KUBERNETES = ("1.30", "1.33", "1.36", "1.37")  # past extended, extended, standard, not on EKS
CUDA = (None, "12.8", "13.0", "nvidia/cuda:13.0.0-runtime-ubuntu24.04")  # none; MVC on R535; forward compat
INSTANCES = (None, "g5.xlarge", "g6f.xlarge", "g6e.xlarge", "g7.2xlarge", "p3.2xlarge")
# The pool kinds where the answer differs: a fractional GPU in a Karpenter NodePool (issue 55); None elsewhere.
POOL_KINDS: dict[str | None, tuple[str | None, ...]] = {"g6f.xlarge": (None, "karpenter-nodepool")}
# The rules about the pool's driver: a driver suggestion must leave none of them refusing.
DRIVER_FIX_RULES = frozenset({"gpu-driver-kind", "baked-driver-branch", "gpu-architecture-supported"})
IMAGES: dict[str, tuple[tuple[str | None, str | None], ...]] = {
    "al2023": ((None, None), ("v20260714", None), ("v20260917", None)),
    "bottlerocket": ((None, None), ("v1.62.0", None), ("v1.66.0", None), ("v1.68.0", None), ("v1.68.0", "lts"),
                     ("v1.68.0", "pb")),
}
DRIVER_RULES = frozenset({"driver-image-published", "gpu-architecture-supported", "baked-driver-branch",
                          "driver-branch-eol", "driver-branch-known", "driver-branch-supported",
                          "cuda-driver-compatible"})
_OPERATOR = re.compile(r"^v\d+\.\d+\.\d+$")


def grid() -> Iterator[dict[str, Any]]:
    for os_name, kubernetes, instance in itertools.product(OS_NAMES, KUBERNETES, INSTANCES):
        # the CUDA runtime on the supported Kubernetes version only (the suggestions it adds do not depend on it)
        runtimes = CUDA if kubernetes == "1.36" else (None,)
        for kind in POOL_KINDS.get(instance, (None,)):
            extra = {"pool_kind": kind} if kind is not None else {}
            if os_name in UBUNTU:
                for driver, operator, cuda in itertools.product(UBUNTU_DRIVERS, OPERATORS, runtimes):
                    yield {"os": os_name, "driver": driver, "operator": operator, "kubernetes": kubernetes,
                           "instance_type": instance, "cuda": cuda, **extra}
            else:
                for driver, (image, pin), cuda in itertools.product(BAKED_DRIVERS, IMAGES[os_name], runtimes):
                    yield {"os": os_name, "driver": driver, "operator": None, "kubernetes": kubernetes,
                           "instance_type": instance, "image_version": image, "branch_pin": pin, "cuda": cuda,
                           **extra}


_SEEN: dict[tuple[tuple[str, Any], ...], list[Finding]] = {}


def run(matrix: Matrix, inputs: dict[str, Any]) -> list[Finding]:
    """`Matrix.check` on the inputs (one call per distinct input: suggestions repeat across the grid)."""
    key = tuple(sorted(inputs.items()))
    if key not in _SEEN:
        _SEEN[key] = matrix.check(today=TODAY, **inputs)
    return _SEEN[key]


def applied(inputs: dict[str, Any], finding: Finding, candidate: str) -> tuple[str, dict[str, Any]] | None:
    """(the input the suggestion replaces, the inputs with it applied); None where it names no input of check."""
    rule = finding.rule
    if rule == "kubernetes-version-lifecycle":
        return "kubernetes", {**inputs, "kubernetes": candidate}
    if rule == "node-image-published":
        if " (" in candidate:
            return None  # "ubuntu-24.04 (1.35)": another OS, a different pool
        # an image release to pin, or the nodes' Kubernetes version (the kubelet; the control plane stays)
        key = "image_version" if candidate.startswith("v") else "kubelet"
        return key, {**inputs, key: candidate}
    if rule == "baked-driver-branch" and candidate.startswith("v"):
        return "image_version", {**inputs, "image_version": candidate}  # a release that loads the declared branch
    if rule in ("operator-kubernetes-supported", "operator-known") or (
        rule == "driver-branch-supported" and _OPERATOR.match(candidate)
    ):
        return "operator", {**inputs, "operator": candidate}
    if rule == "driver-branch-supported" and candidate in OS_NAMES:
        return None  # another OS: a different pool, not a value of this one
    if rule in DRIVER_RULES:
        return "driver", {**inputs, "driver": candidate}
    return None


def forbidden(matrix: Matrix, inputs: dict[str, Any], candidate: str) -> str | None:
    """Which of the four forbidden kinds a driver suggestion is, or None."""
    parsed = parse_driver_version(candidate)
    if inputs["os"] not in UBUNTU and not parsed.is_branch_only:
        return f"a full driver version {candidate} on a baked {inputs['os']} image"
    row = matrix.branch(parsed.branch)
    if row is None or row.is_end_of_life(TODAY):  # the branch's date at the judging day, or NVIDIA's list
        return f"R{parsed.branch}, an end-of-life (or unknown) branch"
    inst = matrix.instance_type(inputs["instance_type"]) if inputs["instance_type"] else None
    if inst is not None and not matrix.drives(inst, candidate, TODAY):
        return f"{candidate} on {inst.name}, a pairing no source confirms"
    if inputs["os"] in UBUNTU and candidate not in matrix.published_versions(inputs["os"]):
        return f"{candidate}: no nvcr.io/nvidia/driver image for {inputs['os']}"
    op = matrix.operator(inputs["operator"]) if inputs["operator"] else None
    if op is not None and inputs["os"] in op.branches and not parsed.is_branch_only and candidate not in op.drivers:
        return f"{candidate}: not in GPU Operator {op.version}'s driver list"
    return None


def test_every_suggestion_passes_check_itself(matrix: Matrix):
    started = time.perf_counter()
    cases = suggestions = 0
    problems: list[str] = []
    for inputs in grid():
        cases += 1
        findings = run(matrix, inputs)
        refused = {f.rule for f in findings if f.level == "mandatory"}
        for finding in findings:
            if finding.level == "ok":
                continue
            for candidate in finding.nearest:
                change = applied(inputs, finding, candidate)
                if change is None:
                    continue
                key, after = change
                suggestions += 1
                if key == "driver" and (kind := forbidden(matrix, inputs, candidate)) is not None:
                    problems.append(f"{inputs}: {finding.rule} suggests {kind}")
                    continue
                again = {f.rule for f in run(matrix, after) if f.level == "mandatory"}
                if key == "driver" and again & DRIVER_FIX_RULES:
                    problems.append(f"{inputs}: {finding.rule} suggests driver {candidate}, which leaves "
                                    f"{sorted(again & DRIVER_FIX_RULES)} refusing the pool's driver")
                    continue
                if finding.rule in again or again - refused:
                    problems.append(f"{inputs}: {finding.rule} suggests {key}={candidate}, which check refuses "
                                    f"({sorted(again - refused | (again & {finding.rule}))})")
    elapsed = time.perf_counter() - started
    print(f"suggestion grid: {cases} configurations, {suggestions} suggestions applied, {elapsed:.1f} s")
    assert cases > 3000 and suggestions > 1500  # the grid is what it says
    assert problems == [], "\n".join(problems[:40]) + f"\n({len(problems)} in all)"

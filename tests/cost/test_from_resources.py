"""The pack prices what it sees: the estimate from the resources the program records (what `cost-budget` reads) equals
the estimate from the stack file's typed config (what `gpu-platform cost` prints), line by line, for dev and prod."""

from __future__ import annotations

import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from policies.gpu_guard.pricing.estimate import FIGURES, estimate
from policies.gpu_guard.pricing.from_resources import stack_from_resources
from policies.gpu_guard.pricing.table import load
from tools.cost.__main__ import estimate_file
from tools.engine.view import default_provider
from tools.preview.command import run_program
from tools.preview.stack_files import load_project, load_stack_config

REPO = Path(__file__).resolve().parents[2]
JUDGED = datetime.date(2026, 12, 7)


def seen_by_the_pack(stack: str) -> list[Any]:
    """The program's recorded resources as a stack policy receives them, with the default aws provider the engine
    registers (tools/engine/view.py `default_provider`: the stack's `aws:` config as its inputs)."""
    project = load_project(REPO)
    config = load_stack_config(REPO / f"Pulumi.{stack}.yaml", project.name, REPO)
    recording = run_program(project, stack, config, "preview", JUDGED)
    views = {r.urn: SimpleNamespace(resource_type=r.type, name=r.name, urn=r.urn, props=r.inputs,
                                    property_dependencies={}) for r in recording.resources}
    for r in recording.resources:
        views[r.urn].property_dependencies = {k: [views[u] for u in urns if u in views]
                                              for k, urns in r.property_dependencies.items()}
    provider = default_provider("aws", "7.12.0", stack, project.name, config.values)
    return [*views.values(), SimpleNamespace(resource_type=provider.type, name=provider.name, urn=provider.urn,
                                             props=provider.inputs, property_dependencies={})]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_pack_and_the_command_price_the_same_lines(stack: str) -> None:
    read = stack_from_resources(stack, seen_by_the_pack(stack))
    assert read.stack is not None and read.unread == []
    from_resources = estimate(read.stack, load(), JUDGED)
    from_config = estimate_file(REPO / f"Pulumi.{stack}.yaml", stack, JUDGED, None)

    def figures(est: Any) -> dict[str, tuple[float | None, ...]]:
        return {line.ident: tuple(line.figure(f).usd for f in FIGURES) for line in est.counted()}

    assert figures(from_resources) == figures(from_config)
    for figure in FIGURES:
        assert from_resources.total(figure) == from_config.total(figure)


def _res(rtype: str, name: str, **props: Any) -> SimpleNamespace:
    return SimpleNamespace(resource_type=rtype, name=name, urn=f"urn::{rtype}::{name}", props=props,
                           property_dependencies={})


def test_the_control_plane_is_read_from_the_clusters_own_resource() -> None:
    # pulumi-eks's component registers with no props of its own; the aws:eks/cluster:Cluster child holds the version.
    resources = [_res("eks:index:Cluster", "c"),
                 _res("aws:eks/cluster:Cluster", "c-eksCluster", version="1.31",
                      upgradePolicy={"supportType": "EXTENDED"}, enabledClusterLogTypes=["api"]),
                 _res("pulumi:providers:aws", "default", region="us-west-2")]
    read = stack_from_resources("s", resources)
    assert read.stack is not None and read.stack.kubernetes_version == "1.31"
    line = next(x for x in estimate(read.stack, load(), JUDGED).lines if x.kind == "control_plane")
    assert line.expected.usd == 438.0 and "past standard support" in line.item
    unknown = stack_from_resources("s", resources[:1] + resources[2:])
    assert unknown.stack is not None
    line = next(x for x in estimate(unknown.stack, load(), JUDGED).lines if x.kind == "control_plane")
    assert line.expected.usd == 73.0 and "the Kubernetes version is not known here" in line.item

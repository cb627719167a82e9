"""The estimate as data, as a table, and the pull-request change as the difference of two estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from policies.gpu_guard.pricing.estimate import FIGURES, estimate
from policies.gpu_guard.pricing.render import cost_section, diff, diff_summary, table
from policies.gpu_guard.pricing.shape import NodeGroup
from tests.cost.helpers import JUDGED, karpenter, service, stack, system
from tests.cost.helpers import table as prices
from tools.cost.__main__ import main

BIG = NodeGroup("l40s", "gpu-platform:gpuNodeGroups[1]", ("g6e.12xlarge",), "on-demand", 1, 2, 100)


def test_the_change_is_the_difference_of_the_two_estimates() -> None:
    base_stack = stack(karpenter_pools=(karpenter(),), services=(service(min_replicas=1),))
    head_stack = stack(node_groups=(system(), BIG), karpenter_pools=(karpenter(max_gpus=8),),
                       services=(service(min_replicas=1),))
    base, head = estimate(base_stack, prices(), JUDGED), estimate(head_stack, prices(), JUDGED)
    change = diff(base, head)
    for figure in FIGURES:
        assert change[figure] == pytest.approx(head.total(figure) - base.total(figure))
    assert change["expected"] == 7300.0 + 10.0  # the l40s node (730 h x 10.0) and its 100 GiB root volume x 0.1
    # 2 l40s nodes and their volumes; the pool's 4 more GPUs at the dearest GPU-hour (1.0) and 4 more root volumes
    assert change["ceiling"] == pytest.approx(14600.0 + 20.0 + 4 * 730 * 1.0 + 4 * 100 * 0.1)
    assert change["added"] == ["l40s (GPU node group, on-demand, g6e.12xlarge)", "l40s root volumes"]
    assert diff_summary(base, head) == ("t: +$7,310/month expected (+2 line(s): l40s (GPU node group, on-demand, "
                                        "g6e.12xlarge), l40s root volumes; ceiling +$17,580)")
    back = diff(head, base)
    assert back["expected"] == -change["expected"] and back["removed"] == change["added"]


def test_a_change_over_an_unpriced_line_is_not_estimated() -> None:
    base = estimate(stack(), prices(), JUDGED)
    head = estimate(stack(node_groups=(system(), BIG)), prices(instances={"m7i.large": 0.1}), JUDGED)
    assert diff(base, head)["expected"] is None
    assert "expected change not estimated" in diff_summary(base, head)


def test_the_section_is_json_and_a_missing_figure_is_null_never_0() -> None:
    est = estimate(stack(node_groups=(system(), BIG)), prices(instances={"m7i.large": 0.1}), JUDGED)
    section = json.loads(json.dumps(cost_section(est)))
    assert section["schema"] == "gpu-platform/cost/v1" and section["judged"] == "2026-12-07"
    line = next(x for x in section["lines"] if x["kind"] == "gpu_node_group")
    assert line["expected"]["usd"] is None and line["expected"]["how"].startswith("not estimated: no recorded")
    assert section["totals"]["expected"]["complete"] is False
    assert section["totals"]["expected"]["not_estimated"] == ["l40s (GPU node group, on-demand, g6e.12xlarge)"]
    text = table(est)
    assert "**at least $" in text and "| not estimated |" in text and "$0.00 | $0.00 | $0.00 | l40s" not in text


def test_the_cost_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--stack", "dev", "--today", "2026-12-07", "--json"]) == 0
    section = json.loads(capsys.readouterr().out)
    assert section["stack"] == "dev" and section["region"] == "us-west-2"
    assert section["totals"]["expected"]["complete"] is True
    bad = tmp_path / "Pulumi.x.yaml"
    bad.write_text("config:\n  aws:region: us-west-2\n  gpu-platform:cluster: {name: x}\n")
    assert main(["--stack", "x", "--file", str(bad), "--today", "2026-12-07"]) == 2
    assert "kubernetesVersion" in capsys.readouterr().err
    assert main(["--stack", "dev", "--today", "2026-12-07", "--base", "Pulumi.dev.yaml"]) == 0
    assert "dev: +$0/month expected (ceiling +$0)" in capsys.readouterr().out


def test_the_preview_cost_section_never_fails_the_preview() -> None:
    from tools.cost.section import markdown, preview_cost, terminal_line  # noqa: PLC0415

    values = {"aws:region": "us-west-2",
              **{f"gpu-platform:{k}": json.dumps(v) for k, v in _dev_values().items()}}
    section = preview_cost(values, "dev", JUDGED, {"cost-budget": {"spotDiscount": 0.5}})
    assert section["spot_discount"] == 0.5 and section["totals"]["expected"]["complete"]
    text = markdown(section)
    assert "## Cost estimate" in text and f"${section['totals']['at_rest']['usd']:,.2f}" in text
    totals = section["totals"]
    assert terminal_line(section) == (
        f"Cost a month (us-west-2 prices): at rest ${totals['at_rest']['usd']:,.2f}, expected "
        f"${totals['expected']['usd']:,.2f}, ceiling ${totals['ceiling']['usd']:,.2f} (every line: gpu-platform cost "
        "--stack dev)")
    assert preview_cost({}, "x", JUDGED)["error"].startswith("aws:region is not set")
    assert terminal_line(preview_cost({}, "x", JUDGED)) == "Cost: not estimated: aws:region is not set in the stack " \
        "file: nothing to price"
    broken = preview_cost({"aws:region": "us-west-2", "gpu-platform:cluster": "{}"}, "x", JUDGED)
    assert "invalid" in broken["error"] and "Not estimated: the stack config is invalid" in markdown(broken)


def _dev_values() -> dict[str, object]:
    import yaml  # noqa: PLC0415

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "Pulumi.dev.yaml").read_text())["config"]
    return {k.removeprefix("gpu-platform:"): v for k, v in config.items() if k.startswith("gpu-platform:")}

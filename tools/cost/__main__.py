"""`gpu-platform cost`: what a stack bills a month, from its stack file, at the pack's price table.

    gpu-platform cost --stack prod                      # a table: at rest, expected, ceiling; every line's arithmetic
    gpu-platform cost --stack prod --json               # the same as data (policies/gpu_guard/pricing/render.py)
    gpu-platform cost --stack prod --base old/Pulumi.prod.yaml   # + the change against another version of the file
    gpu-platform cost refresh [--from-file F]   # re-read Karpenter's generated price table (tools/cost/refresh.py)

The judged day (extended-support fee, the 180-day price age) is --today, else GPU_PLATFORM_TODAY, else today. The
Spot discount is --spot-discount, else `spotDiscount` of `cost-budget` in policies/config/<stack>.json, else none
(Spot priced at on-demand, an upper bound). Exit 0; 2 on a bad stack file or argument, with one message naming it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

from policies.gpu_guard.calendar import judging_day, program_day
from policies.gpu_guard.pricing.estimate import Estimate, estimate
from policies.gpu_guard.pricing.render import cost_section, diff, diff_summary, table
from policies.gpu_guard.pricing.table import PRICES_PATH, load
from tools.cost.from_config import StackFileError, load_stack, stack_from_config

REPO = Path(__file__).resolve().parents[2]
BUDGET_POLICY = "cost-budget"


def policy_config(stack: str, root: Path = REPO) -> dict[str, Any]:
    """`cost-budget`'s entry of policies/config/<stack>.json ({} when the file or the entry is absent)."""
    path = root / "policies" / "config" / f"{stack}.json"
    if not path.exists():
        return {}
    try:
        entry = json.loads(path.read_text()).get(BUDGET_POLICY) or {}
    except (OSError, ValueError, AttributeError) as error:
        raise StackFileError(f"{path}: not a JSON object of policy configs ({error})") from error
    return entry if isinstance(entry, dict) else {}


def estimate_file(path: Path, stack: str, judged: date, spot_discount: float | None) -> Estimate:
    config, region = load_stack(path)
    return estimate(stack_from_config(stack, config, region), load(), judged, spot_discount=spot_discount)


def _refresh(argv: Sequence[str]) -> int:
    from tools.cost import refresh  # noqa: PLC0415

    parser = argparse.ArgumentParser(prog="gpu-platform cost refresh", description=refresh.__doc__.split("\n\n")[0])
    parser.add_argument("--from-file", type=Path, help="a copy of Karpenter's zz_generated.pricing_aws.go")
    args = parser.parse_args(argv)
    try:
        text = args.from_file.read_text() if args.from_file else refresh.fetch_karpenter()
        table_, changed = refresh.refresh(text)
    except (refresh.RefreshError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    print(f"{PRICES_PATH}: {table_.region} batch from {refresh.KARPENTER_SOURCE} (generated "
          f"{table_.generated.isoformat()}): {len(table_.prices)} prices, {changed} changed")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["refresh"]:
        return _refresh(args_list[1:])
    parser = argparse.ArgumentParser(prog="gpu-platform cost", description=__doc__.split("\n\n")[0])
    parser.add_argument("--stack", required=True, help="the stack: Pulumi.<stack>.yaml")
    parser.add_argument("--file", type=Path, help="the stack file (default: Pulumi.<stack>.yaml in the repository)")
    parser.add_argument("--base", type=Path, help="another version of the stack file: print the change against it")
    parser.add_argument("--json", action="store_true", help="the estimate as JSON")
    parser.add_argument("--today", help="the judged day, YYYY-MM-DD (default: GPU_PLATFORM_TODAY, else today)")
    parser.add_argument("--spot-discount", type=float, help="Spot = on-demand x (1 - this); an assumption")
    args = parser.parse_args(args_list)
    try:
        judged = judging_day(args.today, what="--today") if args.today else program_day()
        discount = args.spot_discount
        if discount is None:
            configured = policy_config(args.stack).get("spotDiscount")
            discount = float(configured) if configured is not None else None
        head = estimate_file(args.file or REPO / f"Pulumi.{args.stack}.yaml", args.stack, judged, discount)
        base = estimate_file(args.base, args.stack, judged, discount) if args.base else None
    except (StackFileError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        document = cost_section(head)
        if base is not None:
            document["change"] = {**diff(base, head), "summary": diff_summary(base, head)}
        print(json.dumps(document, indent=2))
    else:
        print(table(head))
        if base is not None:
            print(f"\nChange against {args.base}: {diff_summary(base, head)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

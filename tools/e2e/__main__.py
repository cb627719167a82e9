"""`python -m tools.e2e`: the end-to-end run in a real AWS account, and its sweeper.

    python -m tools.e2e check
    python -m tools.e2e new-id [--suffix ID]
    python -m tools.e2e cleanup --run-id e2e-YYYYmmddHHMM-ID
    python -m tools.e2e run [--out out/e2e] [--run-suffix ID] [--limit-minutes 240]
    python -m tools.e2e sweep --run-id e2e-YYYYmmddHHMM-ID [--protect snap-...]
    python -m tools.e2e sweep --older-than-hours 12 [--protect snap-...]
    python -m tools.e2e estimate
    python -m tools.e2e budget-alert --max-usd 30 --email ops@example.com --out DIR

`run` reads MAX_USD, E2E_REGION (or AWS_REGION), E2E_INGRESS_HOST, E2E_CERTIFICATE_ARN and optionally
E2E_SNAPSHOT_ID, E2E_ENDPOINT_CIDRS, E2E_KARPENTER_FROM_VERSION from the environment (docs/e2e.md). Exit 0: every
step passed and the sweep left nothing; 1: a step failed (the report names it); 2: something the run needs is
missing, and nothing was created.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def _session(region: str | None) -> Any:
    import boto3  # noqa: PLC0415  # the estimate needs no AWS SDK
    from botocore.config import Config  # noqa: PLC0415

    session = boto3.Session(region_name=region)
    original = session.client
    config = Config(retries={"mode": "standard", "max_attempts": 10})
    session.client = lambda service, **kw: original(service, config=config, **kw)
    return session


def _run(args: argparse.Namespace) -> int:
    from tools.e2e.driver import Driver  # noqa: PLC0415

    deps = _deps()
    driver = Driver(os.environ, deps, repo=REPO, out=Path(args.out), run_suffix=args.run_suffix,
                    limit_minutes=args.limit_minutes, run_id=os.environ.get("E2E_RUN_ID") or None)
    report = driver.run()
    print(report.markdown())
    print(f"report: {driver.out / 'report.json'}")
    if report.rows and report.rows[0].step == "preflight" and report.rows[0].result == "failed":
        return 2
    return 0 if report.ok else 1


def _deps() -> Any:
    from pulumi import automation  # noqa: PLC0415

    from tools.e2e.cap.preflight import _run as run_command  # noqa: PLC0415
    from tools.e2e.driver import Deps  # noqa: PLC0415
    from tools.e2e.inference import infer  # noqa: PLC0415
    from tools.e2e.kube import Kube  # noqa: PLC0415

    return Deps(automation=automation, session=_session, kube=Kube, infer=infer, which=shutil.which, run=run_command)


def _account_guard(session: Any) -> str | None:
    """Why cleanup or the sweep must not run with these credentials: E2E_AWS_ACCOUNT_ID unset or malformed, or the
    credentials belong to another account (STS GetCallerIdentity). None when they may."""
    from tools.e2e.cap.preflight import account_problem, expected_account  # noqa: PLC0415

    expected, error = expected_account(os.environ)
    if expected is None:
        return error
    try:
        actual = str(session.client("sts").get_caller_identity()["Account"])
    except Exception as failure:  # noqa: BLE001  # no identity, no deletion
        return f"STS GetCallerIdentity failed ({failure}): the account cannot be checked, so nothing is deleted"
    return account_problem(expected, actual)


def _cleanup(args: argparse.Namespace) -> int:
    from tools.e2e.driver import cleanup_run  # noqa: PLC0415

    region = args.region or os.environ.get("E2E_REGION") or os.environ.get("AWS_REGION")
    run_id = args.run_id or os.environ.get("E2E_RUN_ID")
    if not region or not run_id:
        print("cleanup needs --run-id (or E2E_RUN_ID) and a region (--region, E2E_REGION or AWS_REGION)",
              file=sys.stderr)
        return 2
    protect = frozenset(p for p in [*args.protect, os.environ.get("E2E_SNAPSHOT_ID", "")] if p)
    refused = _account_guard(_session(region))
    if refused is not None:
        print(f"cleanup refused: {refused}", file=sys.stderr)
        return 2
    report = cleanup_run(run_id, _deps(), repo=REPO, region=region, protect=protect)
    report.write(Path(args.out) / run_id / "cleanup")
    print(report.markdown())
    return 0 if all(r.result != "failed" for r in report.rows) else 1


def _new_id(args: argparse.Namespace) -> int:
    from tools.e2e.runid import new_run_id  # noqa: PLC0415

    print(new_run_id(datetime.now(UTC), args.suffix))
    return 0


def _check(_: argparse.Namespace) -> int:
    """What `run` needs and lacks; creates nothing (STS GetCallerIdentity is the only AWS call)."""
    from tools.e2e.cap import preflight  # noqa: PLC0415

    try:
        import boto3  # noqa: F401, PLC0415
    except ImportError:
        print("make e2e needs boto3 (requirements-e2e.txt; `make e2e` installs it). Nothing was created.",
              file=sys.stderr)
        return 2
    needs = preflight.check(os.environ, session_factory=_session)
    if not needs.ok:
        print(needs.message(), file=sys.stderr)
        return 2
    print("make e2e has what it needs: " + ", ".join(f"{k} {v}" for k, v in sorted(needs.found.items())))
    return 0


# The longest a run's resources can be in use: the run's job (e2e.yml timeout-minutes 280) and then its cleanup
# job (120), rounded up. The scheduled sweep is in another concurrency group, so its TTL must not be shorter.
MIN_TTL_HOURS = 7


def _sweep(args: argparse.Namespace) -> int:
    from tools.e2e.runid import Selector  # noqa: PLC0415
    from tools.e2e.sweep.sweeper import Sweeper  # noqa: PLC0415

    region = args.region or os.environ.get("E2E_REGION") or os.environ.get("AWS_REGION")
    if not region:
        print("sweep needs a region: --region, E2E_REGION or AWS_REGION", file=sys.stderr)
        return 2
    protect = frozenset(p for p in [*args.protect, os.environ.get("E2E_SNAPSHOT_ID", "")] if p)
    if not args.run_id and args.older_than_hours < MIN_TTL_HOURS:
        print(f"sweep --older-than-hours {args.older_than_hours:g}: a run may live {MIN_TTL_HOURS} h (its job, "
              f"timeout-minutes 280, then its cleanup job, 120), and the TTL sweep runs beside it; a shorter TTL "
              f"would sweep a live run. Use at least {MIN_TTL_HOURS} (E2E_TTL_HOURS), or --run-id for one run.",
              file=sys.stderr)
        return 2
    if args.run_id:
        selector = Selector(run_id=args.run_id, protect=protect)
    else:
        selector = Selector.older_than(timedelta(hours=args.older_than_hours), datetime.now(UTC), protect)
    session = _session(region)
    refused = _account_guard(session)
    if refused is not None:
        print(f"sweep refused: {refused}", file=sys.stderr)
        return 2
    result = Sweeper(session.client, selector).sweep()
    print(json.dumps(result.as_dict(), indent=2))
    return 0 if result.ok else 1


def _estimate(_: argparse.Namespace) -> int:
    from tools.e2e import driver, model_snapshot  # noqa: PLC0415
    from tools.e2e.cap import cost  # noqa: PLC0415
    from tools.e2e.runid import new_run_id  # noqa: PLC0415
    from tools.e2e.stack import Inputs, e2e_config, load_dev, shape  # noqa: PLC0415

    now = datetime.now(UTC)
    inputs = Inputs(run_id=new_run_id(now, "estimate"), region=cost.PRICES_REGION, snapshot_id="snap-00000000000000000",
                    snapshot_gib=model_snapshot.SNAPSHOT_GIB, ingress_host="e2e.example.com",
                    certificate_arn="arn:aws:acm:us-west-2:111122223333:certificate/e2e",
                    endpoint_cidrs=("192.0.2.1/32",),
                    deployer_arn="arn:aws:iam::111122223333:role/e2e")
    config = e2e_config(load_dev(REPO), inputs, now)
    est = cost.estimate(shape(config, own_snapshot_gib=model_snapshot.SNAPSHOT_GIB),
                        limit_hours=driver.LIMIT_MINUTES / 60, expected_hours=driver.EXPECTED_MINUTES / 60)
    print(est.table())
    if est.missing:
        print(f"\n`run` would refuse this configuration: {len(est.missing)} line(s) not estimated (above).")
        return 1
    return 0


def _budget_alert(args: argparse.Namespace) -> int:
    from tools.e2e.cap import alert  # noqa: PLC0415

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        documents = {"budget.json": alert.budget(args.max_usd), "notifications.json": alert.notifications(args.email)}
    except ValueError as error:
        print(f"budget-alert: {error}", file=sys.stderr)
        return 2
    for name, document in documents.items():
        (out / name).write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"aws budgets create-budget --account-id \"$E2E_AWS_ACCOUNT_ID\" --budget file://{out / 'budget.json'} "
          f"--notifications-with-subscribers file://{out / 'notifications.json'}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.e2e", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("check", help="say what `run` needs and lacks; creates nothing")
    new_id = commands.add_parser("new-id", help="print a new run id (the workflow hands it to run and cleanup)")
    new_id.add_argument("--suffix", default=None)
    cleanup = commands.add_parser("cleanup", help="pre-destroy, destroy, stack rm and sweep one run (CI's always())")
    cleanup.add_argument("--run-id")
    cleanup.add_argument("--region")
    cleanup.add_argument("--out", default="out/e2e")
    cleanup.add_argument("--protect", action="append", default=[])
    run = commands.add_parser("run", help="one end-to-end run in the account of the current credentials")
    run.add_argument("--out", default="out/e2e")
    run.add_argument("--run-suffix", default=None, help="the run id's suffix (CI: the GitHub run id and attempt)")
    run.add_argument("--limit-minutes", type=int, default=None)
    sweep = commands.add_parser("sweep", help="delete what one run, or every run older than a TTL, left behind")
    which = sweep.add_mutually_exclusive_group(required=True)
    which.add_argument("--run-id")
    which.add_argument("--older-than-hours", type=float)
    sweep.add_argument("--region")
    sweep.add_argument("--protect", action="append", default=[], help="an id no sweep deletes (repeatable)")
    commands.add_parser("estimate", help="the cost estimate of a run of dev's config, without an account")
    alert = commands.add_parser("budget-alert", help="write the AWS Budgets alert documents at MAX_USD (bootstrap)")
    alert.add_argument("--max-usd", type=float, required=True)
    alert.add_argument("--email", required=True)
    alert.add_argument("--out", default="out/e2e/budget")
    args = parser.parse_args(argv)
    if args.command == "run":
        from tools.e2e.driver import LIMIT_MINUTES  # noqa: PLC0415

        args.limit_minutes = args.limit_minutes or int(os.environ.get("E2E_LIMIT_MINUTES") or LIMIT_MINUTES)
        return _run(args)
    if args.command == "sweep":
        return _sweep(args)
    if args.command == "check":
        return _check(args)
    if args.command == "new-id":
        return _new_id(args)
    if args.command == "cleanup":
        return _cleanup(args)
    if args.command == "budget-alert":
        return _budget_alert(args)
    return _estimate(args)


if __name__ == "__main__":
    try:
        sys.exit(main())
    except subprocess.TimeoutExpired as error:
        print(f"timed out: {error}", file=sys.stderr)
        sys.exit(1)

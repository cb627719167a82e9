"""The e2e run, its cleanup and the sweep act in one account only: E2E_AWS_ACCOUNT_ID, compared with the caller's
account (STS GetCallerIdentity). Credentials of any other account are refused before anything is created or
deleted (issue 54: preflight read the caller's account and never compared it)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from tests.e2e.fakes import base_env, completed
from tools.e2e import __main__ as cli
from tools.e2e.cap import preflight

MOTO_ACCOUNT = "123456789012"  # moto's caller account


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.setenv(name, "testing")
    with mock_aws():
        yield lambda region: boto3.Session(region_name=region or "us-west-2")


def _check(aws: Any, **env: str) -> preflight.Needs:
    return preflight.check(base_env(**env), which=lambda tool: f"/usr/bin/{tool}", run=completed,
                           session_factory=aws)


def test_the_credentials_of_the_expected_account_pass(aws: Any) -> None:
    needs = _check(aws)
    assert needs.ok, needs.message()
    assert needs.found["account"] == MOTO_ACCOUNT


def test_credentials_of_another_account_are_refused(aws: Any) -> None:
    needs = _check(aws, E2E_AWS_ACCOUNT_ID="210987654321")
    assert not needs.ok
    wrong = f"account {MOTO_ACCOUNT}, not E2E_AWS_ACCOUNT_ID 210987654321"
    assert any(wrong in m for m in needs.missing), needs.missing


@pytest.mark.parametrize("value", ["", "12345", "arn:aws:iam::123456789012:root", "1234567890123"])
def test_a_missing_or_malformed_account_id_is_a_need(aws: Any, value: str) -> None:
    env = dict(base_env())
    env["E2E_AWS_ACCOUNT_ID"] = value
    needs = preflight.check(env, which=lambda tool: f"/usr/bin/{tool}", run=completed, session_factory=aws)
    assert any(m.startswith("E2E_AWS_ACCOUNT_ID: the 12-digit id") for m in needs.missing), needs.missing


class _Sts:
    def __init__(self, account: str) -> None:
        self.account = account

    def get_caller_identity(self) -> dict[str, str]:
        return {"Account": self.account, "Arn": f"arn:aws:sts::{self.account}:assumed-role/r/s"}


class _Session:
    def __init__(self, account: str) -> None:
        self.account = account

    def client(self, service: str, **_: Any) -> Any:
        assert service == "sts"
        return _Sts(self.account)


@pytest.mark.parametrize(("expected", "actual", "refused"), [
    ("123456789012", "123456789012", None),
    ("123456789012", "210987654321", "the AWS credentials are for account 210987654321"),
    ("", "123456789012", "E2E_AWS_ACCOUNT_ID: the 12-digit id"),
])
def test_cleanup_and_the_sweep_refuse_another_account(monkeypatch: pytest.MonkeyPatch, expected: str, actual: str,
                                                      refused: str | None) -> None:
    monkeypatch.setenv("E2E_AWS_ACCOUNT_ID", expected)
    answer = cli._account_guard(_Session(actual))
    if refused is None:
        assert answer is None
    else:
        assert answer is not None and answer.startswith(refused), answer


def test_the_sweep_command_deletes_nothing_in_another_account(monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("E2E_AWS_ACCOUNT_ID", "123456789012")
    monkeypatch.setattr(cli, "_session", lambda region: _Session("210987654321"))

    def no_sweeper(*_: Any, **__: Any) -> Any:
        raise AssertionError("the sweeper ran")
    monkeypatch.setattr("tools.e2e.sweep.sweeper.Sweeper", no_sweeper)
    assert cli.main(["sweep", "--run-id", "e2e-202612050600-test1", "--region", "us-west-2"]) == 2
    assert "sweep refused: the AWS credentials are for account 210987654321" in capsys.readouterr().err


def test_the_budget_alert_is_a_monthly_cost_budget_at_max_usd_with_no_action(
        tmp_path: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """What bounds the bill besides the estimate and the TTL sweep (issue 54): an alert, never a deny action, which
    would also stop the cleanup."""
    assert cli.main(["budget-alert", "--max-usd", "30", "--email", "ops@example.com", "--out", str(tmp_path)]) == 0
    import json  # noqa: PLC0415

    budget = json.loads((tmp_path / "budget.json").read_text())
    assert budget == {"BudgetName": "gpu-platform-e2e", "BudgetType": "COST", "TimeUnit": "MONTHLY",
                      "BudgetLimit": {"Amount": "30.00", "Unit": "USD"}}
    notes = json.loads((tmp_path / "notifications.json").read_text())
    assert {n["Notification"]["NotificationType"] for n in notes} == {"ACTUAL", "FORECASTED"}
    assert all(n["Notification"]["Threshold"] == 100 for n in notes)
    assert "aws budgets create-budget" in capsys.readouterr().out
    from tools.e2e import iam_policy  # noqa: PLC0415

    for policy in (iam_policy.role_policy(), iam_policy.cleanup_role_policy()):
        assert "budgets:" not in json.dumps(policy)


@pytest.mark.parametrize("args", [["--max-usd", "0", "--email", "a@b.c"], ["--max-usd", "5", "--email", "nobody"]])
def test_a_bad_budget_alert_input_is_refused(tmp_path: Any, args: list[str]) -> None:
    assert cli.main(["budget-alert", *args, "--out", str(tmp_path)]) == 2
    assert list(tmp_path.iterdir()) == []

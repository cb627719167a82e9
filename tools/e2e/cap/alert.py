"""The AWS Budgets alert the e2e bootstrap creates at MAX_USD (docs/e2e.md): what bounds the bill besides the
run's estimate and the TTL sweep.

It is an alert, not a stop. Budgets' data lags: "AWS Budgets information is updated up to three times a day", about
8 to 12 hours apart (https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-managing-costs.html), so a
run can be hours past MAX_USD before the mail comes. No budget *action* is attached: an action that applies a deny
policy to the e2e roles (https://docs.aws.amazon.com/cost-management/latest/userguide/budgets-controls.html) would
also stop the cleanup and the sweep, which are what end the bill.

Documents for `aws budgets create-budget --account-id <id> --budget file://budget.json
--notifications-with-subscribers file://notifications.json`
(https://docs.aws.amazon.com/cli/latest/reference/budgets/create-budget.html).
"""

from __future__ import annotations

from typing import Any

BUDGET_NAME = "gpu-platform-e2e"


def budget(max_usd: float) -> dict[str, Any]:
    """A monthly cost budget of the e2e account at MAX_USD (every service: the run's resources are all it holds)."""
    if max_usd <= 0:
        raise ValueError(f"MAX_USD must be positive, got {max_usd}")
    return {"BudgetName": BUDGET_NAME, "BudgetType": "COST", "TimeUnit": "MONTHLY",
            "BudgetLimit": {"Amount": f"{max_usd:.2f}", "Unit": "USD"}}


def notifications(email: str) -> list[dict[str, Any]]:
    """A mail when the month's actual cost passes the limit, and when AWS forecasts it will."""
    if "@" not in email:
        raise ValueError(f"not an email address: {email!r}")
    subscriber = [{"SubscriptionType": "EMAIL", "Address": email}]
    return [{"Notification": {"NotificationType": kind, "ComparisonOperator": "GREATER_THAN", "Threshold": 100,
                              "ThresholdType": "PERCENTAGE"}, "Subscribers": subscriber}
            for kind in ("ACTUAL", "FORECASTED")]

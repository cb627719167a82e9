"""The EKS upgrade policy's support type, and what it does to a version past standard support.

- `STANDARD`: at the end of standard support EKS upgrades the control plane to the next version on
  its own, so a stack that pins a version past standard support no longer describes its cluster:
  the finding is mandatory.
- `EXTENDED`: the cluster stays on its version until extended support ends, billed at the
  extended-support price: the finding is advisory and names that price.

Sources:
- Upgrade policy (supportType STANDARD | EXTENDED, auto-upgrade at the end of standard support):
  https://docs.aws.amazon.com/eks/latest/userguide/view-upgrade-policy.html
- Prices, USD per cluster per hour: the pack's price table (pricing/prices.yaml, `eks_standard_hour` and
  `eks_extended_hour`, https://aws.amazon.com/eks/pricing/, read 2026-11-30), the one the cost estimate uses.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from .inventory import get
from .matrix import Finding
from .pricing.table import load as load_prices

SUPPORT_TYPES = ("STANDARD", "EXTENDED")
# The same in every region the table prices (https://aws.amazon.com/eks/pricing/ states one price): us-east-1's.
_PRICE_REGION = "us-east-1"


def _price(key: str) -> str:
    price = load_prices().service(_PRICE_REGION, key)
    if price is None:
        raise RuntimeError(f"policies/gpu_guard/pricing/prices.yaml has no {key} for {_PRICE_REGION}")
    return f"USD {price.usd:.2f}"


STANDARD_SUPPORT_PRICE_PER_HOUR = _price("eks_standard_hour")
EXTENDED_SUPPORT_PRICE_PER_HOUR = _price("eks_extended_hour")
# What a cluster gets when its upgrade policy leaves the support type out.
# Source: https://docs.aws.amazon.com/eks/latest/APIReference/API_UpgradePolicyRequest.html (default EXTENDED)
DEFAULT_SUPPORT_TYPE = "EXTENDED"


def support_type_of(props: Any) -> str:
    """`upgradePolicy.supportType` of an `aws:eks/cluster:Cluster` or `eks:index:Cluster`, upper-cased."""
    value = get(props, "upgradePolicy", "supportType")
    return str(value).upper() if value else DEFAULT_SUPPORT_TYPE


def with_support_type(findings: Iterable[Finding], support_type: str) -> list[Finding]:
    """The lifecycle findings as the support type makes them: past standard support is mandatory under
    STANDARD (EKS auto-upgrades the control plane) and advisory, with the price, under EXTENDED."""
    out: list[Finding] = []
    for original in findings:
        finding = original
        if finding.level == "advisory" and finding.rule == "kubernetes-version-lifecycle":
            if support_type.upper() == "STANDARD":
                finding = replace(finding, level="mandatory", message=(
                    f"{finding.message} The upgrade policy is STANDARD, so EKS upgrades this control plane to "
                    "the next version on its own at the end of standard support; upgrade it yourself, or set "
                    "supportType extended to stay (at the extended-support price)."))
            else:
                finding = replace(finding, message=(
                    f"{finding.message} The upgrade policy is EXTENDED: the control plane costs "
                    f"{EXTENDED_SUPPORT_PRICE_PER_HOUR} per hour in extended support instead of "
                    f"{STANDARD_SUPPORT_PRICE_PER_HOUR}."))
        out.append(finding)
    return out

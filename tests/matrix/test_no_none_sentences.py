"""Where no version qualifies, the message says so and what to do, never "Upgrade to none ..." or "choose one of
none ..." (issue 46 item 5)."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import load_matrix, pick

MATRIX = load_matrix()
TODAY = date(2026, 12, 5)
NONE_FITS = ("no EKS version in standard support takes this pool as it is (its node image or GPU Operator release "
             "lists none of them); change the node OS, image release or operator release first, then the Kubernetes "
             "version.")


def test_pick_names_the_choices_or_says_what_is_true() -> None:
    assert pick(("1.36", "1.35"), "Upgrade to", "No version fits") == "Upgrade to 1.36, 1.35."
    assert pick((), "Upgrade to", "No version fits") == "No version fits."


@pytest.mark.parametrize(("kubernetes", "lead"), [
    ("1.33", "left standard support on"),  # extended support: "Upgrade to ..."
    ("1.30", "extended support ended"),  # past extended support: "Use ..."
    ("1.37", "is not an Amazon EKS version yet"),  # not on EKS: "choose one of ..."
])
def test_a_kubernetes_version_nothing_fits_says_so(kubernetes: str, lead: str) -> None:
    (finding,) = MATRIX.eks_lifecycle(kubernetes, TODAY, fits=lambda version: False)
    assert finding.level != "ok" and lead in finding.message
    assert finding.nearest == ()
    assert finding.message.endswith(NONE_FITS) or finding.message.endswith("N" + NONE_FITS[1:])
    assert " none in " not in finding.message and "one of none" not in finding.message


def test_a_kubernetes_version_with_choices_names_them() -> None:
    (finding,) = MATRIX.eks_lifecycle("1.33", TODAY, fits=lambda version: version == "1.35")
    assert finding.message.endswith(" Upgrade to 1.35.")
    assert finding.nearest == ("1.35",)


def test_an_unpublished_driver_with_no_choice_says_why() -> None:
    # the driver image finding with nothing to offer: only past-end-of-life drivers on the judging day
    (finding,) = MATRIX.driver_image("535.15.04", "ubuntu-22.04", operator="v26.7.0", today=date(2040, 1, 1))
    assert finding.level == "mandatory" and finding.nearest == ()
    assert finding.message.endswith(
        "; no published driver for ubuntu22.04 is one this pool can take (in support, in the operator release's "
        "list); change the operator release or the node OS.")

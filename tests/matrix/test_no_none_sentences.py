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


def test_an_operator_range_is_cut_to_the_versions_eks_offers() -> None:
    """Issue 46: v26.7.0's range read 1.33-1.37 where EKS offers no 1.37 (matrix.yaml eks_versions end at 1.36;
    1.37 is in eks_pending)."""
    assert MATRIX.eks_span(("1.33", "1.37")) == ("1.33", "1.36")
    assert MATRIX.eks_span(("1.37", "1.38")) is None
    (finding,) = MATRIX.operator_kubernetes("v26.7.0", "1.32", "ubuntu-24.04")
    assert finding.message.startswith(
        "GPU Operator v26.7.0 supports Kubernetes 1.33-1.36 on ubuntu-24.04 (NVIDIA lists 1.33-1.37; the rest is not "
        "an Amazon EKS version), not 1.32; use Kubernetes 1.33-1.36 or an operator release that supports 1.32: v26.3.3")
    assert "1.37" not in finding.message.replace("NVIDIA lists 1.33-1.37", "")


def test_an_operator_range_with_no_release_for_the_version_says_so() -> None:
    (finding,) = MATRIX.operator_kubernetes("v26.7.0", "1.20", "ubuntu-24.04")
    assert finding.nearest == ()
    assert finding.message.endswith(
        "not 1.20; no GPU Operator release in the matrix supports 1.20 on ubuntu-24.04; use Kubernetes 1.33-1.36.")

"""What a CUDA check judges a baked pool's driver label as (`_matrix_common.judged_driver`), at a pinned day."""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import load_matrix
from policies.gpu_guard.rules._matrix_common import judged_driver

DAY = date(2026, 11, 29)
MATRIX = load_matrix()


@pytest.mark.parametrize(
    ("driver", "os", "image_version", "kubernetes", "types", "release", "note"),
    [
        # Confirmed row (bottlerocket.dev 1.68.0 table): the release the image ships, with the source.
        ("580", "bottlerocket", "bottlerocket@v1.68.0", "1.35", ["g6.xlarge", "g4dn.xlarge"], "580.178.04",
         " (judged as 580.178.04, what bottlerocket v1.68.0 ships; source: "
         "https://bottlerocket.dev/en/os/1.68.x/version-information/gpu-drivers/1.68.0/)"),
        # Unconfirmed row (1.66.0's table was not read): the branch's first release, saying why.
        ("580", "bottlerocket", "v1.66.0", "1.35", ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: bottlerocket v1.66.0 is pinned but its driver table "
         "is not confirmed)"),
        # No pinned release.
        ("580", "bottlerocket", None, "1.35", [], "580.65.06",
         " (judged as 580.65.06, the branch's first release: the pool pins no image release)"),
        ("580", "bottlerocket", "latest", "1.35", [], "580.65.06",
         " (judged as 580.65.06, the branch's first release: the pool pins no image release)"),
        # 1.37 nodes of 1.68.0 carry two drivers; ghostdog activates lts (580.178.04) for a g6's L4 (issue 26).
        ("580", "bottlerocket", "v1.68.0", "1.37", ["g6.xlarge"], "580.178.04",
         " (judged as 580.178.04, what bottlerocket v1.68.0 ships; source: "
         "https://bottlerocket.dev/en/os/1.68.x/version-information/gpu-drivers/1.68.0/)"),
        # A 1.66.0 node's choice is still not documented: the weakest release of the branch.
        ("580", "bottlerocket", "v1.66.0", "1.37", ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: bottlerocket v1.66.0 is pinned but its driver table "
         "is not confirmed)"),
        # The label names another branch than the release ships.
        ("570", "bottlerocket", "v1.68.0", "1.35", [], "570.86.15",
         " (judged as 570.86.15, the branch's first release: bottlerocket v1.68.0 is pinned but it ships "
         "580.178.04, not R570)"),
        # AL2023 v20260917 records bare branches only.
        ("580", "al2023", "al2023@v20260917", "1.35", ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: al2023 v20260917 is pinned but the matrix records "
         "only the branch R580 it ships, not the release)"),
        # A full version is judged as given.
        ("580.173.02", "ubuntu-24.04", None, "1.35", [], "580.173.02", ""),
        # A version that does not parse is handed on as given (the CUDA check's finding names it).
        ("abc", "bottlerocket", "v1.68.0", "1.35", [], "abc", ""),
        # A pin without a known OS is no pin.
        ("580", None, "v1.68.0", "1.35", [], "580.65.06",
         " (judged as 580.65.06, the branch's first release: the pool pins no image release)"),
        # A pinned release, but the pool's Kubernetes version is unknown.
        ("580", "bottlerocket", "v1.68.0", None, ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: the pool's Kubernetes version is unknown)"),
        # A Kubernetes version that does not parse (the matrix raises), one the release carries no driver for,
        # and a GPU the release's row records no driver for: the matrix cannot tell.
        ("580", "bottlerocket", "v1.68.0", "1.x", ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: bottlerocket v1.68.0 is pinned but the matrix "
         "cannot tell which driver it loads)"),
        ("580", "bottlerocket", "v1.68.0", "1.99", ["g6.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: bottlerocket v1.68.0 is pinned but the matrix "
         "cannot tell which driver it loads)"),
        ("580", "al2023", "v20260917", "1.35", ["g6.xlarge", "g7e.xlarge"], "580.65.06",
         " (judged as 580.65.06, the branch's first release: al2023 v20260917 is pinned but the matrix "
         "cannot tell which driver it loads)"),
    ],
)
def test_judged_driver(driver, os, image_version, kubernetes, types, release, note):
    judged = judged_driver(MATRIX, driver, os=os, image_version=image_version, kubernetes=kubernetes,
                           instance_types=types, today=DAY)
    assert (judged.release, judged.note) == (release, note)


def test_finding_text_adds_only_what_the_message_lacks() -> None:
    from policies.gpu_guard.matrix.findings import Finding  # noqa: PLC0415
    from policies.gpu_guard.rules._matrix_common import finding_text  # noqa: PLC0415

    src = "https://docs.nvidia.com/datacenter/tesla/drivers/releases.json"
    assert finding_text(Finding("mandatory", "r", "  R575 is end of life.  ", src, ("580", "595"))) == (
        f"  R575 is end of life. Nearest valid: 580, 595. (source: {src})")
    assert finding_text(Finding("mandatory", "r", f"R575: see {src}; use 580.", src, ("580",))) == (
        f"R575: see {src}; use 580.")
    assert finding_text(Finding("advisory", "r", "No source.", "", ())) == "No source."

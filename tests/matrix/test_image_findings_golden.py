"""Every finding `Matrix.image_findings` gives a baked-driver pool, word for word (golden/image_findings.yaml).

A grid over what a pool can declare (OS, pinned release in each spelling, Kubernetes version, driver branch,
instance type) on a pinned day, so that a changed release, branch, source or offered choice is a reviewed
change. The facts come from the matrix rows each finding cites. A deliberate change:
`GOLDEN_UPDATE=1 pytest tests/matrix/test_image_findings_golden.py`, then read the diff.
"""

from __future__ import annotations

import itertools
from datetime import date

from policies.gpu_guard.matrix import load_matrix
from tests.matrix.golden import GOLDEN_DIR, golden

GOLDEN = GOLDEN_DIR / "image_findings.yaml"
TODAY = date(2026, 11, 29)
IMAGES = {
    # None: the newest release as of TODAY; a recorded release; a release between recorded steps; an alias.
    "bottlerocket": (None, "v1.37.0", "v1.58.0", "v1.60.0", "v1.68.0", "bottlerocket@v1.68.0"),
    "al2023": (None, "v20251217", "v20260801", "v20260917", "1.35.2-20260917", "al2023@v20260917"),
}
KUBERNETES = ("1.30", "1.35", "1.37")
DRIVERS = ("535", "580", "595")
INSTANCE_TYPES = (None, "g4dn.xlarge", "g7e.2xlarge")


def rendered() -> dict[str, list[str]]:
    matrix = load_matrix()
    out: dict[str, list[str]] = {}
    for os_name, versions in IMAGES.items():
        for version, kubernetes, driver, instance_type in itertools.product(
                versions, KUBERNETES, DRIVERS, INSTANCE_TYPES):
            key = f"{os_name} {version or 'newest'} k8s {kubernetes} R{driver} {instance_type or 'any'}"
            findings = matrix.image_findings(os_name, version, instance_type, kubernetes, driver=driver, today=TODAY)
            out[key] = [f"{f.level} {f.rule}: {f.message} | {f.source} | {', '.join(f.nearest)}" for f in findings]
    return out


def test_image_findings_are_exactly_the_golden_ones() -> None:
    actual = rendered()
    expected = golden(GOLDEN.name, actual)
    assert len(expected) == 2 * 6 * 3 * 3 * 3
    assert actual == expected, f"findings differ from {GOLDEN} (GOLDEN_UPDATE=1 to accept a deliberate change)"

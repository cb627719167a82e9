"""`Matrix.node_image_findings`: is an EKS node image published for an OS, Kubernetes version and arch?

Compared whole over a grid (every OS the label contract knows and one it does not, Kubernetes from before
to after what is published, both architectures), on a pinned day: golden/node_image_findings.yaml.
A deliberate change: `GOLDEN_UPDATE=1 pytest tests/matrix/test_node_image_findings.py`, then read the diff.
"""

from __future__ import annotations

import itertools
from datetime import date

from policies.gpu_guard.matrix import OS_NAMES, load_matrix
from tests.matrix.golden import GOLDEN_DIR, golden

GOLDEN = GOLDEN_DIR / "node_image_findings.yaml"
TODAY = date(2026, 11, 29)
KUBERNETES = ("1.28", "1.30", "1.33", "1.35", "1.36", "1.37")
ARCHES = ("x86_64", "arm64")


def rendered() -> dict[str, list[str]]:
    matrix = load_matrix()
    out: dict[str, list[str]] = {}
    for os_name, kubernetes, arch in itertools.product((*OS_NAMES, "rhel-9"), KUBERNETES, ARCHES):
        findings = matrix.node_image_findings(os_name, kubernetes, arch, today=TODAY)  # type: ignore[arg-type]
        out[f"{os_name} {kubernetes} {arch}"] = [
            f"{f.level} {f.rule}: {f.message} | {f.source} | {', '.join(f.nearest)}" for f in findings]
    return out


def test_node_image_findings_are_exactly_the_golden_ones() -> None:
    actual = rendered()
    expected = golden(GOLDEN.name, actual)
    assert len(expected) == (len(OS_NAMES) + 1) * len(KUBERNETES) * len(ARCHES)
    assert actual == expected, f"findings differ from {GOLDEN} (GOLDEN_UPDATE=1 to accept a deliberate change)"

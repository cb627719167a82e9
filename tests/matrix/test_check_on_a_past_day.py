"""`Matrix.check` judged on a past day passes that day to every query it makes: an unpinned AL2023 pool on
2025-08-01, before the first recorded release (v20251217), is judged by the date-based step of that day (R575),
not by the releases the calendar has reached since. Written from survivors of the mutation run (a `today`
dropped between `check` and a query reads the wall clock instead, which the other tests' recent day hides)."""

from __future__ import annotations

from datetime import date

from policies.gpu_guard.matrix import load_matrix

MATRIX = load_matrix()
PAST = date(2025, 8, 1)
EOL = ("advisory", "driver-branch-eol", "R575 is listed by NVIDIA as end of life: driver 575 gets no more bug or "
       "security fixes. Move to an image release that ships a supported branch: R580, R595, R570.")
ARCH = ("ok", "gpu-architecture-supported", "driver 575 supports L4 (Ada) on g6.xlarge")


def _findings(kubernetes: str | None = None) -> list[tuple[str, str, str]]:
    return [(f.level, f.rule, f.message) for f in MATRIX.check(os="al2023", driver="575", operator=None,
                                                               kubernetes=kubernetes, instance_type="g6.xlarge",
                                                               today=PAST)]


def test_a_pool_with_its_kubernetes_version_is_judged_on_that_day() -> None:
    assert _findings(kubernetes="1.33") == [
        ("ok", "baked-driver-branch", "al2023 NVIDIA images ship R575"),
        EOL,
        ("ok", "kubernetes-version-lifecycle", "EKS 1.33 is in standard support until 2026-07-29"),
        ("ok", "node-image-published",
         "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/nvidia/recommended/image_id is published"),
        ARCH,
    ]


def test_a_pool_without_its_kubernetes_version_is_judged_on_that_day() -> None:
    assert _findings() == [
        ("ok", "baked-driver-branch", "al2023 NVIDIA images ship driver branch R575 (as of 2025-08-01)"),
        EOL,
        ARCH,
    ]

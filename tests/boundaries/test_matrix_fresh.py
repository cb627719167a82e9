"""A Matrix built afresh from matrix.yaml answers as the cached one does.

`load_matrix()` is cached for the life of the process, so most tests query an instance built once,
at import. This builds a new one (`load_matrix_file`) and asks it one question of each index it
keeps (CUDA releases, GPUs, instance families, driver images, unpublished drivers, EKS versions,
kubelet skew), so a mistake in how an instance is put together cannot hide behind the cache.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from policies.gpu_guard.matrix import Matrix, load_matrix, load_matrix_file
from policies.gpu_guard.matrix.loader import MATRIX_PATH

TODAY = date(2026, 11, 29)


def _answers(matrix: Matrix) -> list[Any]:
    return [
        matrix.cuda_min_driver("12.2.2"),
        matrix.cuda_min_driver("12.8"),
        [f.level for f in matrix.cuda_driver("13.0", "535.309.01", forward_compat_image=False,
                                             admitted_branches=None, data_center_gpu=True)],
        [f.level for f in matrix.architecture_support("p6-b200.48xlarge", "570.86.15")],
        matrix.instance_type("g5.12xlarge"),
        matrix.is_gpu_instance("m7i.large"),
        [f.message for f in matrix.driver_image("535.15.04", "ubuntu-22.04", today=TODAY)],
        [f.message for f in matrix.driver_image("580.173.02", "ubuntu-24.04", today=TODAY)],
        [f.level for f in matrix.eks_lifecycle("1.33", TODAY)],
        [f.level for f in matrix.kubelet_skew("1.35", "1.31")],
        [f.level for f in matrix.kubelet_skew("1.35", "1.32")],
        matrix.operators()[:3],
    ]


def test_a_fresh_matrix_answers_as_the_cached_one():
    fresh = load_matrix_file(MATRIX_PATH)
    assert fresh is not load_matrix()
    assert _answers(fresh) == _answers(load_matrix())


def test_the_answers_are_the_ones_the_matrix_states():
    fresh = load_matrix_file(MATRIX_PATH)
    (a, b, cuda13, b200, g5, m7i, unpublished, published, eks133, skew4, skew3, _ops) = _answers(fresh)
    assert (a, b) == ("535.104.05", "570.26")
    assert cuda13 == ["mandatory"]
    assert b200 == ["mandatory"]
    assert g5 is not None and g5.gpus == 4
    assert m7i is False
    assert unpublished and "535.15.04 has no published image" in unpublished[0]
    assert published == ["nvcr.io/nvidia/driver:580.173.02-ubuntu24.04 is published"]
    assert eks133 == ["advisory"]
    assert (skew4, skew3) == (["mandatory"], ["ok"])

"""Every version comparison of the matrix, on its boundary, one below and one above.

Boundaries come from matrix.yaml (each CUDA release's minimum driver, each major's minor-version-
compatibility floor, each GPU's minimum driver / last branch / first CUDA, each operator release's
Kubernetes span, the kubelet skew limit), so a corrected row moves the boundary, not the verdict:
these tests pin the comparison (`>=` vs `>`, `<=` vs `<`). CUDA 11 is covered like 12 and 13.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix import Finding, Matrix, OsName, load_matrix
from policies.gpu_guard.versions import parse_cuda_version, parse_driver_version, parse_kube_minor

MATRIX: Matrix = load_matrix()


def _driver_step(version: str, step: int) -> str:
    """The driver version one step below/above in its last component (`570.26` -> `570.25` / `570.27`)."""
    parts = version.split(".")
    last = int(parts[-1]) + step
    assert last >= 0, f"{version} has no version one below in its last component"
    parts[-1] = f"{last:0{len(parts[-1])}d}"
    return ".".join(parts)


def _cuda(version: str, driver: str, *, forward_compat: bool = False) -> list[Finding]:
    return MATRIX.cuda_driver(version, driver, forward_compat_image=forward_compat, admitted_branches=None,
                              data_center_gpu=True)


def _levels(findings: list[Finding]) -> list[str]:
    return [f.level for f in findings]


def test_driver_step_keeps_the_spelling():
    assert _driver_step("580.65.06", -1) == "580.65.05"
    assert _driver_step("570.26", 1) == "570.27"
    assert parse_driver_version(_driver_step("535.104.05", -1)) < parse_driver_version("535.104.05")


# ---------------------------------------------------------------- kubelet skew

SKEW = MATRIX.data.kubelet_skew[0]


@pytest.mark.parametrize(("kubelet", "level"), [
    ("1.36", "mandatory"),  # one above the control plane
    ("1.35", "ok"),  # on it
    ("1.34", "ok"),  # one below
])
def test_kubelet_may_not_be_newer_than_the_control_plane(kubelet, level):
    assert not SKEW.newer_allowed
    assert _levels(MATRIX.kubelet_skew("1.35", kubelet)) == [level]


def test_kubelet_may_be_at_most_the_skew_limit_older():
    limit = SKEW.max_minors_older
    assert limit == 3  # https://kubernetes.io/releases/version-skew-policy/ (kubelet up to three minors older)
    plane = parse_kube_minor("1.35")
    older = {behind: f"{plane.major}.{plane.minor - behind}" for behind in (limit - 1, limit, limit + 1)}
    assert _levels(MATRIX.kubelet_skew("1.35", older[limit - 1])) == ["ok"]
    assert _levels(MATRIX.kubelet_skew("1.35", older[limit])) == ["ok"]
    (beyond,) = MATRIX.kubelet_skew("1.35", older[limit + 1])
    assert beyond.level == "mandatory"
    assert f"is {limit + 1} minor versions older than the control plane 1.35; at most {limit}" in beyond.message


# ---------------------------------------------------------------- CUDA minimum drivers

CUDA_ROWS = MATRIX.data.cuda_releases


def test_cuda_rows_cover_cuda_11_12_and_13():
    assert {parse_cuda_version(r.cuda).major for r in CUDA_ROWS} >= {11, 12, 13}


@pytest.mark.parametrize("row", CUDA_ROWS, ids=[r.cuda for r in CUDA_ROWS])
def test_cuda_release_runs_natively_from_its_minimum_driver_on(row):
    assert _levels(_cuda(row.cuda, row.min_driver)) == ["ok"]
    assert _levels(_cuda(row.cuda, _driver_step(row.min_driver, 1))) == ["ok"]
    (below,) = _cuda(row.cuda, _driver_step(row.min_driver, -1))
    assert below.level in ("advisory", "mandatory")
    assert f"CUDA {parse_cuda_version(row.cuda).short} " in below.message


# ---------------------------------------------------------------- minor version compatibility floors

def _newest_release(major: int) -> str:
    return max((r.cuda for r in CUDA_ROWS if parse_cuda_version(r.cuda).major == major), key=parse_cuda_version)


MVC_NATIVE = [row for row in MATRIX.data.mvc
              if (b := MATRIX.branch(parse_driver_version(row.floor).branch)) is not None
              and b.max_cuda_major >= row.major]


def test_mvc_floors_cover_cuda_12_and_13():
    assert {row.major for row in MVC_NATIVE} >= {12, 13}


@pytest.mark.parametrize("row", MVC_NATIVE, ids=[f"cuda-{r.major}" for r in MVC_NATIVE])
def test_minor_version_compatibility_starts_at_the_floor(row):
    cuda = _newest_release(row.major)
    assert _levels(_cuda(cuda, row.floor)) == ["advisory"]
    assert _levels(_cuda(cuda, _driver_step(row.floor, 1))) == ["advisory"]
    (below,) = _cuda(cuda, _driver_step(row.floor, -1))
    assert below.level == "mandatory"
    assert "cannot run on driver" in below.message


def test_cuda_11_minor_version_compatibility_starts_at_its_floor():
    row = next(r for r in MATRIX.data.mvc if r.major == 11)
    assert _levels(_cuda(_newest_release(11), row.floor)) == ["advisory"]


def test_cuda_11_minor_version_compatibility_on_a_known_cuda_11_branch():
    r470 = MATRIX.branch(470)
    assert r470 is not None and r470.max_cuda_major == 11
    row = next(r for r in MATRIX.data.mvc if r.major == 11)
    assert parse_driver_version("470.82.01") > parse_driver_version(row.floor)
    assert _levels(_cuda("11.8", "470.82.01")) == ["advisory"]
    assert _levels(_cuda("12.0", "470.82.01")) == ["mandatory"]  # one major above the branch's native CUDA


@pytest.mark.parametrize(("branch", "level"), [("575", "mandatory"), ("580", "ok"), ("590", "ok")])
def test_a_bare_branch_is_judged_by_its_first_release_against_the_cuda_minimum(branch, level):
    minimum = MATRIX.cuda_min_driver("13.0.0")
    assert minimum is not None and parse_driver_version(minimum).branch == 580
    assert MATRIX.weakest_release("580") == minimum  # R580's first release is CUDA 13.0's minimum: on the boundary
    assert _levels(_cuda("13.0.0", branch)) == [level]


# ---------------------------------------------------------------- GPU architecture vs driver

def _instance_of(gpu_model: str) -> str:
    return next(t for t in MATRIX.instance_types() if (i := MATRIX.instance_type(t)) and i.gpu_model == gpu_model)


FLOORED = [g for g in MATRIX.data.gpus if g.min_driver is not None
           and any(f.gpu_model == g.model for f in MATRIX.data.instance_families)]
CAPPED = [g for g in MATRIX.data.gpus if g.max_branch is not None
          and any(f.gpu_model == g.model for f in MATRIX.data.instance_families)]


def test_gpu_driver_bounds_exist():
    assert len(FLOORED) >= 5
    assert [g.model for g in CAPPED] == ["V100", "K80", "M60", "GRID K520"]


@pytest.mark.parametrize("gpu", FLOORED, ids=[g.model for g in FLOORED])
def test_gpu_needs_its_minimum_driver_or_later(gpu):
    instance = _instance_of(gpu.model)
    assert _levels(MATRIX.architecture_support(instance, gpu.min_driver)) == ["ok"]
    assert _levels(MATRIX.architecture_support(instance, _driver_step(gpu.min_driver, 1))) == ["ok"]
    (below,) = MATRIX.architecture_support(instance, _driver_step(gpu.min_driver, -1))
    assert below.level == "mandatory"
    assert f"which needs driver {gpu.min_driver} or later" in below.message


@pytest.mark.parametrize("gpu", FLOORED, ids=[g.model for g in FLOORED])
def test_a_bare_branch_meets_a_gpu_floor_from_the_floors_branch_on(gpu):
    instance = _instance_of(gpu.model)
    floor_branch = parse_driver_version(gpu.min_driver).branch
    assert _levels(MATRIX.architecture_support(instance, str(floor_branch))) == ["ok"]
    assert _levels(MATRIX.architecture_support(instance, str(floor_branch + 1))) == ["ok"]
    assert _levels(MATRIX.architecture_support(instance, str(floor_branch - 1))) == ["mandatory"]


@pytest.mark.parametrize("gpu", CAPPED, ids=[g.model for g in CAPPED])
def test_gpu_is_driven_up_to_its_last_branch(gpu):
    instance = _instance_of(gpu.model)
    last = gpu.max_branch
    assert _levels(MATRIX.architecture_support(instance, f"{last - 1}.10.01")) == ["ok"]
    assert _levels(MATRIX.architecture_support(instance, f"{last}.95.05")) == ["ok"]
    (above,) = MATRIX.architecture_support(instance, f"{last + 1}.10.01")
    assert above.level == "mandatory"
    assert f"the last driver branch supporting {gpu.architecture} is R{last}" in above.message


# ---------------------------------------------------------------- CUDA vs GPU architecture

def _minor_step(cuda: str, step: int) -> str:
    parsed = parse_cuda_version(cuda)
    return f"{parsed.major}.{parsed.minor + step}"


ARCH_FIRSTS = [g for g in MATRIX.data.gpus if parse_cuda_version(g.min_cuda).minor > 0
               and any(f.gpu_model == g.model for f in MATRIX.data.instance_families)]


def test_architecture_firsts_include_ada_and_blackwell():
    assert {"11.8", "12.8"} <= {g.min_cuda for g in ARCH_FIRSTS}


@pytest.mark.parametrize("gpu", ARCH_FIRSTS, ids=[g.model for g in ARCH_FIRSTS])
def test_cuda_knows_an_architecture_from_its_first_release_on(gpu):
    instance = _instance_of(gpu.model)
    assert _levels(MATRIX.cuda_architecture(gpu.min_cuda, instance)) == ["ok"]
    assert _levels(MATRIX.cuda_architecture(_minor_step(gpu.min_cuda, 1), instance)) == ["ok"]
    (below,) = MATRIX.cuda_architecture(_minor_step(gpu.min_cuda, -1), instance)
    assert below.level == "advisory"
    assert f"needs CUDA {gpu.min_cuda}+" in below.message


@pytest.mark.parametrize("gpu", CAPPED, ids=[g.model for g in CAPPED])
def test_cuda_supports_an_architecture_up_to_its_last_major(gpu):
    instance = _instance_of(gpu.model)
    last = gpu.max_cuda_major
    assert last is not None
    assert _levels(MATRIX.cuda_architecture(f"{last}.0", instance)) == ["ok"]
    assert _levels(MATRIX.cuda_architecture(f"{last}.9", instance)) == ["ok"]
    (above,) = MATRIX.cuda_architecture(f"{last + 1}.0", instance)
    assert above.level == "mandatory"
    assert f"the last CUDA for {gpu.model} on {instance} is {last}.x" in above.message


# ---------------------------------------------------------------- GPU Operator vs Kubernetes

def _minor(version: str, step: int) -> str:
    parsed = parse_kube_minor(version)
    return f"{parsed.major}.{parsed.minor + step}"


UBUNTU: tuple[OsName, ...] = ("ubuntu-22.04", "ubuntu-24.04")
SPANS: list[tuple[str, OsName | None, tuple[str, str]]] = [(op.version, None, op.eks) for op in MATRIX.data.operators]
SPANS += [(op.version, os, op.kubernetes[os]) for op in MATRIX.data.operators for os in UBUNTU if os in op.kubernetes]


@pytest.mark.parametrize(("operator", "os", "span"), SPANS, ids=[f"{v}-{os or 'eks'}" for v, os, _ in SPANS])
def test_operator_supports_kubernetes_from_the_first_to_the_last_version_of_its_span(operator, os, span):
    low, high = span
    for inside in (low, _minor(low, 1), _minor(high, -1), high):
        assert _levels(MATRIX.operator_kubernetes(operator, inside, os)) == ["ok"], inside
    for outside in (_minor(low, -1), _minor(high, 1)):
        (finding,) = MATRIX.operator_kubernetes(operator, outside, os)
        assert finding.level == "mandatory", outside
        # the range as EKS offers it, NVIDIA's own beside it where they differ (issue 46)
        offered = MATRIX.eks_span(span)
        if offered == span:
            assert f"supports Kubernetes {low}-{high} on" in finding.message
        elif offered is None:
            assert f"supports Kubernetes {low}-{high} on" in finding.message
            assert "none of them an Amazon EKS version" in finding.message
        else:
            shown = offered[0] if offered[0] == offered[1] else f"{offered[0]}-{offered[1]}"
            assert f"supports Kubernetes {shown} on" in finding.message
            assert f" (NVIDIA lists {low}-{high}; the rest is not an Amazon EKS version)" in finding.message
        assert operator not in finding.nearest

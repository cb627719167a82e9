"""Golden tests for the facts of issue 17 (the matrix after August 2026), each through `tools.matrix check`
and through the pack (the policy over its fixture baseline), judged at a pinned `today`.
"""

from __future__ import annotations

from datetime import date

import pytest

from policies.gpu_guard.matrix import Matrix
from tests.matrix.test_audit_goldens import TODAY, check, pack
from tools.matrix.cli import main

DAY = date(2026, 11, 30)


def al2023_karpenter_pool(alias: str, instance_types: list[str]) -> list[dict[str, object]]:
    return [
        {"resource": "gpu-bottlerocket", "set": ["spec", "amiSelectorTerms", 0, "alias"], "value": alias},
        {"resource": "gpu-spot", "set": ["spec", "template", "metadata", "labels", "gpu-platform.io/os"],
         "value": "al2023"},
        {"resource": "gpu-spot", "delete": ["spec", "template", "metadata", "labels", "gpu-platform.io/driver"]},
        {"resource": "gpu-spot", "set": ["spec", "template", "spec", "requirements", 0, "values"],
         "value": instance_types},
    ]


# --- 1. AL2023 NVIDIA images carry R580 and R595 from v20260917 (amazon-eks-ami PR #2819) -------------------


def g7_al2023(capsys: pytest.CaptureFixture[str], driver: str, release: str) -> tuple[int, str]:
    return check(capsys, "--os", "al2023", "--instance-type", "g7.2xlarge", "--driver", driver, "--operator",
                 "v26.7.0", "--kubernetes", "1.35", "--image-version", release, *TODAY)


def test_g7_on_al2023_before_v20260917_cannot_pass_by_check(capsys):
    code, out = g7_al2023(capsys, "580", "v20260714")
    assert code == 1
    assert "needs driver 595 or later; driver 580 is older" in out
    code, out = g7_al2023(capsys, "595", "v20260714")
    assert code == 1
    assert "[mandatory] baked-driver-branch: al2023 v20260714 ships one driver, 580.159.03, not R595" in out


def test_g7_on_al2023_from_v20260917_passes_with_595_by_check(capsys):
    code, out = g7_al2023(capsys, "595", "v20260917")
    assert code == 0
    assert ("[ok] baked-driver-branch: al2023 v20260917: the RTX PRO 4500 Blackwell Server Edition of g7.2xlarge "
            "is absent from R580's open supported-devices list and present in R595's, so the node loads the R595 "
            "tree; R595 as declared") in out
    assert "source: https://github.com/awslabs/amazon-eks-ami/pull/2819" in out
    code, out = g7_al2023(capsys, "580", "al2023@v20260917")
    assert code == 1
    assert "so the node loads the R595 tree, not R580; declare driver 595 for this pool" in out


@pytest.mark.parametrize(
    ("image_version", "instance_type", "branch"),
    [
        ("v20260714", "g7.2xlarge", 580),
        ("v20260917", "g7.2xlarge", 595),
        ("al2023@v20260917", "g6.xlarge", 580),
        ("1.35.2-20261001", "g7.12xlarge", 595),  # a later release is judged by the v20260917 step
        ("v20260917", "g5.xlarge", 580),  # g4dn/g5/g5g always load the LTS tree
        ("v20260917", None, 580),  # no instance type: the default tree
        (None, "g7.2xlarge", 595),  # unpinned: the newest recorded release as of DAY
    ],
)
def test_driver_branch_for_image(matrix: Matrix, image_version, instance_type, branch):
    assert matrix.driver_branch_for_image("al2023", image_version, instance_type, "1.35", today=DAY) == branch


def test_g7_al2023_pool_before_v20260917_is_rejected_by_the_pack():
    violations = pack("gpu-architecture-supported", al2023_karpenter_pool("al2023@v20260714", ["g7.2xlarge"]))
    assert [level for level, _ in violations] == ["mandatory"]
    assert "may launch g7.2xlarge with driver 580 baked into the al2023 v20260714 image" in violations[0][1]


def test_g7_al2023_pool_from_v20260917_passes_the_pack():
    patch = al2023_karpenter_pool("al2023@v20260917", ["g6.xlarge", "g7.2xlarge"])
    assert pack("gpu-architecture-supported", patch) == ()


# --- 3. GPU Operator v26.7.0 supports Kubernetes up to 1.37 (cloud-native-docs PR #488); EKS 1.37 not yet ---------


def test_v26_7_0_on_1_37_by_check(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "595.91.07", "--operator", "v26.7.0",
                      "--kubernetes", "1.37", *TODAY)
    assert "[ok] operator-kubernetes-supported: GPU Operator v26.7.0 supports Kubernetes 1.37 on ubuntu-24.04" in out
    # The operator no longer blocks 1.37; EKS does not offer it yet, with the source that says so.
    assert code == 1
    assert ("[mandatory] kubernetes-version-lifecycle: Kubernetes 1.37 (released upstream 2026-08-26) is not an "
            "Amazon EKS version yet; choose one of 1.36, 1.35, 1.34.") in out
    assert "source: https://github.com/aws/containers-roadmap/issues/2864" in out


def test_v26_7_0_on_1_37_passes_the_pack():
    patch = [{"resource": "gpu-dev", "set": ["version"], "value": "1.37"}]
    assert pack("gpu-operator-kubernetes-supported", patch) == ()


def test_eks_1_37_is_not_an_eks_version_yet_in_the_pack():
    violations = pack("kubernetes-version-lifecycle", [{"resource": "gpu-dev", "set": ["version"], "value": "1.37"}])
    assert [level for level, _ in violations] == ["advisory"]
    assert "Kubernetes 1.37 (released upstream 2026-08-26) is not an Amazon EKS version yet" in violations[0][1]


# --- 4. Bottlerocket NVIDIA variants per release: 1.29 gone from v1.58.0, 1.37 from v1.68.0 ---------------------


def bottlerocket(capsys: pytest.CaptureFixture[str], kubernetes: str, release: str) -> tuple[int, str]:
    return check(capsys, "--os", "bottlerocket", "--driver", "580", "--operator", "v26.7.0", "--kubernetes",
                 kubernetes, "--image-version", release, "--instance-type", "g6.xlarge", *TODAY)


def test_bottlerocket_1_29_variant_is_published_until_v1_58_0_by_check(capsys):
    _, out = bottlerocket(capsys, "1.29", "v1.54.0")
    assert "[ok] node-image-published: aws-k8s-1.29-nvidia variant is published in bottlerocket v1.54.0" in out
    _, out = bottlerocket(capsys, "1.29", "bottlerocket@v1.58.0")
    assert ("[mandatory] node-image-published: bottlerocket v1.58.0 publishes no aws-k8s-1.29-nvidia variant "
            "(published there: 1.30, 1.31, 1.32, 1.33, 1.34, 1.35); pin a release that does and loads the pool's "
            "driver (v1.54.0") in out
    assert "source: https://github.com/bottlerocket-os/bottlerocket/pull/4797" in out


def test_bottlerocket_1_37_variant_from_v1_68_0_by_check(capsys):
    _, out = bottlerocket(capsys, "1.37", "v1.68.0")
    assert "[ok] node-image-published: aws-k8s-1.37-nvidia variant is published in bottlerocket v1.68.0" in out


def test_bottlerocket_1_37_branch_follows_the_gpu_unless_the_setting_pins_it(matrix: Matrix):
    """Issue 26: ghostdog picks lts unless a GPU needs pb (RTX PRO 4500) or settings.kernel.drivers.nvidia.branch
    pins one (bottlerocket-core-kit PR #1041)."""
    image = matrix.driver_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.37", today=DAY)
    assert image is not None and image.drivers == ("580.178.04", "595.91.07")
    assert matrix.driver_branch_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.37", today=DAY) == 580
    assert matrix.driver_branch_for_image("bottlerocket", "v1.68.0", "g7.2xlarge", "1.37", today=DAY) == 595
    assert matrix.driver_branch_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.36", today=DAY) == 580
    pinned = matrix.driver_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.37", today=DAY, branch_pin="pb")
    assert pinned is not None and (pinned.version, pinned.branch) == ("595.91.07", 595)
    assert "settings.kernel.drivers.nvidia.branch = 'pb' activates 595.91.07" in pinned.rule
    # One driver: the setting changes nothing on a variant that ships one tree.
    single = matrix.driver_for_image("bottlerocket", "v1.68.0", "g6.xlarge", "1.36", today=DAY, branch_pin="pb")
    assert single is not None and single.branch == 580


# --- 2. NVIDIA_REQUIRE_CUDA decides before minor version compatibility, where the toolkit checks it ----------

CUDA_12_8_1 = "nvidia/cuda:12.8.1-runtime-ubuntu22.04"


def cuda_check(capsys: pytest.CaptureFixture[str], driver: str, *extra: str) -> tuple[int, str]:
    return check(capsys, "--os", "ubuntu-22.04", "--driver", driver, "--cuda", CUDA_12_8_1, *extra, *TODAY)


def test_nvidia_cuda_12_8_1_admits_its_own_branches(matrix: Matrix):
    image = matrix.image_cuda(CUDA_12_8_1)
    assert image is not None and image.admitted_branches == (470, 535, 550, 560, 565)
    # NGC framework images keep their own list (Triton release notes), not the nvidia/cuda one.
    triton = matrix.image_cuda("nvcr.io/nvidia/tritonserver:25.01-py3")
    assert triton is not None and triton.admitted_branches == (470, 525, 535, 545)


@pytest.mark.parametrize("driver", ["525.147.05", "545.29.06"])
def test_nvidia_cuda_12_8_1_on_unadmitted_branches_is_refused_in_legacy_mode_by_check(capsys, driver):
    code, out = cuda_check(capsys, driver, "--toolkit-mode", "legacy")
    branch = driver.split(".")[0]
    assert code == 1
    assert (f"[mandatory] cuda-driver-compatible: CUDA 12.8.1 cannot start on driver {driver}: the image's "
            f"NVIDIA_REQUIRE_CUDA asks cuda>=12.8 or one of R470, R535, R550, R560, R565, and R{branch} is neither. "
            "The container toolkit in legacy mode checks it through nvidia-container-cli") in out
    assert ("source: https://github.com/NVIDIA/nvidia-container-toolkit/blob/v1.20.0/cmd/nvidia-container-runtime-hook"
            "/main.go#L145-L146") in out
    assert "assumes: no --instance-type: the GPU is assumed to be a data-center GPU" in out


@pytest.mark.parametrize("driver", ["525.147.05", "545.29.06"])
def test_nvidia_cuda_12_8_1_on_unadmitted_branches_runs_in_cdi_mode_by_check(capsys, driver):
    _, out = cuda_check(capsys, driver, "--operator", "v26.7.0")  # v26.7.0's chart enables CDI
    assert "[advisory] cuda-driver-compatible: CUDA 12.8.1 runs on driver" in out
    assert "the toolkit in CDI mode does not check it, but legacy mode would refuse the container" in out
    _, out = cuda_check(capsys, driver, "--toolkit-mode", "legacy", "--disable-require")
    assert "[advisory] cuda-driver-compatible: CUDA 12.8.1 runs on driver" in out


def test_nvidia_cuda_12_8_1_on_r535_is_the_mvc_advisory_in_both_modes_by_check(capsys):
    for mode in ("legacy", "cdi"):
        code, out = cuda_check(capsys, "535.309.01", "--toolkit-mode", mode)
        assert code == 0
        assert "[advisory] cuda-driver-compatible: CUDA 12.8.1 runs on driver 535.309.01 only through minor" in out
        assert "NVIDIA_REQUIRE_CUDA does not admit" not in out


def test_operator_chart_enables_cdi_from_v25_10_0(matrix: Matrix):
    assert matrix.toolkit_mode_for_operator("v25.3.4") == "legacy"
    assert matrix.toolkit_mode_for_operator("v25.10.0") == "cdi"
    assert matrix.toolkit_mode_for_operator("v25.3.4", cdi_enabled=True) == "cdi"


def test_cdi_off_leaves_the_toolkit_on_auto_which_is_jit_cdi_from_toolkit_1_18(matrix: Matrix):
    """The operator sets the runtime mode only with CDI on; auto resolves to jit-cdi from toolkit v1.18.0
    (nvidia-container-toolkit internal/info/auto.go), legacy before it."""
    assert matrix.toolkit_mode_for_operator("v26.7.0", cdi_enabled=False) == "jit-cdi"  # toolkit v1.20.0
    assert matrix.toolkit_mode_for_operator("v25.10.0", cdi_enabled=False) == "jit-cdi"  # toolkit v1.18.0
    assert matrix.toolkit_mode_for_operator("v25.3.4", cdi_enabled=False) == "legacy"  # toolkit v1.17.8
    assert matrix.toolkit_mode_for_operator("v99.0.0", cdi_enabled=False) is None  # not recorded: no guess
    assert matrix.toolkit_mode_for_operator(None) is None
    assert matrix.toolkit_checks_require("jit-cdi")[0] is False
    assert matrix.toolkit_checks_require("legacy")[0] is True


def cuda_pack(driver: str, cdi: bool | None, operator: str | None = None) -> tuple[tuple[str, str], ...]:
    pinned: list[dict[str, object]] = (
        [{"resource": "gpu-operator", "set": ["version"], "value": operator}] if operator else [])
    patch: list[dict[str, object]] = [
        *pinned,
        {"resource": "gpu-dev-a10g", "set": ["labels", "gpu-platform.io/os"], "value": "ubuntu-22.04"},
        {"resource": "gpu-operator", "set": ["values", "driver", "version"], "value": driver},
        {"resource": "gpu-inference", "set": ["spec", "template", "spec", "containers", 0, "image"],
         "value": CUDA_12_8_1},
    ]
    if cdi is not None:
        patch.append({"resource": "gpu-operator", "set": ["values", "cdi"], "value": {"enabled": cdi}})
    return tuple(v for v in pack("cuda-driver-compatible", patch) if "gpu-inference" in v[1])


@pytest.mark.parametrize(("driver", "cdi", "operator", "level"), [
    ("525.147.05", False, None, "advisory"),  # v26.7.0, CDI off: toolkit v1.20.0 on auto = jit-cdi, no check
    ("525.147.05", False, "v25.3.4", "mandatory"),  # toolkit v1.17.8 on auto = legacy, which checks
    ("525.147.05", None, "v25.3.4", "mandatory"),  # v25.3.4's chart leaves CDI off
    ("525.147.05", None, None, "advisory"), ("545.29.06", False, "v25.3.4", "mandatory"),
    ("535.309.01", False, None, "advisory"), ("535.309.01", None, None, "advisory"),
])
def test_nvidia_cuda_12_8_1_through_the_pack(driver, cdi, operator, level):
    (violation,) = cuda_pack(driver, cdi, operator)
    assert violation[0] == level
    if level == "mandatory":
        assert "NVIDIA_REQUIRE_CUDA asks cuda>=12.8 or one of R470, R535, R550, R560, R565" in violation[1]
    elif driver.startswith("525") and cdi is False:
        assert "the toolkit in jit-cdi mode does not check it" in violation[1]


# --- gaps ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("release", ["v26.7.1", "v26.7.2"])
def test_unconfirmed_operator_patches_are_refused_with_the_reason(capsys, matrix: Matrix, release):
    code = main(["check", "--os", "ubuntu-24.04", "--driver", "595.91.07", "--operator", release, *TODAY])
    err = capsys.readouterr().err
    assert code == 2
    assert (f"--operator '{release}': GPU Operator {release} is not in the compatibility matrix ({release} is "
            "unconfirmed:") in err
    assert err.rstrip().endswith("the newest release it records is v26.7.0")  # issue 55: never the whole list
    assert "source https://github.com/NVIDIA/gpu-operator/tags" in err
    assert matrix.operator(release) is None


# --- An upgrade advice never ends in an empty list of drivers ----------------------------------------------


def test_mvc_advice_without_a_recorded_driver_says_so_instead_of_an_empty_list(capsys):
    """CUDA 13.5 needs R620 (held unconfirmed; R615 until issue 55) and the matrix records no R620 data-center driver
    image: the advisory used to end in "PTX JIT workloads: ." with nothing after the colon."""
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.159.04", "--cuda", "13.5", *TODAY)
    assert code == 0
    assert ("[advisory] cuda-driver-compatible: CUDA 13.5 runs on driver 580.159.04 only through minor version "
            "compatibility (CUDA 13.x floor 580.65.06; full support needs 620, UNCONFIRMED: no primary source read "
            "gives CUDA 13.5's minimum driver).") in out
    assert ("Upgrade the driver to 620 or later for PTX JIT workloads; no released data-center driver at that "
            "level is recorded in the matrix yet.") in out
    assert ": ." not in out and "()" not in out


def test_mvc_advice_with_recorded_drivers_still_lists_them(capsys):
    code, out = check(capsys, "--os", "ubuntu-24.04", "--driver", "580.159.04", "--cuda", "13.2", *TODAY)
    assert code == 0
    assert "Upgrade the driver to 595.45.04 or later for PTX JIT workloads: 595." in out

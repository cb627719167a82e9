"""pulumi-eks's own AMI-type tests, run against the emulation (tools/engine/mocks/eks_ami.py).

The judge is upstream's: the cases of nodejs/eks/nodes/ami.test.ts (`toAmiType`, `getOperatingSystem`, `getAmiType`,
lines cited per test) and the `isGravitonInstance` / `getArchitecture` cases of nodejs/eks/nodes/nodegroup.test.ts
(its instance-type tables in fixtures/pulumi_eks_instance_types.yaml), at pulumi/pulumi-eks 7bf0c1b1.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from tools.engine.mocks.eks_ami import (
    DEFAULT_OS,
    SOURCE,
    PulumiEksInputError,
    determine_ami_type,
    get_ami_type,
    get_architecture,
    get_operating_system,
    is_graviton_instance,
    ssm_parameter_name,
    to_ami_type,
)

FIXTURES = Path(__file__).parent / "fixtures"
TYPES = yaml.safe_load((FIXTURES / "pulumi_eks_instance_types.yaml").read_text())
PINNED = yaml.safe_load((FIXTURES / "pulumi_eks_source.yaml").read_text())


@contextmanager
def _refused(message: str) -> Iterator[None]:
    """pulumi-eks's error, word for word."""
    with pytest.raises(PulumiEksInputError) as caught:
        yield
    assert str(caught.value) == message


# ami.test.ts 25-31 and 32-42
@pytest.mark.parametrize(("value", "expected"), [
    ("amazon-linux-2", "AL2_x86_64"), ("amazon-linux-2-gpu", "AL2_x86_64_GPU"), ("amazon-linux-2-arm", "AL2_ARM_64"),
    ("amazon-linux-2023/x86_64/standard", "AL2023_x86_64_STANDARD"),
    ("amazon-linux-2023/arm64/standard", "AL2023_ARM_64_STANDARD"),
    ("AL2_x86_64", "AL2_x86_64"), ("AL2_x86_64_GPU", "AL2_x86_64_GPU"), ("AL2_ARM_64", "AL2_ARM_64"),
    ("AL2023_x86_64_STANDARD", "AL2023_x86_64_STANDARD"), ("AL2023_ARM_64_STANDARD", "AL2023_ARM_64_STANDARD"),
    ("BOTTLEROCKET_ARM_64", "BOTTLEROCKET_ARM_64"), ("BOTTLEROCKET_x86_64", "BOTTLEROCKET_x86_64"),
    ("BOTTLEROCKET_ARM_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA"),
    ("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA"),
])
def test_to_ami_type(value: str, expected: str) -> None:
    assert to_ami_type(value) == expected


def test_to_ami_type_of_an_invalid_alias_is_undefined() -> None:  # ami.test.ts 43-45
    assert to_ami_type("invalid-alias") is None


def test_get_operating_system() -> None:  # ami.test.ts 48-61
    assert get_operating_system(None, "AL2023") == "AL2023"
    assert get_operating_system(None, None) == DEFAULT_OS == "AL2023"
    assert get_operating_system("AL2023_ARM_64_STANDARD", None) == "AL2023"


def test_get_operating_system_refuses_what_pulumi_eks_refuses() -> None:  # ami.test.ts 63-75
    with _refused("Cannot determine OS of unknown AMI type: unknown-ami-type"):
        get_operating_system("unknown-ami-type", None)
    with _refused("Operating system 'Bottlerocket' does not match the detected "
                                                  "operating system 'AL2023' of AMI type 'AL2023_ARM_64_STANDARD'."):
        get_operating_system("AL2023_ARM_64_STANDARD", "Bottlerocket")


# ami.test.ts 78-102
@pytest.mark.parametrize(("os_", "gpu", "arch", "expected"), [
    ("AL2", False, "x86_64", "AL2_x86_64"), ("AL2", True, "x86_64", "AL2_x86_64_GPU"),
    ("AL2", False, "arm64", "AL2_ARM_64"), ("AL2023", False, "x86_64", "AL2023_x86_64_STANDARD"),
    ("AL2023", False, "arm64", "AL2023_ARM_64_STANDARD"), ("Bottlerocket", False, "arm64", "BOTTLEROCKET_ARM_64"),
    ("Bottlerocket", False, "x86_64", "BOTTLEROCKET_x86_64"),
    ("Bottlerocket", True, "arm64", "BOTTLEROCKET_ARM_64_NVIDIA"),
    ("Bottlerocket", True, "x86_64", "BOTTLEROCKET_x86_64_NVIDIA"),
])
def test_get_ami_type(os_: str, gpu: bool, arch: str, expected: str) -> None:
    assert get_ami_type(os_, gpu, arch) == expected


def test_get_ami_type_refuses_a_combination_with_no_ami() -> None:  # ami.test.ts 104-108
    with _refused("No AMI type found for OS: AL2, GPU support: true, architecture: "
                                                  "arm64"):
        get_ami_type("AL2", True, "arm64")


@pytest.mark.parametrize("instance_type", TYPES["gravitonInstances"]["types"])
def test_a_graviton_instance_is_graviton(instance_type: str) -> None:  # nodegroup.test.ts 353-358
    assert is_graviton_instance(instance_type) is True


@pytest.mark.parametrize("instance_type", TYPES["nonGravitonInstances"]["types"])
def test_a_non_graviton_instance_is_not(instance_type: str) -> None:  # nodegroup.test.ts 360-363
    assert is_graviton_instance(instance_type) is False


def test_get_architecture() -> None:  # nodegroup.test.ts 365-392
    assert get_architecture(["c5.large", "m5.large", "t3.large"]) == "x86_64"
    assert get_architecture(["c6g.large", "m6g.large", "t4g.large"]) == "arm64"
    assert get_architecture([]) == "x86_64"
    with _refused("Cannot determine architecture of instance types. The provided "
                                                  "instance types do not share a common architecture"):
        get_architecture(["c5.large", "c6g.large"])


def test_determine_ami_type_defaults_gpu_to_false_and_reads_the_architecture() -> None:
    """nodegroup.ts 2430-2446 (no upstream unit test): `gpu ?? false`, the architecture of the instance types."""
    assert determine_ami_type("AL2023", True, ["g5.xlarge"]) == "AL2023_x86_64_NVIDIA"
    assert determine_ami_type("AL2023", None, ["g5.xlarge"]) == "AL2023_x86_64_STANDARD"
    assert determine_ami_type("Bottlerocket", True, ["g5g.xlarge"]) == "BOTTLEROCKET_ARM_64_NVIDIA"
    with _refused("No AMI type found for OS: AL2023, GPU support: true, architecture: arm64"):
        determine_ami_type("AL2023", True, ["g5g.xlarge"])


def test_the_recommended_image_is_read_from_the_ami_type_s_ssm_parameter() -> None:
    """ami.ts 92-100 (the AL2023 NVIDIA parameter) and 122-128 (Bottlerocket NVIDIA), no upstream unit test."""
    assert ssm_parameter_name("AL2023_x86_64_NVIDIA", "1.33") == (
        "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/nvidia/recommended/image_id")
    assert ssm_parameter_name("BOTTLEROCKET_x86_64_NVIDIA", "1.33") == (
        "/aws/service/bottlerocket/aws-k8s-1.33-nvidia/x86_64/latest/image_id")


@pytest.mark.parametrize("key", sorted(SOURCE))
def test_every_citation_holds_the_pinned_text_of_its_line(key: str) -> None:
    cite = SOURCE[key]
    assert cite.snippet in PINNED["files"][cite.path]["lines"][cite.line], f"{cite.path}:{cite.line}"

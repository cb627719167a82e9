"""Every form AWS writes a node image release in reads as its release, and nothing else does (issue 55).

The forms, with where each is written:
- EKS API reference, `Nodegroup.releaseVersion` / `CreateNodegroup.releaseVersion` ("The AMI version of the Amazon
  EKS optimized AMI", https://docs.aws.amazon.com/eks/latest/APIReference/API_Nodegroup.html): for AL2023 the
  Kubernetes version and the build date, as "Amazon EKS optimized Amazon Linux AMI versions" lists them
  (https://docs.aws.amazon.com/eks/latest/userguide/eks-linux-ami-versions.html), e.g. 1.35.0-20251209; for
  Bottlerocket its own version and the build's commit, e.g. 1.47.0-6154605b as EKS reports a BOTTLEROCKET_x86_64
  node group (https://github.com/aws-controllers-k8s/community/issues/2644).
- AMI names, as the SSM parameters of "Retrieve recommended Amazon Linux AMI IDs"
  (https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id.html) name a release:
  amazon-eks-node-al2023-x86_64-nvidia-1.35-v20251209 (and an older line with the driver branch,
  amazon-eks-node-al2023-x86_64-nvidia-560-1.31-v...); Bottlerocket's
  bottlerocket-aws-k8s-<k8s>-nvidia-<arch>-v<version>-<commit>
  (https://docs.aws.amazon.com/eks/latest/userguide/retrieve-ami-id-bottlerocket.html; the release tags at
  https://github.com/bottlerocket-os/bottlerocket/releases).
- Karpenter's alias, `al2023@v20251209` / `bottlerocket@v1.48.0` (https://karpenter.sh/docs/concepts/nodeclasses/).

A Bottlerocket build commit may be all digits, so `1.35.0-20251209` on a Bottlerocket pool reads as Bottlerocket
1.35.0: the pool's AMI type says which line the value belongs to.
"""

from __future__ import annotations

import pytest

from policies.gpu_guard.matrix.images import parse_image_version

READS = [
    ("al2023", "1.35.0-20251209", "v20251209"),  # EKS releaseVersion
    ("al2023", "1.29.3-20240531", "v20240531"),
    ("al2023", "amazon-eks-node-al2023-x86_64-nvidia-1.35-v20251209", "v20251209"),  # AMI name
    ("al2023", "amazon-eks-node-al2023-arm64-nvidia-1.35-v20251209", "v20251209"),
    ("al2023", "amazon-eks-node-al2023-x86_64-nvidia-560-1.31-v20241024", "v20241024"),
    ("al2023", "amazon-eks-node-al2023-x86_64-standard-1.35-v20251209", "v20251209"),
    ("al2023", "al2023@v20251209", "v20251209"),  # Karpenter alias
    ("bottlerocket", "1.48.0-0b7d6d27", "v1.48.0"),  # EKS releaseVersion
    ("bottlerocket", "1.47.0-6154605b", "v1.47.0"),
    ("bottlerocket", "bottlerocket-aws-k8s-1.35-nvidia-x86_64-v1.48.0-0b7d6d27", "v1.48.0"),  # AMI name
    ("bottlerocket", "bottlerocket-aws-k8s-1.35-nvidia-aarch64-v1.48.0-0b7d6d27", "v1.48.0"),
    ("bottlerocket", "bottlerocket-aws-k8s-1.21-x86_64-v1.2.0-ccf1b754", "v1.2.0"),
    ("bottlerocket", "bottlerocket@v1.48.0", "v1.48.0"),  # Karpenter alias
]


@pytest.mark.parametrize(("os", "value", "release"), READS)
def test_each_form_aws_writes_reads_as_its_release(os: str, value: str, release: str) -> None:
    assert parse_image_version(os, value) == release


@pytest.mark.parametrize(
    ("os", "value"),
    [
        ("bottlerocket", "1.48.0-0b7d6d2"),  # a 7-hex build: not how EKS writes it
        ("bottlerocket", "1.48-0b7d6d27"),
        ("bottlerocket", "1.48.0-nightly"),
        ("bottlerocket", "amazon-eks-node-al2023-x86_64-nvidia-1.35-v20251209"),
        ("bottlerocket", "bottlerocket-aws-k8s-1.35-nvidia-x86_64-v1.48"),
        ("al2023", "1.48.0-0b7d6d27"),  # a Bottlerocket release on an AL2023 pool
        ("al2023", "1.35.0-2025129"),  # seven digits: no date
        ("al2023", "amazon-eks-node-al2023-x86_64-nvidia-1.35-20251209"),  # the name's `v` is missing
        ("al2023", "ami-0abcdef1234567890"),  # an AMI id says no release
    ],
)
def test_anything_else_is_refused_naming_the_value(os: str, value: str) -> None:
    with pytest.raises(ValueError, match="is not a release") as raised:
        parse_image_version(os, value)
    assert repr(value) in str(raised.value)

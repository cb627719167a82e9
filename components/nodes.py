"""Launch-template pieces every node group shares: IMDSv2 with hop limit 1 and an encrypted gp3 root volume.

Sources:
- IMDSv2 required, hop limit 1, in the node launch template (EKS best practices, "Restrict access to the
  instance profile assigned to the worker node"):
  https://docs.aws.amazon.com/eks/latest/best-practices/identity-and-access-management.html
- Launch template settings a managed node group accepts:
  https://docs.aws.amazon.com/eks/latest/userguide/launch-templates.html
- gp3 volumes: https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html
"""

from __future__ import annotations

import pulumi_aws as aws

# Root device names: AL2023 EKS images boot from /dev/xvda, Canonical's Ubuntu images from /dev/sda1.
# A mapping under any other name adds a second volume instead of sizing the root volume.
# Source: https://docs.aws.amazon.com/ebs/latest/userguide/device_naming.html
AL2023_ROOT_DEVICE = "/dev/xvda"
UBUNTU_ROOT_DEVICE = "/dev/sda1"


def metadata_options() -> aws.ec2.LaunchTemplateMetadataOptionsArgs:
    """IMDSv2 only, reachable from the host but not from pods (hop limit 1); IMDS stays enabled."""
    return aws.ec2.LaunchTemplateMetadataOptionsArgs(
        http_endpoint="enabled",
        http_tokens="required",
        http_put_response_hop_limit=1,
        instance_metadata_tags="disabled",
    )


def root_volume(device_name: str, size_gib: int) -> aws.ec2.LaunchTemplateBlockDeviceMappingArgs:
    """An encrypted gp3 root volume (EBS default KMS key) deleted with the instance."""
    return aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
        device_name=device_name,
        ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
            volume_size=size_gib,
            volume_type="gp3",
            encrypted="true",
            delete_on_termination="true",
        ),
    )


def instance_tags(name: str, tags: dict[str, str] | None = None) -> list[aws.ec2.LaunchTemplateTagSpecificationArgs]:
    """Name (and extra) tags on the instances and volumes a launch template starts."""
    values = {"Name": name, **(tags or {})}
    return [
        aws.ec2.LaunchTemplateTagSpecificationArgs(resource_type=kind, tags=values)
        for kind in ("instance", "volume")
    ]

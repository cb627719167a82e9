"""The stack configuration (`gpu-platform:*` keys of `Pulumi.<stack>.yaml`): the one definition of its schema.

`load_stack_config` reads every `gpu-platform:` key, validates it with the models of `models.py` and checks
the GPU pools against the compatibility matrix, all before a single resource is registered. Any
problem stops the program with one `ConfigError` whose message names the stack file, the key path
(`gpuNodeGroups[0].instanceTypes`), the value, the rule and the nearest valid choice.

Sources:
- EKS cluster name rules: https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateCluster.html
- EKS requires subnets in at least two Availability Zones:
  https://docs.aws.amazon.com/eks/latest/userguide/network-reqs.html
- Karpenter duration syntax (`^(([0-9]+(s|m|h))+|Never)$`): upstream CRD karpenter.sh_nodepools.yaml v1.14.1
- EBS snapshot ids (`snap-` + 8 or 17 hex digits):
  https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_Snapshot.html
- gp3 volume size 1-16384 GiB: https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html
- Kubernetes label values (63 characters, DNS-1123 style):
  https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#syntax-and-character-set
"""

from __future__ import annotations

from components.config.fields import PrincipalArn, PublicCidr
from components.config.issues import (
    CONFIG_FILE_ENV,
    PROJECT,
    CapacityType,
    ConfigError,
    ConfigIssue,
    ConfigIssues,
    OperatorOs,
    Path,
    PathPart,
    PoolOs,
)
from components.config.loader import (
    check_stack,
    load_stack_config,
    matrix_advisories,
    parse_stack_config,
    raise_problems,
    stack_file_name,
)
from components.config.models import (
    SERVICE_IPV4_CIDR,
    ClusterConfig,
    GpuNodeGroupConfig,
    GpuOperatorConfig,
    GpuPool,
    KarpenterConfig,
    KarpenterPoolConfig,
    StackConfig,
    SystemNodeGroupConfig,
)
from components.config.problems import Problem
from components.config.serving import (
    AddonsConfig,
    AutoscalingConfig,
    InferenceServiceConfig,
    IngressConfig,
    ModelVolumeConfig,
)

__all__ = [
    "CONFIG_FILE_ENV",
    "PROJECT",
    "SERVICE_IPV4_CIDR",
    "AddonsConfig",
    "AutoscalingConfig",
    "CapacityType",
    "ClusterConfig",
    "ConfigError",
    "ConfigIssue",
    "ConfigIssues",
    "GpuNodeGroupConfig",
    "GpuOperatorConfig",
    "GpuPool",
    "InferenceServiceConfig",
    "IngressConfig",
    "KarpenterConfig",
    "KarpenterPoolConfig",
    "ModelVolumeConfig",
    "OperatorOs",
    "Path",
    "PathPart",
    "PoolOs",
    "PrincipalArn",
    "Problem",
    "PublicCidr",
    "StackConfig",
    "SystemNodeGroupConfig",
    "check_stack",
    "load_stack_config",
    "matrix_advisories",
    "parse_stack_config",
    "raise_problems",
    "stack_file_name",
]

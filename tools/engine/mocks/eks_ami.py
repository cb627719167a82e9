"""pulumi-eks's AMI-type logic (nodejs/eks/nodes/ami.ts, and `determineAmiType` of nodegroup.ts), for the emulation.

A `ManagedNodeGroup` given `operatingSystem` (and `gpu`) but no `amiType` gets the AMI type pulumi-eks derives
(nodegroup.ts 2073-2083 calling `determineAmiType`, 2430-2446, which calls `getAmiType`, ami.ts 240-261, over the
architecture of the instance types, nodegroup.ts 2455-2475); a custom launch template's user data is chosen by the
operating system `getOperatingSystem` resolves (ami.ts 200-229), and its image by the SSM parameter of the AMI type
(ami.ts 46-129, nodegroup.ts 2346-2391).

Read at pulumi/pulumi-eks 7bf0c1b1 (v4.3.0-9), as tools/engine/mocks/eks_children.py says why; each fact's line is in
`SOURCE`. tests/tools/test_eks_ami.py runs pulumi-eks's own ami.test.ts cases against it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tools.engine.mocks.eks_children import Cite

AMI_TS = "nodejs/eks/nodes/ami.ts"
NODEGROUP_TS = "nodejs/eks/nodes/nodegroup.ts"

SOURCE: dict[str, Cite] = {
    "amiTypeMetadata": Cite(AMI_TS, 46, "const amiTypeMetadata: { [key in AmiType]: AmiMetadata } = {"),
    "defaultOs": Cite(AMI_TS, 31, "export const DEFAULT_OS = OperatingSystem.AL2023;"),
    "toAmiType": Cite(AMI_TS, 180, "export function toAmiType(str: string): AmiType | undefined {"),
    "getOperatingSystem": Cite(AMI_TS, 200, "export function getOperatingSystem("),
    "unknownAmiType": Cite(AMI_TS, 214, "reason: `Cannot determine OS of unknown AMI type: ${amiType}`,"),
    "osMismatch": Cite(AMI_TS, 224, "reason: `Operating system '${operatingSystem}' does not match"),
    "getAmiType": Cite(AMI_TS, 240, "export function getAmiType("),
    "noAmiType": Cite(AMI_TS, 258, "`No AMI type found for OS: ${os}, GPU support: ${gpuSupport}, architecture:"),
    "determineAmiType": Cite(NODEGROUP_TS, 2430, "function determineAmiType("),
    "gpuDefault": Cite(NODEGROUP_TS, 2445,
        ".apply(([os, gpu, architecture]) => getAmiType(os, gpu ?? false, architecture,"),
    "ec2InstanceRegex": Cite(NODEGROUP_TS, 2403,
                             r"const ec2InstanceRegex = /([a-z]+)([0-9]+)([a-z])?\-?([a-z]+)?\.([a-zA-Z0-9\-]+)/;"),
    "graviton": Cite(NODEGROUP_TS, 2423, 'return processorFamily === "g";'),
    "mixedArchitectures": Cite(NODEGROUP_TS, 2469, "reason: \"Cannot determine architecture of instance types."),
    "ssmParameter": Cite(NODEGROUP_TS, 2387,
        "const parameterName = getAmiMetadata(amiType).ssmParameterName(version);"),
}


class PulumiEksInputError(ValueError):
    """An input pulumi-eks refuses (its `InputPropertyError` / `ResourceError`): the real preview fails with it."""


@dataclass(frozen=True)
class AmiMetadata:
    os: str
    gpu: bool
    architecture: str
    ssm: str  # the SSM parameter name, `{v}` the cluster version
    aliases: tuple[str, ...] = ()


_AL2 = "/aws/service/eks/optimized-ami/{v}/amazon-linux-2"
_AL2023 = "/aws/service/eks/optimized-ami/{v}/amazon-linux-2023"
_BR = "/aws/service/bottlerocket/aws-k8s-{v}"
# ami.ts 46-129, in its order (getAmiType returns the first match of `amiTypeValues`, ami.ts 136-158, same order).
AMI_TYPES: dict[str, AmiMetadata] = {
    "AL2_x86_64": AmiMetadata("AL2", False, "x86_64", _AL2 + "/recommended/image_id", ("amazon-linux-2",)),
    "AL2_x86_64_GPU": AmiMetadata("AL2", True, "x86_64", _AL2 + "-gpu/recommended/image_id", ("amazon-linux-2-gpu",)),
    "AL2_ARM_64": AmiMetadata("AL2", False, "arm64", _AL2 + "-arm64/recommended/image_id", ("amazon-linux-2-arm",)),
    "AL2023_x86_64_STANDARD": AmiMetadata("AL2023", False, "x86_64", _AL2023 + "/x86_64/standard/recommended/image_id",
                                          ("amazon-linux-2023/x86_64/standard",)),
    "AL2023_ARM_64_STANDARD": AmiMetadata("AL2023", False, "arm64", _AL2023 + "/arm64/standard/recommended/image_id",
                                          ("amazon-linux-2023/arm64/standard",)),
    "AL2023_x86_64_NVIDIA": AmiMetadata("AL2023", True, "x86_64", _AL2023 + "/x86_64/nvidia/recommended/image_id",
                                        ("amazon-linux-2023/x86_64/nvidia",)),
    "BOTTLEROCKET_ARM_64": AmiMetadata("Bottlerocket", False, "arm64", _BR + "/arm64/latest/image_id"),
    "BOTTLEROCKET_x86_64": AmiMetadata("Bottlerocket", False, "x86_64", _BR + "/x86_64/latest/image_id"),
    "BOTTLEROCKET_ARM_64_NVIDIA": AmiMetadata("Bottlerocket", True, "arm64", _BR + "-nvidia/arm64/latest/image_id"),
    "BOTTLEROCKET_x86_64_NVIDIA": AmiMetadata("Bottlerocket", True, "x86_64", _BR + "-nvidia/x86_64/latest/image_id"),
}
# ami.ts 136-151: the enum's order, which `getAmiType` walks.
AMI_TYPE_ORDER = ("AL2_x86_64", "AL2_x86_64_GPU", "AL2_ARM_64", "AL2023_x86_64_STANDARD", "AL2023_ARM_64_STANDARD",
                  "AL2023_x86_64_NVIDIA", "BOTTLEROCKET_ARM_64", "BOTTLEROCKET_x86_64", "BOTTLEROCKET_ARM_64_NVIDIA",
                  "BOTTLEROCKET_x86_64_NVIDIA")
DEFAULT_OS = "AL2023"
_ALIASES = {alias: key for key, meta in AMI_TYPES.items() for alias in meta.aliases}
_EC2_INSTANCE = re.compile(r"([a-z]+)([0-9]+)([a-z])?-?([a-z]+)?\.([a-zA-Z0-9-]+)")


def to_ami_type(value: str) -> str | None:
    """`toAmiType` (ami.ts 180-186): an AMI type, or the type of a legacy alias, else None."""
    return value if value in AMI_TYPES else _ALIASES.get(value)


def get_operating_system(ami_type: str | None, operating_system: str | None) -> str:
    """`getOperatingSystem` (ami.ts 200-229)."""
    if not ami_type:
        return operating_system or DEFAULT_OS
    resolved = to_ami_type(ami_type)
    if resolved is None:
        raise PulumiEksInputError(f"Cannot determine OS of unknown AMI type: {ami_type}")
    os_ = AMI_TYPES[resolved].os
    if operating_system and operating_system != os_:
        raise PulumiEksInputError(f"Operating system '{operating_system}' does not match the detected operating "
                                  f"system '{os_}' of AMI type '{ami_type}'.")
    return os_


def get_ami_type(os_: str, gpu: bool, architecture: str) -> str:
    """`getAmiType` (ami.ts 240-261): the first AMI type of that OS, GPU support and architecture."""
    for key in AMI_TYPE_ORDER:
        meta = AMI_TYPES[key]
        if (meta.os, meta.gpu, meta.architecture) == (os_, gpu, architecture):
            return key
    js_gpu = "true" if gpu else "false"
    raise PulumiEksInputError(f"No AMI type found for OS: {os_}, GPU support: {js_gpu}, architecture: {architecture}")


def is_graviton_instance(instance_type: str) -> bool:
    """`isGravitonInstance` (nodegroup.ts 2412-2424): the processor letter after the generation is `g`."""
    match = _EC2_INSTANCE.search(instance_type)
    if match is None:
        raise PulumiEksInputError(f"Invalid EC2 instance type: {instance_type}")
    return match.group(3) == "g"


def get_architecture(instance_types: Sequence[str]) -> str:
    """`getArchitecture` (nodegroup.ts 2455-2475): arm64 for Graviton types, x86_64 otherwise and by default."""
    graviton = x86 = False
    for instance_type in instance_types:
        if is_graviton_instance(instance_type):
            graviton = True
        else:
            x86 = True
        if graviton and x86:
            raise PulumiEksInputError("Cannot determine architecture of instance types. The provided instance types "
                                      "do not share a common architecture")
    return "arm64" if graviton else "x86_64"


def determine_ami_type(os_: str, gpu: bool | None, instance_types: Sequence[str] | None) -> str:
    """`determineAmiType` (nodegroup.ts 2430-2446): `gpu` defaults to false, the architecture to the types'."""
    return get_ami_type(os_, bool(gpu), get_architecture(instance_types or []))


def ssm_parameter_name(ami_type: str, version: str) -> str:
    """The SSM parameter pulumi-eks reads the recommended image from (ami.ts 46-129; nodegroup.ts 2386-2389)."""
    return AMI_TYPES[ami_type].ssm.format(v=version)

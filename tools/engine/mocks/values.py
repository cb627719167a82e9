"""Deterministic building blocks of the offline mocks: hashes, ids, ARNs, kubeconfigs, the context.

Same program and config, same answers: every value derives from a hash of the resource's type and URN
or of the invoke's arguments, never from time or randomness.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tools.engine.records import UNKNOWN

# The account every mocked ARN lives in: the documentation account id AWS uses in its examples.
# Source: https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_identifiers.html
ACCOUNT_ID = "111122223333"
PARTITION = "aws"
DEFAULT_REGION = "us-west-2"
# The role the offline program runs as: the stack's deploy role, the identity that runs `pulumi up` (the shipped
# workflows assume it in the `dev` and `prod` environments; the shipped stack files list it in
# cluster.deployerPrincipalArns, docs/ci-cd.md "Who can write where"). Never the pull-request preview role
# (`gpu-platform-preview-<stack>`, view-only): a preview role that ran `pulumi up` would create the cluster and get
# EKS's creator admin entry.
DEPLOY_ROLE = "gpu-platform-deploy-{stack}"
PREVIEW_ROLE = "gpu-platform-preview-{stack}"
# The EKS version an adopted (`aws.eks.get_cluster`) cluster reports when the stack does not say, and that of a
# cluster created without `version` in `up`. Never in `update`: there the version EKS chose at create is in the
# state, which the offline gate does not have (tools/engine/mocks/outputs.py STATE_CHOSEN).
DEFAULT_EKS_VERSION = "1.35"
# A fixed creation time, so outputs stay byte-identical across runs.
CREATED_AT = "2026-01-01T00:00:00Z"



# --------------------------------------------------------------------------------------------------
# Deterministic building blocks
# --------------------------------------------------------------------------------------------------


def stable_hex(*parts: object, length: int = 17) -> str:
    """`length` lowercase hex characters derived from `parts` (sha256), the same on every run."""
    digest = hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()
    while len(digest) < length:
        digest += hashlib.sha256(digest.encode()).hexdigest()
    return digest[:length]


def stable_uuid(*parts: object) -> str:
    h = stable_hex(*parts, length=32)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def zone_id_prefix(region: str) -> str:
    """`us-west-2` -> `usw2`, `ap-southeast-1` -> `apse1`: the prefix of AWS availability zone ids.

    Source: https://docs.aws.amazon.com/ram/latest/userguide/working-with-az-ids.html
    """
    directions = {
        "north": "n", "south": "s", "east": "e", "west": "w", "central": "c",
        "northeast": "ne", "southeast": "se", "northwest": "nw", "southwest": "sw",
    }
    parts = region.split("-")
    if len(parts) < 3:
        return region.replace("-", "")
    return parts[0] + directions.get(parts[1], parts[1][:1]) + "".join(parts[2:])


def eks_endpoint(cluster: str, region: str) -> str:
    return f"https://{stable_hex('eks-endpoint', cluster, region, length=32).upper()}.gr7.{region}.eks.amazonaws.com"


def eks_oidc_issuer(cluster: str, region: str) -> str:
    return f"https://oidc.eks.{region}.amazonaws.com/id/{stable_hex('eks-oidc', cluster, region, length=32).upper()}"


def certificate_authority(cluster: str) -> str:
    """A base64 PEM-shaped blob (not a real certificate; nothing parses it offline)."""
    body = base64.b64encode(hashlib.sha512(f"ca:{cluster}".encode()).digest() * 3).decode()
    pem = f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"
    return base64.b64encode(pem.encode()).decode()


def kubeconfig(cluster: str, region: str) -> dict[str, Any]:
    """A kubeconfig for an EKS cluster, shaped like the one pulumi-eks and `aws eks update-kubeconfig` write.

    Source: https://docs.aws.amazon.com/eks/latest/userguide/create-kubeconfig.html
    """
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {
                    "server": eks_endpoint(cluster, region),
                    "certificate-authority-data": certificate_authority(cluster),
                },
            }
        ],
        "contexts": [{"name": "aws", "context": {"cluster": cluster, "user": "aws"}}],
        "current-context": "aws",
        "preferences": {},
        "users": [
            {
                "name": "aws",
                "user": {
                    "exec": {
                        "apiVersion": "client.authentication.k8s.io/v1beta1",
                        "command": "aws",
                        "args": ["--region", region, "eks", "get-token", "--cluster-name", cluster, "--output", "json"],
                    }
                },
            }
        ],
    }


# --------------------------------------------------------------------------------------------------
# Context handed to every table entry
# --------------------------------------------------------------------------------------------------


class InvokeFailure(Exception):
    """A provider function's own failure (e.g. not found): the program sees `invoke of <token> failed: <reason>`.

    Source: pulumi/runtime/invoke.py of the Python SDK (`resp.failures`).
    """


@dataclass(frozen=True)
class MockContext:
    """What an invoke or resource answer may depend on: region, account, the stack's config."""

    region: str
    account: str
    partition: str
    config: Mapping[str, Any]

    def arn(self, service: str, resource: str, *, region: bool = True, account: bool = True) -> str:
        return (
            f"arn:{self.partition}:{service}:{self.region if region else ''}:"
            f"{self.account if account else ''}:{resource}"
        )


@dataclass(frozen=True)
class ResourceRequest:
    """One resource registration as the table entries see it."""

    type: str
    name: str
    urn: str
    inputs: dict[str, Any]
    custom: bool
    remote: bool
    ctx: MockContext

    def h(self, *extra: object, length: int = 17) -> str:
        return stable_hex(self.type, self.urn, *extra, length=length)

    def physical_name(self, key: str = "name") -> str:
        """The physical name the provider would use: the input, or `<logical>-<7 hex>` (Pulumi auto-naming).

        Source: https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming
        """
        value = self.inputs.get(key)
        if isinstance(value, str) and value and value != UNKNOWN:
            return value
        prefix = self.inputs.get("namePrefix")
        if isinstance(prefix, str) and prefix:
            return prefix + self.h("name", length=26)
        return f"{self.name}-{self.h('name', length=7)}"


InvokeHandler = Callable[[dict[str, Any], MockContext], dict[str, Any]]
OutputHandler = Callable[[ResourceRequest], dict[str, Any]]


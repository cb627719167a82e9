"""The node images the run rolls between: the first `up` runs each GPU pool one image behind, the roll step
moves it to the image dev runs.

- Managed node groups on Canonical's Ubuntu EKS image take a custom AMI through their launch template, so EKS's
  `releaseVersion` does not apply ("If you specify launchTemplate, and your launch template uses a custom AMI,
  then don't specify version": https://docs.aws.amazon.com/eks/latest/APIReference/API_CreateNodegroup.html);
  the roll is `imageId` moving from the previous value of Canonical's SSM parameter to its current one
  (GetParameterHistory), which gives the group a new launch template version and a rolling update
  (https://docs.aws.amazon.com/eks/latest/userguide/update-managed-node-group.html).
- Karpenter pools on Bottlerocket pin an alias (`bottlerocket@v1.68.0`); the roll moves the pool from the
  release before dev's pin to dev's pin, and Karpenter's drift replaces the nodes
  (https://karpenter.sh/docs/concepts/disruption/#drift). Bottlerocket's releases are the versions under its
  public SSM path (https://bottlerocket.dev/en/os/1.20.x/install/quickstart/aws/ssm-parameters/).
"""

from __future__ import annotations

import re
from typing import Any

_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


def _key(version: str) -> tuple[int, int, int]:
    match = _VERSION.match(version)
    if match is None:
        raise ValueError(f"not a release version: {version!r}")
    return int(match[1]), int(match[2]), int(match[3])


def one_before(versions: list[str], pinned: str) -> str:
    """The newest of `versions` older than `pinned` (same `v` prefix as the pin)."""
    older = sorted({v.lstrip("v") for v in versions if _VERSION.match(v) and _key(v) < _key(pinned)}, key=_key)
    if not older:
        raise ValueError(f"no release older than {pinned} among {len(versions)} published versions")
    return ("v" if pinned.startswith("v") else "") + older[-1]


def previous_and_current(history: list[dict[str, Any]]) -> tuple[str, str]:
    """From GetParameterHistory's entries (oldest first): the value before the current one, and the current."""
    values: list[str] = []
    for entry in sorted(history, key=lambda e: (e.get("Version", 0), str(e.get("LastModifiedDate", "")))):
        value = str(entry["Value"])
        if not values or values[-1] != value:
            values.append(value)
    if len(values) < 2:
        raise ValueError("the parameter has only one image in its history: nothing to roll from")
    return values[-2], values[-1]


def ubuntu_images(ssm: Any, parameter: str) -> tuple[str, str]:
    history: list[dict[str, Any]] = []
    for page in ssm.get_paginator("get_parameter_history").paginate(Name=parameter):
        history.extend(page.get("Parameters", []))
    return previous_and_current(history)


def bottlerocket_versions(ssm: Any, kubernetes: str, arch: str = "x86_64") -> list[str]:
    path = f"/aws/service/bottlerocket/aws-k8s-{kubernetes}-nvidia/{arch}/"
    versions: set[str] = set()
    for page in ssm.get_paginator("get_parameters_by_path").paginate(Path=path, Recursive=True):
        for parameter in page.get("Parameters", []):
            part = parameter["Name"][len(path):].split("/")[0]
            if _VERSION.match(part):
                versions.add(part)
    return sorted(versions, key=_key)

"""ebs-access-mode-supported: a claim on an EBS StorageClass asks only for access modes the EBS CSI driver serves.

The driver accepts SINGLE_NODE_WRITER (ReadWriteOnce; ReadWriteOncePod maps onto it) and
MULTI_NODE_MULTI_WRITER (ReadWriteMany) only for io2 volumes in Block mode (EBS Multi-Attach).
ReadOnlyMany maps to MULTI_NODE_READER_ONLY, which the driver rejects: the claim stays Pending.
A model volume shared by several replicas therefore needs one volume per pod (a generic ephemeral
volume or StatefulSet volumeClaimTemplates restored from the snapshot), not one RWX/ROX claim.

Claims are read from PersistentVolumeClaims, StatefulSet volumeClaimTemplates and generic ephemeral
volumes in pod templates; the StorageClass is `storageClassName`, or the stack's default class.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ..base import EnforcementLevel, ReportViolation, stack_policy
from ..inventory import POD_TEMPLATE_PATHS, as_list, as_str_map, get

STORAGE_CLASS = "kubernetes:storage.k8s.io/v1:StorageClass"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
STATEFUL_SET = "kubernetes:apps/v1:StatefulSet"

# The EBS CSI driver, and the in-tree EBS plugin whose volumes CSI migration hands to it.
# Source: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/docs/parameters.md
# Source: https://kubernetes.io/docs/concepts/storage/volumes/#awselasticblockstore-csi-migration
EBS_PROVISIONERS = ("ebs.csi.aws.com", "kubernetes.io/aws-ebs")
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"

# Access modes the driver accepts (isValidCapability) and the multi-attach rule.
# Source: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/pkg/driver/controller.go
# Source: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/docs/multi-attach.md
SINGLE_NODE_MODES = ("ReadWriteOnce", "ReadWriteOncePod")
MULTI_ATTACH_MODE = "ReadWriteMany"
MULTI_ATTACH_VOLUME_TYPE = "io2"
MULTI_ATTACH_VOLUME_MODE = "Block"



@dataclass(frozen=True)
class _Claim:
    where: str
    urn: str
    spec: Any


@dataclass(frozen=True)
class _Class:
    name: str
    provisioner: str
    volume_type: str | None
    default: bool


def _claims(resources: list[Any]) -> Iterator[_Claim]:
    for r in resources:
        name = str(get(r.props, "metadata", "name", default=r.name))
        if r.resource_type == PVC:
            yield _Claim(f"PersistentVolumeClaim '{name}'", r.urn, get(r.props, "spec", default={}))
        if r.resource_type == STATEFUL_SET:
            for tpl in as_list(get(r.props, "spec", "volumeClaimTemplates")):
                claim = get(tpl, "metadata", "name", default="?")
                yield _Claim(f"StatefulSet '{name}' volumeClaimTemplate '{claim}'", r.urn, get(tpl, "spec", default={}))
        path = POD_TEMPLATE_PATHS.get(r.resource_type)
        if path is None:
            continue
        pod = get(r.props, *path) if path else r.props
        for volume in as_list(get(pod, "spec", "volumes")):
            template = get(volume, "ephemeral", "volumeClaimTemplate")
            if template is not None:
                kind = r.resource_type.rsplit(":", 1)[-1]
                yield _Claim(f"{kind} '{name}' ephemeral volume '{get(volume, 'name', default='?')}'", r.urn,
                             get(template, "spec", default={}))


def _classes(resources: list[Any]) -> dict[str, _Class]:
    out: dict[str, _Class] = {}
    for r in resources:
        if r.resource_type != STORAGE_CLASS:
            continue
        name = str(get(r.props, "metadata", "name", default=r.name))
        annotations = as_str_map(get(r.props, "metadata", "annotations"))
        volume_type = get(r.props, "parameters", "type")
        out[name] = _Class(name, str(get(r.props, "provisioner", default="")),
                           str(volume_type).lower() if volume_type is not None else None,
                           annotations.get(DEFAULT_CLASS_ANNOTATION) == "true")
    return out


def _judge(claim: _Claim, sc: _Class) -> list[str]:
    out: list[str] = []
    modes = [str(m) for m in as_list(get(claim.spec, "accessModes"))]
    volume_mode = str(get(claim.spec, "volumeMode", default="Filesystem"))
    what = f"{claim.where} on EBS StorageClass '{sc.name}' ({sc.provisioner}, type {sc.volume_type or 'gp3'})"
    for mode in modes:
        if mode in SINGLE_NODE_MODES:
            continue
        if mode == "ReadOnlyMany":
            out.append(
                f"{what} asks for ReadOnlyMany, which the EBS CSI driver rejects (MULTI_NODE_READER_ONLY is not a "
                "supported capability), so the claim never binds. Fix: accessModes: [ReadWriteOnce] and give each "
                "replica its own volume (a generic ephemeral volume or StatefulSet volumeClaimTemplates restored from "
                "the snapshot)."
            )
        elif mode == MULTI_ATTACH_MODE:
            if sc.volume_type == MULTI_ATTACH_VOLUME_TYPE and volume_mode == MULTI_ATTACH_VOLUME_MODE:
                continue
            out.append(
                f"{what} asks for ReadWriteMany with volumeMode {volume_mode}; EBS serves ReadWriteMany only through "
                f"Multi-Attach of {MULTI_ATTACH_VOLUME_TYPE} volumes in {MULTI_ATTACH_VOLUME_MODE} mode. Fix: "
                "accessModes: [ReadWriteOnce] with one volume per pod (or an io2 StorageClass and volumeMode: Block "
                "with application-level I/O fencing)."
            )
        else:
            out.append(f"{what} asks for access mode {mode!r}, which is not a Kubernetes access mode. Fix: "
                       "ReadWriteOnce or ReadWriteOncePod.")
    return out


def validate(args: Any, report_violation: ReportViolation) -> None:
    resources = list(args.resources)
    classes = _classes(resources)
    default = next((c for c in classes.values() if c.default), None)
    for claim in _claims(resources):
        class_name = get(claim.spec, "storageClassName")
        if class_name == "":
            continue  # explicitly no class: statically bound, not provisioned
        sc = classes.get(str(class_name)) if class_name is not None else default
        if sc is None or sc.provisioner not in EBS_PROVISIONERS:
            continue
        for message in _judge(claim, sc):
            report_violation(message, claim.urn)


POLICY = stack_policy(
    "ebs-access-mode-supported",
    "A claim on an ebs.csi.aws.com StorageClass asks only for ReadWriteOnce or ReadWriteOncePod (ReadWriteMany only "
    "for io2 in Block mode).",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
    reads=("kubernetes:core/v1:PersistentVolumeClaim", "kubernetes:storage.k8s.io/v1:StorageClass",
           "kubernetes:apps/v1:StatefulSet"),
)

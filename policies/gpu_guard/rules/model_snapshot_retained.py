"""model-snapshot-retained: a VolumeSnapshotContent bound to a pre-existing snapshot has `deletionPolicy: Retain`.

With `Retain` the EBS snapshot survives whatever happens to the Kubernetes object, so the Pulumi option
`protect` is not needed for the snapshot's safety: its absence is reported by the advisory twin
`model-snapshot-retained-protect`, never as a mandatory violation (the contract in POLICIES.md asks for Retain).

With `Delete`, deleting the VolumeSnapshot / VolumeSnapshotContent (e.g. `pulumi destroy`) makes the
CSI driver delete the EBS snapshot itself: the golden model snapshot is gone. The upstream
snapshot-import example uses `Delete`, so copying it is the usual way to lose the snapshot.

Sources:
- VolumeSnapshotContent deletionPolicy (Delete removes the underlying storage snapshot, Retain keeps it):
  https://kubernetes.io/docs/concepts/storage/volume-snapshots/#delete
- The resource options the engine sends a resource policy: protect among them, retainOnDelete not
  (pulumi/pulumi pkg/resource/analyzer/analyzer_plugin.go, marshalResourceOptions; tools/engine/view.py).
  So `protect` is judged here (advisory) and `retainOnDelete` by tests/components/test_inference.py.
  https://www.pulumi.com/docs/iac/concepts/options/protect/
- Pre-provisioned snapshot import example:
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/tree/master/examples/kubernetes/snapshot/manifests/snapshot-import
"""

from __future__ import annotations

from typing import Any

from ..base import EnforcementLevel, ReportViolation, resource_policy
from ..inventory import get

# Source: https://github.com/kubernetes-csi/external-snapshotter/blob/v8.6.0/client/config/crd/snapshot.storage.k8s.io_volumesnapshotcontents.yaml
#         (spec.deletionPolicy enum Delete | Retain)
RETAIN = "Retain"


def _imported(args: Any) -> tuple[str, Any, Any, Any] | None:
    """(name, snapshot handle, driver, deletionPolicy) of a content bound to a pre-existing snapshot, else None."""
    rtype = args.resource_type
    if not (rtype.startswith("kubernetes:snapshot.storage.k8s.io/") and rtype.endswith(":VolumeSnapshotContent")):
        return None
    handle = get(args.props, "spec", "source", "snapshotHandle")
    if handle is None:
        return None  # dynamically created from a volume: its lifecycle follows the VolumeSnapshot
    name = get(args.props, "metadata", "name", default=args.name)
    return name, handle, get(args.props, "spec", "driver", default="?"), get(args.props, "spec", "deletionPolicy")


def validate_protect(args: Any, report_violation: ReportViolation) -> None:
    """Advisory: a retained content without `protect` keeps the snapshot but not the object."""
    found = _imported(args)
    if found is None:
        return
    name, handle, driver, policy = found
    if str(policy) == RETAIN and not args.opts.protect:
        report_violation(
            f"VolumeSnapshotContent '{name}' binds the pre-existing snapshot {handle} ({driver}) without the "
            "Pulumi option protect: deletionPolicy Retain keeps the EBS snapshot, but a `pulumi destroy` or a "
            "replacement deletes the Kubernetes object, and the next deploy must bind the snapshot again. Fix: "
            "protect=True and retain_on_delete=True on the resource.",
            args.urn,
        )


def validate(args: Any, report_violation: ReportViolation) -> None:
    found = _imported(args)
    if found is None:
        return
    name, handle, driver, policy = found
    if str(policy) == RETAIN:
        return
    state = "unset" if policy is None else repr(policy)
    report_violation(
        f"VolumeSnapshotContent '{name}' binds the pre-existing snapshot {handle} ({driver}) with deletionPolicy "
        f"{state}; deleting the stack would delete that snapshot. Fix: spec.deletionPolicy: Retain (and "
        "retainOnDelete on the Pulumi resource).",
        args.urn,
    )


POLICY = resource_policy(
    "model-snapshot-retained",
    "A VolumeSnapshotContent bound to a pre-existing EBS snapshot has deletionPolicy Retain.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)
resource_policy(
    "model-snapshot-retained-protect",
    "Advisory twin of model-snapshot-retained: a retained VolumeSnapshotContent also carries the Pulumi option "
    "protect.",
    validate_protect,
    enforcement=EnforcementLevel.ADVISORY,
    companion_of="model-snapshot-retained",
)

"""model-snapshot-retained: a VolumeSnapshotContent bound to a pre-existing snapshot has `deletionPolicy: Retain`
and is protected.

With `Delete`, deleting the VolumeSnapshot / VolumeSnapshotContent (e.g. `pulumi destroy`) makes the
CSI driver delete the EBS snapshot itself: the golden model snapshot is gone. The upstream
snapshot-import example uses `Delete`, so copying it is the usual way to lose the snapshot.

Sources:
- VolumeSnapshotContent deletionPolicy (Delete removes the underlying storage snapshot, Retain keeps it):
  https://kubernetes.io/docs/concepts/storage/volume-snapshots/#delete
- The resource options the engine sends a resource policy: protect among them, retainOnDelete not
  (pulumi/pulumi pkg/resource/analyzer/analyzer_plugin.go, marshalResourceOptions; tools/engine/view.py).
  So `protect` is judged here and `retainOnDelete` by tests/components/test_inference.py.
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


def validate(args: Any, report_violation: ReportViolation) -> None:
    rtype = args.resource_type
    if not (rtype.startswith("kubernetes:snapshot.storage.k8s.io/") and rtype.endswith(":VolumeSnapshotContent")):
        return
    handle = get(args.props, "spec", "source", "snapshotHandle")
    if handle is None:
        return  # dynamically created from a volume: its lifecycle follows the VolumeSnapshot
    policy = get(args.props, "spec", "deletionPolicy")
    name = get(args.props, "metadata", "name", default=args.name)
    driver = get(args.props, "spec", "driver", default="?")
    if str(policy) == RETAIN:
        if not args.opts.protect:
            report_violation(
                f"VolumeSnapshotContent '{name}' binds the pre-existing snapshot {handle} ({driver}) without the "
                "Pulumi option protect; a `pulumi destroy` or a replacement would delete the object. Fix: "
                "protect=True and retain_on_delete=True on the resource.",
                args.urn,
            )
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
    "A VolumeSnapshotContent bound to a pre-existing EBS snapshot has deletionPolicy Retain and is protected.",
    validate,
    enforcement=EnforcementLevel.MANDATORY,
)

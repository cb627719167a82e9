"""The model volume of an inference service: an EBS snapshot restored into one gp3 volume per replica.

Why one volume per replica, and why generic ephemeral volumes:
- An EBS volume attaches to one node. `ReadOnlyMany` is rejected by the EBS CSI driver, and
  `ReadWriteMany` exists only for io2 Block multi-attach in one zone; replicas spread over zones and
  nodes, so each replica restores its own volume from the snapshot.
- Generic ephemeral volumes (a `volumeClaimTemplate` inside the pod) give each pod its own PVC, created
  with the pod and deleted with it. That fits a Deployment that KEDA scales: a replica removed on scale-in
  or scale-to-zero stops paying for its volume at once, a new replica restores the current snapshot,
  and a rolling update to a new snapshot replaces volumes pod by pod. StatefulSet claim templates would
  keep a PVC per ordinal (until `persistentVolumeClaimRetentionPolicy` deletes it) and pin each
  replica's identity, which a stateless model server does not need.
- Every restore reads the snapshot: without Fast Snapshot Restore the blocks are fetched lazily from S3
  on first read, so a multi-GiB model loads at a fraction of the volume's speed. `fastSnapshotRestore`
  enables FSR for the snapshot in every zone the service's pools use (billed per snapshot and zone per
  hour while enabled, whether or not anything restores). `volumeInitializationRate` instead asks EBS to
  fill each new volume at a fixed 100-300 MiB/s (billed per restore, by the snapshot data initialized):
  cheaper for a service that scales out rarely, FSR for one that scales often or from zero. Worked cost:
  FSR is USD 0.75 per snapshot per zone per hour in us-east-1, so one snapshot in prod's three zones is
  3 x 730 h x 0.75 = about USD 1,640 a month while enabled; the initialization rate costs nothing while idle
  and is paid per GiB each time a volume is restored (see the pricing page for the region's rate).

Sources:
- EBS CSI access modes: https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/v1.64.0/pkg/driver/controller.go
  (isValidCapability: SINGLE_NODE_WRITER, and MULTI_NODE_MULTI_WRITER only for Block volumes)
- Generic ephemeral volumes: https://kubernetes.io/docs/concepts/storage/ephemeral-volumes/#generic-ephemeral-volumes
- Pre-provisioned snapshots (VolumeSnapshotContent with snapshotHandle, then a VolumeSnapshot bound to it):
  https://kubernetes.io/docs/concepts/storage/volume-snapshots/#pre-provisioned-volume-snapshot
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/tree/master/examples/kubernetes/snapshot/manifests/snapshot-import
- Fast Snapshot Restore: https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fast-snapshot-restore.html
- Volume initialization rate: https://docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html and the
  StorageClass parameter `volumeInitializationRate`:
  https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md
- Pricing (FSR per DSU-hour, initialization per GiB): https://aws.amazon.com/ebs/pricing/
- StorageClass parameters (`type`, `encrypted`, `throughput`, `iops`, `kmsKeyId`): same parameters.md
  (kubernetes-sigs/aws-ebs-csi-driver @ v1.64.0 docs/parameters.md:15-18); WaitForFirstConsumer creates the volume
  in the zone of the node the pod lands on: https://kubernetes.io/docs/concepts/storage/storage-classes/#volume-binding-mode
"""

from __future__ import annotations

from typing import Any

from components.config import InferenceServiceConfig, ModelVolumeConfig
from components.inference.workload import MODEL_VOLUME, service_labels

EBS_CSI_DRIVER = "ebs.csi.aws.com"
SNAPSHOT_API = "snapshot.storage.k8s.io/v1"


def storage_class_name(config: InferenceServiceConfig) -> str:
    return f"{config.name}-model-gp3"


def snapshot_name(config: InferenceServiceConfig, volume: ModelVolumeConfig) -> str:
    """Named after the snapshot: a new snapshot gets new objects, so the old ones serve until the roll-out ends."""
    return f"{config.name}-{volume.snapshot_id}"


def storage_class(config: InferenceServiceConfig, volume: ModelVolumeConfig) -> dict[str, Any]:
    """Encrypted gp3, bound where the pod is scheduled; `Delete`: a replica's restored copy goes with it.

    `throughput` and `iops` are set, never left to gp3's 125 MiB/s: they are sized to the snapshot
    (components/inference/budget.py), and the config refuses a startup budget that cannot cover the read at
    that rate. `kmsKeyId`: the customer-managed key of the snapshot, when the stack names one.
    """
    parameters = {"type": "gp3", "encrypted": "true", "csi.storage.k8s.io/fstype": "ext4",
                  "throughput": str(volume.throughput), "iops": str(volume.provisioned_iops)}
    if volume.kms_key_arn is not None:
        parameters["kmsKeyId"] = volume.kms_key_arn
    if volume.volume_initialization_rate is not None:
        parameters["volumeInitializationRate"] = str(volume.volume_initialization_rate)
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": storage_class_name(config), "labels": service_labels(config)},
        "provisioner": EBS_CSI_DRIVER,
        "parameters": parameters,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "WaitForFirstConsumer",
        "allowVolumeExpansion": True,
    }


def snapshot_content(config: InferenceServiceConfig, volume: ModelVolumeConfig) -> dict[str, Any]:
    """The pre-provisioned content bound to the existing EBS snapshot; `Retain` keeps the snapshot on delete."""
    name = snapshot_name(config, volume)
    return {
        "apiVersion": SNAPSHOT_API,
        "kind": "VolumeSnapshotContent",
        "metadata": {"name": name, "labels": service_labels(config)},
        "spec": {
            "deletionPolicy": "Retain",
            "driver": EBS_CSI_DRIVER,
            "source": {"snapshotHandle": volume.snapshot_id},
            "volumeSnapshotRef": {"name": name, "namespace": config.namespace},
        },
    }


def volume_snapshot(config: InferenceServiceConfig, volume: ModelVolumeConfig) -> dict[str, Any]:
    name = snapshot_name(config, volume)
    return {
        "apiVersion": SNAPSHOT_API,
        "kind": "VolumeSnapshot",
        "metadata": {"name": name, "namespace": config.namespace, "labels": service_labels(config)},
        "spec": {"source": {"volumeSnapshotContentName": name}},
    }


def ephemeral_volume(config: InferenceServiceConfig, volume: ModelVolumeConfig) -> dict[str, Any]:
    """The pod volume: each replica's own PVC restored from the VolumeSnapshot (ReadWriteOnce: EBS)."""
    return {
        "name": MODEL_VOLUME,
        "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"labels": service_labels(config)},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": storage_class_name(config),
                "resources": {"requests": {"storage": f"{volume.size_gib}Gi"}},
                "dataSource": {"apiGroup": "snapshot.storage.k8s.io", "kind": "VolumeSnapshot",
                               "name": snapshot_name(config, volume)},
            },
        }},
    }

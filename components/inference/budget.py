"""The numbers a model volume and its Deployment derive from the config: gp3 sizing, read time, timeouts.

Pure integer functions, tested directly (tests/components/test_budget.py), used by the config check
(components/config/serving.py: it refuses a `startupSeconds` that cannot cover the read) and by the
manifests and resource options (model_volume.py, service.py). Nothing here imports the rest of the
package, so the config may import it without a circle.

gp3 (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html#gp3-performance): 3,000 IOPS and
125 MiB/s included at any size; up to 80,000 IOPS at most 500 IOPS per GiB; up to 2,000 MiB/s at most
0.25 MiB/s per provisioned IOPS (so IOPS >= 4 x MiB/s). The EBS CSI driver passes the StorageClass
parameters `throughput` (MiB/s, default 125) and `iops` to CreateVolume
(kubernetes-sigs/aws-ebs-csi-driver @ v1.64.0 docs/parameters.md:15-16). The driver's own gp3 bounds are the
3,000 IOPS floor and 500 IOPS per GiB (pkg/cloud/cloud.go:81-82, applied at :3025-3027); its ceiling it reads from a
CreateVolume dry run, falling back to gp3FallbackMaxIOPS = 16,000 (:80, :3012-3013) only when that call fails, so
the 80,000 ceiling above is AWS's (general-purpose.html), not a constant of the driver.

How fast a restored volume can be read:
- With Fast Snapshot Restore, at the volume's provisioned throughput, up to 1,000 MiB/s ("Volumes provisioned
  with performance up to 64,000 IOPS and 1,000 MiB/s throughput receive the full performance benefit",
  https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fast-snapshot-restore.html).
- With a provisioned volume initialization rate (100-300 MiB/s), at that rate
  (https://docs.aws.amazon.com/ebs/latest/userguide/initalize-volume.html), even where FSR is enabled: the rate
  takes the place of FSR for that volume (restore_rate).
  FSR has a quota: volume-creation credits, one bucket per snapshot per Availability Zone, of MIN(10, 1024 /
  snapshot GiB) credits (at least 1), refilled at that many per hour; each volume created from the snapshot in
  that zone spends one, and a volume created with the bucket empty gets no FSR and restores lazily
  (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fast-snapshot-restore.html, "Volume creation credits").
  prod's 150 GiB snapshot: 6 credits per zone per hour. The budget plans every replica at the FSR rate, so a
  burst of new replicas beyond the bucket in one zone reads at the lazy rate below and may outlast
  `startupSeconds` (docs/runbook.md entry 9).
- Otherwise blocks load lazily from S3 at a rate AWS documents only as one that "fluctuates" (same page).
- Never faster than the instance's own EBS bandwidth (`instance_read_seconds`). Each EC2 instance type has a dedicated
  EBS bandwidth, listed in Mbps and MB/s (Mbps / 8) in AWS's "Amazon EBS-optimized instance types" table
  (https://docs.aws.amazon.com/ec2/latest/instancetypes/gp.html and ac.html, "EBS specifications"): a baseline, and on
  the smaller sizes a maximum they burst to "for 30 minutes at least once every 24 hours" (EBS_BURST_SECONDS). The
  matrix holds them per GPU instance size (instance_families[].ebs_mbps); MiB/s = Mbps x 10^6 / 8 / 2^20
  (mbps_to_mibps). A g5.xlarge's 700 Mbps baseline is 83 MiB/s, its 3,500 Mbps burst 417 MiB/s: below prod's 512.
  The budget plans it at LAZY_MIBPS = 100 MiB/s, the slowest rate AWS documents for filling a restored
  volume (the provisioned initialization rate's floor); a stack that needs a guarantee sets
  `volumeInitializationRate` or `fastSnapshotRestore`.
"""

from __future__ import annotations

import math

MIB_PER_GIB = 1024
GP3_BASE_MIBPS, GP3_MAX_MIBPS = 125, 2000
GP3_BASE_IOPS, GP3_MAX_IOPS = 3000, 80000
GP3_IOPS_PER_GIB = 500
GP3_IOPS_PER_MIBPS = 4  # at most 0.25 MiB/s per provisioned IOPS
FSR_MAX_MIBPS = 1000
INIT_MAX_MIBPS = 300  # the provisioned volume initialization rate's ceiling (initalize-volume.html; 100-300)
LAZY_MIBPS = 100
# The default throughput reads the whole snapshot in this long; capped where FSR still gives full speed.
TARGET_READ_SECONDS = 300
DEFAULT_MAX_MIBPS = FSR_MAX_MIBPS
# Startup budget = the read time, half of it again as margin (the rate is a plan, not a promise), and
# SERVER_START_SECONDS for Triton to start and load the model into GPU memory once it is read (an allowance,
# not a measurement).
SERVER_START_SECONDS = 60
# A new pod before its startup probe runs: a GPU node launched and joined (Karpenter, or the managed group),
# the GPU Operator's driver on an Ubuntu node, and a pull of the multi-GiB Triton image. An allowance.
POD_START_SECONDS = 900
# terraform-provider-aws's FastSnapshotRestore waits through `enabling` and `optimizing` to `enabled` under a
# 10-minute default create timeout (internal/service/ec2/ebs_fast_snapshot_restore.go:30, wait.go
# waitFastSnapshotRestoreCreated); AWS documents optimizing at 60 minutes per TiB
# (https://docs.aws.amazon.com/ebs/latest/userguide/ebs-fast-snapshot-restore.html, "Fast snapshot restore states").
FSR_ENABLING_MINUTES = 10
FSR_OPTIMIZING_MINUTES_PER_TIB = 60


def default_throughput(snapshot_gib: int, size_gib: int) -> int:
    """MiB/s that read the snapshot in TARGET_READ_SECONDS, within gp3's bounds for a volume of `size_gib`."""
    wanted = math.ceil(snapshot_gib * MIB_PER_GIB / TARGET_READ_SECONDS)
    ceiling = min(DEFAULT_MAX_MIBPS, max_iops(size_gib) // GP3_IOPS_PER_MIBPS)
    return max(GP3_BASE_MIBPS, min(wanted, ceiling))


def max_iops(size_gib: int) -> int:
    """The most IOPS a gp3 volume of `size_gib` may have (never below the included 3,000)."""
    return max(GP3_BASE_IOPS, min(GP3_MAX_IOPS, size_gib * GP3_IOPS_PER_GIB))


def default_iops(throughput: int, size_gib: int) -> int:
    """The fewest IOPS that carry `throughput` (0.25 MiB/s per IOPS), at least the included 3,000."""
    return max(GP3_BASE_IOPS, min(max_iops(size_gib), throughput * GP3_IOPS_PER_MIBPS))


def gp3_problem(throughput: int, iops: int, size_gib: int) -> str | None:
    """Why gp3 refuses this combination (CreateVolume fails and every replica stays Pending), or None."""
    if iops > max_iops(size_gib):
        return (f"{iops} IOPS exceed gp3's {GP3_IOPS_PER_GIB} IOPS per GiB for a {size_gib} GiB volume "
                f"({max_iops(size_gib)})")
    if throughput * GP3_IOPS_PER_MIBPS > iops:
        return (f"{throughput} MiB/s needs at least {throughput * GP3_IOPS_PER_MIBPS} IOPS on gp3 "
                f"(0.25 MiB/s per IOPS), not {iops}")
    return None


def restore_rate(throughput: int, fast_snapshot_restore: bool, initialization_rate: int | None) -> tuple[int, str]:
    """(MiB/s at which a new replica reads its restored volume, how that rate is known).

    The initialization rate is tested before FSR: when CreateVolume is given a VolumeInitializationRate for a
    snapshot that has Fast Snapshot Restore enabled, the volume is initialized at that rate, not with FSR
    (https://docs.aws.amazon.com/AWSEC2/latest/APIReference/API_CreateVolume.html, VolumeInitializationRate),
    and the EBS CSI driver passes the StorageClass's rate to CreateVolume whenever it is set
    (kubernetes-sigs/aws-ebs-csi-driver @ v1.64.0 pkg/cloud/cloud.go:930-931).
    """
    if initialization_rate is not None:
        return min(throughput, initialization_rate), "the provisioned volume initialization rate"
    if fast_snapshot_restore:
        return min(throughput, FSR_MAX_MIBPS), "Fast Snapshot Restore at the volume's throughput"
    return min(throughput, LAZY_MIBPS), "lazy loading from S3, planned at 100 MiB/s"


def read_seconds(snapshot_gib: int, rate_mibps: int) -> int:
    return math.ceil(snapshot_gib * MIB_PER_GIB / rate_mibps)


def startup_needed(snapshot_gib: int, rate_mibps: int) -> int:
    """The startup budget that covers reading the snapshot: read time x 1.5 + SERVER_START_SECONDS."""
    return startup_for_read(read_seconds(snapshot_gib, rate_mibps))


# A smaller size bursts to its maximum EBS bandwidth "for 30 minutes at least once every 24 hours, after which they
# revert to their baseline performance": AWS's EBS-optimized table, as the archived EC2 user guide holds it,
# https://github.com/awsdocs/amazon-ec2-user-guide/blob/e3707c431483ec0ffffcabebd36cf799ba682cd0/doc_source/ebs-optimized.md#L633
EBS_BURST_SECONDS = 30 * 60
BYTES_PER_MBPS = 1_000_000 // 8  # AWS's megabit per second: 10^6 bits
BYTES_PER_MIB = 1024 * 1024


def mbps_to_mibps(mbps: int) -> float:
    """An EBS bandwidth AWS lists in Mbps (10^6 bit/s) in MiB/s (2^20 byte/s): 3,500 Mbps -> 417.2 MiB/s."""
    return mbps * BYTES_PER_MBPS / BYTES_PER_MIB


def instance_read_seconds(snapshot_gib: int, rate_mibps: int, baseline_mbps: int, maximum_mbps: int) -> int:
    """Seconds to read the snapshot at the volume's rate through the instance's EBS bandwidth.

    The read runs at min(volume rate, instance maximum) for the first EBS_BURST_SECONDS where the instance bursts
    (maximum above baseline), then at min(volume rate, instance baseline); a size without burst reads at
    min(volume rate, baseline) throughout."""
    total = snapshot_gib * MIB_PER_GIB
    steady = min(float(rate_mibps), mbps_to_mibps(baseline_mbps))
    burst = min(float(rate_mibps), mbps_to_mibps(maximum_mbps))
    if maximum_mbps > baseline_mbps:
        in_burst = burst * EBS_BURST_SECONDS
        if total <= in_burst:
            return math.ceil(total / burst)
        return math.ceil(EBS_BURST_SECONDS + (total - in_burst) / steady)
    return math.ceil(total / steady)


def startup_for_read(read_s: int) -> int:
    """The startup budget that covers a read of `read_s` seconds: x 1.5 + SERVER_START_SECONDS."""
    return math.ceil(read_s * 3 / 2) + SERVER_START_SECONDS


def minutes(seconds: int) -> str:
    """A Pulumi custom timeout (a Go duration) in whole minutes, rounded up."""
    return f"{math.ceil(seconds / 60)}m"


def deployment_timeouts(startup_seconds: int, max_replicas: int) -> tuple[str, str]:
    """(create, update) for the Deployment's await.

    pulumi-kubernetes waits for a Deployment's replicas to be ready under a 10-minute default
    (pulumi/pulumi-kubernetes @ v4.32.0 provider/pkg/await/deployment.go:105, :206; customTimeouts replace it).
    Create: one pod from nothing, POD_START_SECONDS + the whole startup budget (which covers the read).
    Update: the rolling update (maxSurge 1, maxUnavailable 0) starts the replicas one after the other, so
    up to `max_replicas` times that.
    """
    one = POD_START_SECONDS + startup_seconds
    return minutes(one), minutes(one * max(1, max_replicas))


def fsr_create_timeout(snapshot_gib: int) -> str:
    """FSR_ENABLING_MINUTES + 60 minutes per TiB of optimizing, e.g. 150 GiB -> 10 + 9 = 19m."""
    optimizing = math.ceil(snapshot_gib * FSR_OPTIMIZING_MINUTES_PER_TIB / MIB_PER_GIB)
    return f"{FSR_ENABLING_MINUTES + optimizing}m"

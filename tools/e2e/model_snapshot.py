"""Without E2E_SNAPSHOT_ID, the run makes its own model snapshot: the tiny Triton model in tools/e2e/model/
written into an ext4 filesystem image (`mkfs.ext4 -d`, e2fsprogs, no root needed), and that image written
straight into a new EBS snapshot with the EBS direct APIs, block by block, tagged with the run: no instance and
no volume to clean up. The sweeper deletes it with the run; a user's E2E_SNAPSHOT_ID is never tagged.

Sources: https://docs.aws.amazon.com/ebs/latest/APIReference/API_StartSnapshot.html (Tags, VolumeSize in GiB),
https://docs.aws.amazon.com/ebs/latest/APIReference/API_PutSnapshotBlock.html (512 KiB blocks, SHA256 checksum,
Base64), https://docs.aws.amazon.com/ebs/latest/APIReference/API_CompleteSnapshot.html (ChangedBlocksCount);
mkfs.ext4 -d: https://man7.org/linux/man-pages/man8/mke2fs.8.html.
"""

from __future__ import annotations

import base64
import hashlib
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

BLOCK = 512 * 1024
MODEL_DIR = Path(__file__).resolve().parent / "model"
IMAGE_MIB = 64
SNAPSHOT_GIB = 1


def build_image(model_dir: Path, image: Path, size_mib: int = IMAGE_MIB) -> Path:
    mkfs = shutil.which("mkfs.ext4")
    if mkfs is None:
        raise RuntimeError("mkfs.ext4 is not installed (e2fsprogs: apt-get install e2fsprogs), or set "
                           "E2E_SNAPSHOT_ID to a snapshot that holds a Triton model repository")
    with image.open("wb") as handle:
        handle.truncate(size_mib * 1024 * 1024)
    subprocess.run([mkfs, "-q", "-F", "-L", "models", "-d", str(model_dir), str(image)], check=True,
                   capture_output=True, text=True)
    return image


def blocks(image: Path) -> Iterator[tuple[int, bytes]]:
    """(index, data) of every block that is not all zeros (unwritten blocks of a snapshot read as zeros)."""
    with image.open("rb") as handle:
        index = 0
        while chunk := handle.read(BLOCK):
            if chunk.strip(b"\0"):
                yield index, chunk.ljust(BLOCK, b"\0")
            index += 1


def upload(ebs: Any, image: Path, tags: dict[str, str], description: str, size_gib: int = SNAPSHOT_GIB) -> str:
    snapshot = ebs.start_snapshot(VolumeSize=size_gib, Description=description, Timeout=60,
                                  Tags=[{"Key": k, "Value": v} for k, v in tags.items()])["SnapshotId"]
    count = 0
    for index, data in blocks(image):
        checksum = base64.b64encode(hashlib.sha256(data).digest()).decode()
        ebs.put_snapshot_block(SnapshotId=snapshot, BlockIndex=index, BlockData=data, DataLength=BLOCK,
                               Checksum=checksum, ChecksumAlgorithm="SHA256")
        count += 1
    ebs.complete_snapshot(SnapshotId=snapshot, ChangedBlocksCount=count)
    return str(snapshot)

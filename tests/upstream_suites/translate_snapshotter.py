"""Turn external-snapshotter's CEL test cases (client/hack/cel-tests, run by client/hack/run-cel-tests.sh) into
the fixture `external-snapshotter.yaml`, for the kinds this stack pins (VolumeSnapshot, VolumeSnapshotContent,
VolumeSnapshotClass).

What run-cel-tests.sh asserts (kubernetes-csi/external-snapshotter@v8.6.0:client/hack/run-cel-tests.sh):
- every `*.yaml` is created with `kubectl apply --dry-run=server` (lines 25-55, 101-103): it must fail, with
  the text of `<case>.err` in the output, when that file exists, and succeed otherwise;
- every `*.pre.yaml` is applied, then its `*.post.yaml` (lines 57-97, 105-107): the update must fail, with the
  text of `<case>.post.yaml.tx_err`, when that file exists, and succeed otherwise.

The objects are YAML already, as kubectl sends them: no Go serialization to translate.

    python -m tests.upstream_suites.translate_snapshotter /work/.mirror/kubernetes-csi+external-snapshotter/repo
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

REPO, TAG, ROOT = "kubernetes-csi/external-snapshotter", "v8.6.0", "client/hack/cel-tests"
KINDS = ("volumesnapshot", "volumesnapshotcontent", "volumesnapshotclass")
OUT = Path(__file__).with_name("external-snapshotter.yaml")


def _git(git_dir: str, *args: str) -> str:
    return subprocess.run(["git", "-C", git_dir, *args], check=True, capture_output=True, text=True).stdout


def _object(git_dir: str, path: str) -> dict[str, Any]:
    docs = [d for d in yaml.safe_load_all(_git(git_dir, "show", f"{TAG}:{path}")) if d]
    if len(docs) != 1:
        raise ValueError(f"{path}: {len(docs)} documents, expected one")
    return dict(docs[0])


def cases(git_dir: str) -> list[dict[str, Any]]:
    files = set(_git(git_dir, "ls-tree", "-r", "--name-only", TAG, ROOT).split())
    out: list[dict[str, Any]] = []
    for path in sorted(files):
        if path.split("/")[-2] not in KINDS or not path.endswith(".yaml"):
            continue
        err = f"{path}.err"
        case: dict[str, Any] = {"source": f"{REPO}@{TAG}:{path}:1", "name": f"create {path.rsplit('/', 1)[-1]}",
                                "object": _object(git_dir, path), "expect": "reject" if err in files else "accept"}
        if err in files:
            case["message"] = _git(git_dir, "show", f"{TAG}:{err}").strip()
        out.append(case)
        if path.endswith(".pre.yaml"):
            post = path.replace(".pre.yaml", ".post.yaml")
            tx_err = f"{post}.tx_err"
            case = {"source": f"{REPO}@{TAG}:{post}:1", "name": f"update {path.rsplit('/', 1)[-1]} -> post",
                    "old": _object(git_dir, path), "object": _object(git_dir, post),
                    "expect": "reject" if tx_err in files else "accept"}
            if tx_err in files:
                case["message"] = _git(git_dir, "show", f"{TAG}:{tx_err}").strip()
            out.append(case)
    return out


def main(git_dir: str) -> None:
    # kubectl apply validates strictly by default (--validate=strict: fieldValidation=Strict)
    doc = {"suite": f"{REPO}@{TAG}:{ROOT} (run by client/hack/run-cel-tests.sh)", "license": "Apache-2.0",
           "field_validation": "Strict",
           "translated_by": "tests/upstream_suites/translate_snapshotter.py", "cases": cases(git_dir)}
    OUT.write_text(yaml.safe_dump(doc, sort_keys=False, width=120), encoding="utf-8")
    print(f"{OUT}: {len(doc['cases'])} cases")


if __name__ == "__main__":
    main(sys.argv[1])

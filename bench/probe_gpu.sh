#!/usr/bin/env bash
# The GPU probe (components/probe/probe.py) on a real GPU, every scenario of docs/probe.md in one go.
#
#   bench/probe_gpu.sh CARRY OUT
#
# CARRY holds what the machine cannot download (built by bench/probe_carry.sh on a machine with PyPI):
#   site-13.0/  NVRTC 13.0 + CUDA runtime 13.0 from the pinned wheels (libnvrtc.so.13 xz-compressed)
#   site-<x.y>/ the CUDA runtime of each newer or older toolkit
#   img-<x.y>/  vadd.cubin + vadd.ptx built by `probe.py build` with that toolkit's NVRTC
# OUT receives nvidia-smi.txt, nvidia-smi-query.csv and results.jsonl (one line per scenario: its name,
# the command's exit status and the probe's JSON report). bench/probe_vs_matrix.py compares them with
# `tools.matrix check`.
set -u
carry=$1 out=$2
probe=$carry/probe.py; [ -f "$probe" ] || probe=components/probe/probe.py
lib=$carry/site-13.0/nvidia/cu13/lib
[ -f "$lib/libnvrtc.so.13" ] || xz -dc "$lib/libnvrtc.so.13.xz" > "$lib/libnvrtc.so.13"
nvidia-smi > "$out/nvidia-smi.txt"
nvidia-smi --query-gpu=index,name,driver_version,compute_cap --format=csv,noheader > "$out/nvidia-smi-query.csv"
driver=$(head -1 "$out/nvidia-smi-query.csv" | cut -d, -f3 | tr -d ' ')
branch=${driver%%.*}
scenario() {  # name site cuda driver [extra probe args...]
  local name=$1 site=$2 cuda=$3 pin=$4; shift 4
  local report rc
  report=$(PYTHONPATH="$carry/$site" python3 "$probe" check --pool h200 --driver "$pin" --cuda "$cuda" --json "$@" \
           2>"$out/stderr.tmp")
  rc=$?
  python3 -c 'import json,sys; r=sys.argv[4]; print(json.dumps({"scenario": sys.argv[1], "cuda": sys.argv[2], "rc": int(sys.argv[3]), "stderr": open(sys.argv[5]).read(), "report": json.loads(r) if r.strip() else None}))' \
    "$name" "$cuda" "$rc" "$report" "$out/stderr.tmp" >> "$out/results.jsonl"
  echo "$name: exit $rc"; cat "$out/stderr.tmp"
}
scenario right-pin site-13.0 13.0 "$driver"
scenario right-branch site-13.0 13.0 "$branch"
scenario wrong-pin-same-branch site-13.0 13.0 580.95.05
scenario wrong-pin-older-branch site-13.0 13.0 570.195.03
scenario right-pin-host-built site-13.0 13.0 "$driver" --image-dir "$carry/img-13.0"
for cuda in 12.8 13.2 13.5; do
  scenario "runtime-$cuda" "site-$cuda" "$cuda" "$driver" --image-dir "$carry/img-$cuda"
done
# The workload's runtime is 13.0, but a library in it ships PTX built by a newer toolkit (Triton-style).
for cuda in 13.2 13.5; do
  scenario "ptx-$cuda-on-runtime-13.0" site-13.0 13.0 "$driver" --code ptx --image-dir "$carry/img-$cuda"
done
uname -r > "$out/uname.txt"
rm -f "$out/stderr.tmp"

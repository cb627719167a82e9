#!/usr/bin/env bash
# Build the folder bench/probe_gpu.sh carries to a GPU machine that cannot reach PyPI:
#
#   bench/probe_carry.sh DIR
#
# The pinned NVRTC and runtime of CUDA 13.0 (components/probe/requirements/cuda-13.0.txt) for building on the
# GPU; the runtime of CUDA 12.8, 13.2 and 13.5 with the kernel each toolkit's NVRTC builds (here: NVRTC needs
# no GPU). libnvrtc.so.13 is xz-compressed (109 MB -> 32 MB) to fit a 64 MiB transfer.
set -eu
dir=$1
here=$(cd "$(dirname "$0")/.." && pwd)
wheels=$(mktemp -d)
download() { python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_12_x86_64 -d "$wheels" "$@"; }
mkdir -p "$dir"
cp "$here/components/probe/probe.py" "$here/bench/probe_gpu.sh" "$dir/"
for cuda in 13.0 12.8 13.2 13.5; do
  site=$(mktemp -d)
  if [ -f "$here/components/probe/requirements/cuda-$cuda.txt" ]; then
    download -r "$here/components/probe/requirements/cuda-$cuda.txt"
  else
    case $cuda in
      12.8) download nvidia-cuda-nvrtc-cu12==12.8.93 nvidia-cuda-runtime-cu12==12.8.90 ;;
      13.2) download nvidia-cuda-nvrtc==13.2.86 nvidia-cuda-runtime==13.2.86 ;;
      13.5) download nvidia-cuda-nvrtc==13.5.37 nvidia-cuda-runtime==13.5.37 ;;
    esac
  fi
  for wheel in "$wheels"/nvidia_cuda_*.whl; do python3 -m zipfile -e "$wheel" "$site"; done
  rm -f "$wheels"/*.whl
  PYTHONPATH=$site python3 "$here/components/probe/probe.py" build --cuda "$cuda" --arch 90 --out "$dir/img-$cuda"
  lib=$(dirname "$(find "$site" -name 'libcudart.so.1*' | head -1)")
  mkdir -p "$dir/site-$cuda/${lib#"$site"/}"
  cp "$lib"/libcudart.so.1* "$dir/site-$cuda/${lib#"$site"/}/"
  if [ "$cuda" = 13.0 ]; then
    cp "$lib"/libnvrtc-builtins.so.13.0 "$dir/site-13.0/${lib#"$site"/}/"
    xz -T1 -6 -c "$lib/libnvrtc.so.13" > "$dir/site-13.0/${lib#"$site"/}/libnvrtc.so.13.xz"
  fi
  rm -rf "$site"
done
rmdir "$wheels"
du -sh "$dir"

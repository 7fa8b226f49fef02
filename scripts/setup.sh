#!/usr/bin/env bash
# Installs every Debian 12 package clfilter needs (idempotent), then configures and builds.
# Usage: scripts/setup.sh [--deps-only] [build-dir]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
packages=(
  build-essential cmake pkg-config
  ocl-icd-opencl-dev ocl-icd-libopencl1 opencl-c-headers opencl-clhpp-headers clinfo
  pocl-opencl-icd
  libopenimageio-dev openimageio-tools libjpeg62-turbo-dev
  libboost-dev libvkfft-dev libpng-dev
  libvips-tools
  catch2
  clang libclang-rt-14-dev clang-format
  python3 python3-dev pybind11-dev
  python3-numpy python3-pytest python3-dask python3-distributed python3-skimage python3-opencv
  python3-pyopencl
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""; [ "$(id -u)" = 0 ] || sudo=sudo
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update
  $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps-only" ] && exit 0
build=${1:-"$root/build"}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j"$(nproc)"

#!/usr/bin/env bash
# README command 1: set up (packages + build), make a sample image, run clfilter on it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
mkdir -p "$root/out"
sample="$root/out/sample.exr"
if [ ! -f "$sample" ]; then
  # A 1920x1080 RGBA half-float test card: checkerboard with a soft gradient and noise.
  oiiotool --pattern checker:width=96:height=96:color1=0.9,0.8,0.7,1:color2=0.1,0.15,0.2,1 1920x1080 4 \
    --pattern fill:topleft=0,0,0,0:topright=0.3,0,0,0:bottomleft=0,0,0.3,0:bottomright=0.3,0.3,0.3,0 1920x1080 4 --add \
    --pattern noise:type=gaussian:mean=0:stddev=0.02 1920x1080 4 --add -d half -o "$sample"
fi
"$root/build/bin/clfilter" "$sample" "$root/out/sample_sobel.exr" --filter gaussian:sigma=1.5 --filter sobel --stats
echo "output: $root/out/sample_sobel.exr (view it with: iv, or oiiotool $root/out/sample_sobel.exr -o edges.png)"

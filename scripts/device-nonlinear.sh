#!/usr/bin/env bash
# On the GPU machine (after scripts/device-build.sh, or through scripts/device-run.sh): the
# non-linear filters beside the filters they are built from, then their references (cupyx,
# OpenCV's OpenCL path): docs/PERFORMANCE.md's non-linear table. Log: $out/nonlinear.txt.
set -uo pipefail
out=${OUT:-out/device}
export CLF_DEVICE=${CLF_DEVICE:-gpu}
{
  ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --filter median:ksize=3 \
    --filter median:ksize=5 --filter "morphology:op=dilate,ksize=3" \
    --filter "morphology:op=dilate,ksize=3,method=direct" --filter "morphology:op=dilate,ksize=7" \
    --filter "morphology:op=dilate,ksize=31" --filter "morphology:op=dilate,ksize=101" \
    --filter "morphology:op=dilate,ksize=31,method=direct" \
    --filter "morphology:op=dilate,shape=ellipse,ksize=15" \
    --filter "morphology:op=dilate,shape=ellipse,ksize=15,method=direct" \
    --filter sobel --filter laplacian:ksize=3 --filter gaussian:sigma=3 --filter unsharp:sigma=3 \
    --filter bilateral:d=9,sigma_color=75,sigma_space=75
  for channels in 1 3; do
    ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --type u8 --channels "$channels" \
      --filter median:ksize=3 --filter median:ksize=31 --filter "morphology:op=dilate,ksize=3" \
      --filter bilateral:d=9,sigma_color=75,sigma_space=75
  done
  python3 bench/nonlinear_reference.py --size 8192x8192
} 2>&1 | tee "$out/nonlinear.txt"

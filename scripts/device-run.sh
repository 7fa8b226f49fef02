#!/usr/bin/env bash
# On the GPU machine (a device run that carries .devdeps, see docs/DEVELOPERS.md): build without the
# CLI (no OpenImageIO there), run the test suite on the GPU, then the benchmarks. Logs under $OUT.
set -uo pipefail
out=${OUT:-out/device}
mkdir -p "$out"
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCLF_BUILD_CLI=OFF >"$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
cmake --build build-dev -j"$(nproc)" >"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
export CLF_DEVICE=${CLF_DEVICE:-gpu}
./build-dev/bin/clfilter-bench --smoke | head -2
(cd build-dev && ctest --output-on-failure) >"$out/ctest.log" 2>&1
grep -E "tests passed|Failed|Passed" "$out/ctest.log" | tail -12
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --json "$out/bench_8k.json" --trace "$out/trace_8k.json" | tee "$out/bench_8k.txt"
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 --filter "gaussian:sigma=2 + sobel + box:radius=1" | tee "$out/chain_8k.txt"
./build-dev/bin/clfilter-bench --scale --reps 5 | tee "$out/scale.txt"
./build-dev/bin/clfilter-bench --scale --reps 5 --filter "gaussian:sigma=2 + sobel" | tee -a "$out/scale.txt"
# cupyx.scipy.ndimage and torch on the same workloads (both installed on the GPU machine).
python3 bench/gpu_reference.py --size 8192x8192 --json "$out/gpu_reference_8k.json" | tee "$out/gpu_reference_8k.txt"
# The same streamed run from ordinary (pageable) host images, for comparison with pinned ones.
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --filter sobel:mode=x --pageable | tee "$out/pageable_8k.txt"
# Tile sweep for the tiled variant (the direct rows repeat as the control).
if [ "${CLF_TILE_SWEEP:-1}" = 1 ]; then
  for tile in 1024x4/256; do
    echo "== CLF_TILE=$tile"
    CLF_TILE=$tile ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 --filter sobel:mode=x \
      --filter "convolve:kernel=1,2,3,2,1;2,1,0,1,2;3,0,-9,0,3;2,1,0,1,2;1,2,3,2,-1" | grep -E "tiled"
  done | tee "$out/tile_sweep.txt"
fi

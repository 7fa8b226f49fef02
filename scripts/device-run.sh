#!/usr/bin/env bash
# On the GPU machine (a device run that carries .devdeps, see docs/DEVELOPERS.md): build without the
# CLI (no OpenImageIO there) or Python (scripts/device-python.sh), run the test suite on the GPU, then
# the benchmarks. Logs under $OUT.
set -uo pipefail
# At most 8 files come back from a device run: build.log, ctest.log, bench.txt (every table),
# nonlinear.txt and the JSON files.
source "$(dirname "$0")/device-build.sh"
./build-dev/bin/clfilter-bench --smoke | head -2
(cd build-dev && ctest --output-on-failure) >"$out/ctest.log" 2>&1
grep -E "tests passed|Failed|Passed" "$out/ctest.log" | tail -12
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --json "$out/bench_8k.json" --trace "$out/trace_8k.json" | tee "$out/bench.txt"
bash scripts/device-nonlinear.sh
# CLF_QUICK=1: only the 8192x8192 f32 table above (and the sweep below, if asked for).
if [ "${CLF_QUICK:-0}" != 1 ]; then
for shape in "8192x8192 4 u8" "8192x8192 4 f32" "3840x2160 1 f32" "3840x2160 4 u8" "3840x2160 4 f32"; do
  set -- $shape
  ./build-dev/bin/clfilter-bench --size "$1" --channels "$2" --type "$3" --reps 5
done | tee -a "$out/bench.txt"
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 --filter "gaussian:sigma=2 + sobel + box:radius=1" | tee -a "$out/bench.txt"
./build-dev/bin/clfilter-bench --scale --reps 5 | tee -a "$out/bench.txt"
./build-dev/bin/clfilter-bench --scale --reps 5 --filter "gaussian:sigma=2 + sobel" | tee -a "$out/bench.txt"
# cupyx.scipy.ndimage and torch on the same workloads (both installed on the GPU machine).
python3 bench/gpu_reference.py --size 8192x8192 --json "$out/gpu_reference_8k.json" | tee -a "$out/bench.txt"
python3 bench/gpu_reference.py --size 3840x2160 | tee -a "$out/bench.txt"
# The same streamed run from ordinary (pageable) host images, for comparison with pinned ones.
./build-dev/bin/clfilter-bench --size 8192x8192 --reps 5 --filter sobel:mode=x --pageable | tee -a "$out/bench.txt"
fi
# Strip height and slot sweep for the streamed run (the default strip choice is the first row).
if [ "${CLF_STRIP_SWEEP:-0}" = 1 ]; then
  for shape in "3840x2160 1 f32 540 270 135 68" "3840x2160 4 u8 540 270 135 68" \
               "3840x2160 4 f32 135 68 34" "8192x8192 1 f32 512 128 64"; do
    set -- $shape
    size=$1 channels=$2 type=$3
    shift 3
    for slots in 3; do
      for rows in 0 "$@"; do
        printf '%s %sch %s slots %s rows %-5s ' "$size" "$channels" "$type" "$slots" "$rows"
        ./build-dev/bin/clfilter-bench --size "$size" --channels "$channels" --type "$type" --reps 5 \
          --filter sobel:mode=x --strip-rows "$rows" --slots "$slots" | grep -E "^sobel.*direct" | cut -c40-
      done
    done
  done | tee -a "$out/bench.txt"
fi
# Tile sweep for the tiled single-pass separable kernel (columns x rows x rows per work-item, rows
# first at every radius; the first line is the device's tuning).
if [ "${CLF_SEPARABLE_SWEEP:-0}" = 1 ]; then
  for tile in default ${CLF_TILES:-64x128x8 128x128x8 128x64x8 64x64x8 64x128x4 128x128x16 32x256x8}; do
    args=()
    if [ "$tile" != default ]; then
      IFS=x read -r w r th <<<"$tile"
      args=(--tuning "separable_columns=,separable_tile_width=$w,separable_tile_rows=$r,separable_block_rows=$th,separable_literal_tile_rows=0,separable_arg_block_rows=0")
    fi
    echo "== tile $tile"
    ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 "${args[@]}" \
      --filter gaussian:sigma=1.5 --filter gaussian:sigma=3 --filter box:radius=8 \
      --filter gaussian:sigma=8 --filter gaussian:sigma=20 | grep -A30 "^filter "
  done | tee -a "$out/bench.txt"
fi
# Direct against FFT for random full-rank windows (the crossover Tuning::fft_tap_cost encodes),
# then cupyx and torch on the same sizes.
if [ "${CLF_FFT_SWEEP:-0}" = 1 ]; then
  for n in ${CLF_FFT_SIZES:-15 21 31 41 63 127}; do
    # A file, one row a line: a 127x127 matrix on the command line is past the argument limit.
    k=$(mktemp)
    python3 bench/gpu_reference.py --print-random "$n" | tr ';' '\n' >"$k"
    echo "== random ${n}x${n}: direct, then fft"
    ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 --filter "convolve:kernel_file=$k,method=direct" \
      --filter "convolve:kernel_file=$k,method=fft" | grep -E "^convolve|^  convolve" | grep -v tiled
    rm -f "$k"
  done | tee -a "$out/bench.txt"
  python3 bench/gpu_reference.py --size 8192x8192 --reps 5 | tee -a "$out/bench.txt"
fi

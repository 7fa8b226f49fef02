#!/usr/bin/env bash
# libFuzzer runs of the --filter / parameter / matrix parsers and of image loading.
#   scripts/fuzz.sh                    what the test command and CI run: the checked-in corpus
#                                      (tests/fuzz/corpus, regressions included), then a fixed
#                                      seed and a fixed number of runs per target, so a result
#                                      depends on the code, never on the machine's speed or luck
#   scripts/fuzz.sh --explore SECONDS  a random seed for SECONDS per target, growing
#                                      build-fuzz/corpus_* across runs: the search for new bugs
# Findings land in build-fuzz/ as crash-*, leak-*, timeout-*, oom-*; a fixed one goes into
# tests/fuzz/corpus/<target>/regress_<what> so every later run replays it.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
explore=0 seconds=0
if [ "${1:-}" = --explore ]; then
  explore=1 seconds=${2:?usage: scripts/fuzz.sh [--explore SECONDS]}
elif [ $# -gt 0 ]; then
  echo "usage: scripts/fuzz.sh [--explore SECONDS]" >&2; exit 2
fi
"$root/scripts/setup.sh" --deps-only
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLF_BUILD_FUZZERS=ON -DCLF_BUILD_TESTS=OFF -DCLF_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-fuzz" --target fuzzers -j"$(nproc)"
cd "$root/build-fuzz"
rm -f crash-* leak-* timeout-* oom-*
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"
# Full unwinding where a suppression must match frames of libraries built without frame pointers
# (OpenImageIO, PoCL, LLVM). It walks the whole stack at every allocation, so the parser's target,
# which reaches none of them, goes without.
declare -A fast_unwind=([fuzz_filter_spec]=1 [fuzz_filter_create]=0 [fuzz_image_read]=0)
# Runs per target in the fixed mode: about a minute each on a 2-core machine.
# fuzz_filter_create builds kernels (a PoCL compile for each new shape, the first the slowest with
# cold caches): fewer runs, a longer timeout per unit; about a minute too.
declare -A runs=([fuzz_filter_spec]=300000 [fuzz_filter_create]=400 [fuzz_image_read]=6000)
declare -A timeout=([fuzz_filter_spec]=10 [fuzz_filter_create]=120 [fuzz_image_read]=10)
for target in fuzz_filter_spec fuzz_filter_create fuzz_image_read; do
  name=${target#fuzz_}
  if [ "$explore" = 1 ]; then
    mkdir -p "corpus_$name"
    mode=(-max_total_time="$seconds" "corpus_$name")
    echo "== $target for ${seconds}s, random seed"
  else
    # New units go to a fresh directory: what earlier runs found must not change this one.
    rm -rf "fixed_$name" && mkdir "fixed_$name"
    mode=(-seed=1 -runs="${runs[$target]}" "fixed_$name")
    echo "== $target: checked-in corpus, then ${runs[$target]} runs from seed 1"
  fi
  ASAN_OPTIONS="fast_unwind_on_malloc=${fast_unwind[$target]}" \
    "./bin/$target" "${mode[@]}" -timeout="${timeout[$target]}" -rss_limit_mb=4096 -print_final_stats=1 \
    "$root/tests/fuzz/corpus/$name" 2>&1 | grep -E "Done|stat::number_of_executed_units|ERROR|SUMMARY|crash" || true
  if compgen -G "crash-*" >/dev/null || compgen -G "leak-*" >/dev/null ||
     compgen -G "timeout-*" >/dev/null || compgen -G "oom-*" >/dev/null; then
    echo "findings in $PWD:"; ls crash-* leak-* timeout-* oom-* 2>/dev/null; exit 1
  fi
done
echo "fuzz: no findings"

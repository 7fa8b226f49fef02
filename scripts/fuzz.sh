#!/usr/bin/env bash
# Bounded libFuzzer runs: the --filter / parameter / matrix parsers and image loading.
# Usage: scripts/fuzz.sh [seconds per target, default 60]. Crashes land in build-fuzz/ as crash-*.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
"$root/scripts/setup.sh" --deps-only
CC=clang CXX=clang++ cmake -S "$root" -B "$root/build-fuzz" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCLF_BUILD_FUZZERS=ON -DCLF_BUILD_TESTS=OFF -DCLF_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build-fuzz" -j"$(nproc)"
cd "$root/build-fuzz"
rm -f crash-* leak-* timeout-* oom-*
export LSAN_OPTIONS="suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0"
# Full unwinding: OpenImageIO has no frame pointers, and suppressions match on frames.
export ASAN_OPTIONS="fast_unwind_on_malloc=0"
for target in fuzz_filter_spec fuzz_image_read; do
  name=${target#fuzz_}
  mkdir -p "corpus_$name"
  echo "== $target for ${seconds}s"
  "./bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    "corpus_$name" "$root/tests/fuzz/corpus/$name" 2>&1 | grep -E "Done|stat::number_of_executed_units|ERROR|SUMMARY|crash" || true
  if compgen -G "crash-*" >/dev/null || compgen -G "leak-*" >/dev/null ||
     compgen -G "timeout-*" >/dev/null || compgen -G "oom-*" >/dev/null; then
    echo "findings in $PWD:"; ls crash-* leak-* timeout-* oom-* 2>/dev/null; exit 1
  fi
done
echo "fuzz: no findings"

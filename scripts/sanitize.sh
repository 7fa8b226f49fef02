#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/).
# LeakSanitizer suppresses only PoCL's own never-freed caches (tests/sanitizer/lsan.supp).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --deps-only
# -O1 -g1 (line tables: reports still name function, file and line) builds much sooner than
# RelWithDebInfo's -O2 -g, and the suite runs as fast: its time is PoCL compiling kernels.
cmake -S "$root" -B "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLF_SANITIZE=ON \
  -DCLF_BUILD_BENCH=OFF -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
cmake --build "$root/build-asan" -j"$(nproc)"
# The kernels the plain suite compiled (build/, the same kernel sources on the same device) seed
# this build's caches, PoCL's kernel cache (where PoCL's programs are kept: clfilter writes no
# binary of them) and clfilter's directory: compiling them again, PoCL's LLVM running under the
# sanitizers' allocator, was most of this suite's time, and it is not the code under test.
# Building from source still runs here where a test opens a cache of its own.
if [ -d "$root/build/tests/cache" ]; then
  mkdir -p "$root/build-asan/tests/cache"
  cp -a --no-clobber "$root/build/tests/cache/." "$root/build-asan/tests/cache/"
fi
cd "$root/build-asan"
ctest --output-on-failure -j"$(nproc)"

#!/usr/bin/env bash
# The whole test suite built with AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/).
# LeakSanitizer suppresses only PoCL's own never-freed caches (tests/sanitizer/lsan.supp).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" --deps-only
cmake -S "$root" -B "$root/build-asan" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCLF_SANITIZE=ON -DCLF_BUILD_BENCH=OFF
cmake --build "$root/build-asan" -j"$(nproc)"
cd "$root/build-asan"
ctest --output-on-failure -j"$(nproc)"

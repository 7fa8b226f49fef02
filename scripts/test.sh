#!/usr/bin/env bash
# README command 2 (and .ci/run): set up (packages + build), run the whole test suite, a bounded
# fuzz run of the parsers and image loading (CLF_FUZZ_SECONDS per target, default 60; 0 skips),
# then the same suite under AddressSanitizer + UndefinedBehaviorSanitizer (CLF_SKIP_SANITIZE=1
# skips it). The last lines are ctest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
(cd "$root/build" && ctest --output-on-failure -j"$(nproc)")
if [ "${CLF_FUZZ_SECONDS:-60}" != 0 ]; then
  "$root/scripts/fuzz.sh" "${CLF_FUZZ_SECONDS:-60}"
fi
if [ "${CLF_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi

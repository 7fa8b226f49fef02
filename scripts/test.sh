#!/usr/bin/env bash
# README command 2 (and .ci/run): set up (packages + build), check the format rules
# (scripts/check-style.sh: clang-format, 100 columns, 80-line functions), run the whole test
# suite, the fixed fuzz run of the parsers and image loading (scripts/fuzz.sh; CLF_SKIP_FUZZ=1 skips it),
# then the same suite under AddressSanitizer + UndefinedBehaviorSanitizer (CLF_SKIP_SANITIZE=1
# skips it). The last lines are ctest's.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/check-style.sh"
(cd "$root/build" && ctest --output-on-failure -j"$(nproc)")
if [ "${CLF_SKIP_FUZZ:-0}" != 1 ]; then
  "$root/scripts/fuzz.sh"
fi
if [ "${CLF_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi

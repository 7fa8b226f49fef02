#!/usr/bin/env bash
# README command 2 (and .ci/run): set up (packages + build), run the whole test suite, then the
# same suite under AddressSanitizer + UndefinedBehaviorSanitizer (CLF_SKIP_SANITIZE=1 skips it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
(cd "$root/build" && ctest --output-on-failure -j"$(nproc)")
if [ "${CLF_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi

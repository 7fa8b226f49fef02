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
# Suites that vanish when a package is missing (pybind11: python; OpenImageIO: cli, hostile) must
# be there: a suite that did not run is a failure, not a pass.
# (The list is read whole first: grep -q stops at its match, and ctest, cut off, would fail the
# pipe under pipefail.)
suites=$(cd "$root/build" && ctest -N)
for suite in python cli hostile; do
  grep -qE "Test +#[0-9]+: $suite\$" <<<"$suites" ||
    { echo "test.sh: no '$suite' tests in this build (see scripts/setup.sh's packages)" >&2; exit 1; }
done
(cd "$root/build" && ctest --output-on-failure -j"$(nproc)")
if [ "${CLF_SKIP_FUZZ:-0}" != 1 ]; then
  "$root/scripts/fuzz.sh"
fi
if [ "${CLF_SKIP_SANITIZE:-0}" != 1 ]; then
  "$root/scripts/sanitize.sh"
fi

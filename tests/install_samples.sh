#!/usr/bin/env bash
# ctest: install clfilter into a temporary prefix, build both samples against that install only,
# and run them: the embedding tool, and the installed clfilter loading the out-of-tree plugin.
set -euo pipefail
build=$1 source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$source/samples/embed" -B "$work/embed" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/embed" >/dev/null
"$work/embed/embed" 320 200
cmake -S "$source/samples/plugin" -B "$work/emboss" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/emboss" >/dev/null
oiiotool --pattern checker:width=16:height=16 160x120 3 -d uint8 -o "$work/in.png"
export CLF_PLUGIN_PATH="$work/emboss"
"$work/prefix/bin/clfilter" --list-filters emboss | grep -q "emboss - relief"
"$work/prefix/bin/clfilter" --list-filters sobel | grep -q "sobel - "   # built-ins found by default
"$work/prefix/bin/clfilter" "$work/in.png" "$work/out.png" --filter emboss:strength=2 --filter sobel
test -s "$work/out.png"
# The sample's numbers: emboss with strength 2 is the 3x3 correlation below.
"$work/prefix/bin/clfilter" "$work/in.png" "$work/emboss.exr" --filter emboss:strength=2
"$work/prefix/bin/clfilter" "$work/in.png" "$work/convolve.exr" --filter "convolve:kernel=-2,-1,0;-1,1,1;0,1,2"
oiiotool "$work/emboss.exr" "$work/convolve.exr" --diff --fail 1e-5 >/dev/null
echo "install + samples: ok"

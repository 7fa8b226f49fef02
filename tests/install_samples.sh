#!/usr/bin/env bash
# ctest: install clfilter into a temporary prefix, build both samples against that install only,
# and run them: the embedding tool, and the installed clfilter loading the out-of-tree plugin;
# then a second out-of-tree plugin (samples/dog, a composite filter) against a reference,
# installed with `cmake --install` where the installed clfilter finds it unaided; and pkg-config
# pointing at the install prefix.
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
# A second out-of-tree plugin, composite: the difference of Gaussians (samples/dog) against the
# same image blurred twice by the built-in gaussian and subtracted by oiiotool.
cmake -S "$source/samples/dog" -B "$work/dog" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/dog" >/dev/null
cmake --install "$work/dog" >/dev/null
test -s "$work/prefix/lib/clfilter/plugins/libclf_dog.so"  # where clfilter looks by default
export CLF_PLUGIN_PATH="$work/emboss"
oiiotool --pattern noise:type=uniform:min=0:max=1 97x61 3 -d float -o "$work/noise.exr"
for border in reflect101 wrap constant; do
  "$work/prefix/bin/clfilter" "$work/noise.exr" "$work/dog.exr" -q \
    --filter "dog:sigma=1.5,ratio=2,border=$border" --strip-rows 7
  "$work/prefix/bin/clfilter" "$work/noise.exr" "$work/narrow.exr" -q --filter "gaussian:sigma=1.5,border=$border"
  "$work/prefix/bin/clfilter" "$work/noise.exr" "$work/wide.exr" -q --filter "gaussian:sigma=3,border=$border"
  oiiotool "$work/narrow.exr" "$work/wide.exr" --sub -o "$work/want.exr"
  oiiotool "$work/dog.exr" "$work/want.exr" --diff --fail 1e-5 >/dev/null
done
# The docs and samples are installed for authors who only have the package.
test -s "$work/prefix/share/doc/clfilter/PLUGINS.md"
test -s "$work/prefix/share/clfilter/samples/plugin/emboss.cpp"
test -s "$work/prefix/share/clfilter/samples/dog/dog.cpp"
# pkg-config follows the prefix the install was given, not CMAKE_INSTALL_PREFIX.
flags=$(PKG_CONFIG_PATH="$work/prefix/lib/pkgconfig" pkg-config --cflags --libs clfilter)
case "$flags" in *"$work/prefix/lib/pkgconfig/../../include"*) ;; *) echo "pkg-config: $flags"; exit 1;; esac
cat > "$work/pc.cpp" <<'CPP'
#include <clf/clf.hpp>
int main() { return clf::list_devices().empty(); }
CPP
g++ -std=c++17 "$work/pc.cpp" -o "$work/pc" $flags -Wl,-rpath,"$work/prefix/lib"
"$work/pc"
echo "install + samples: ok"

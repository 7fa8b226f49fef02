#!/usr/bin/env bash
# File to file, side by side with libvips (Debian's libvips-tools), in one run: wall time and peak
# RSS of `clfilter IN OUT -f gaussian:sigma=3` and of `vips gaussblur IN OUT 3` with the same
# kernel extent, on the files issue 12 names, made here:
#   photo.jpg  3840x2160 RGB JPEG (smooth noise over a checkerboard: photo-like entropy)
#   big.tif    16384x16384 RGB u8, 256x256 tiles, uncompressed (805 MB)
#   huge.tif   65536x65536 RGB u8 tiled (12.9 GB; only with --huge: needs ~13 GB of disk twice).
#              clfilter alone: vips's float output of it (51 GB) would not fit the disk.
#   batch/     100 copies of photo.jpg: one clfilter process (--output-dir) against one vips process
#              per file, one at a time and two at once
# and clfilter's start-up: --version, --list-filters, and a 16x16 JPEG job with warm and cold program
# caches (cold: empty XDG_CACHE_HOME and POCL_CACHE_DIR, every kernel compiled), warm also through
# OpenImageIO (--io oiio; JPEG to JPEG otherwise loads only libjpeg-turbo).
# Usage: bench/files.sh [--reps N] [--huge] [--keep]     (run from the project root, after the build)
# Prints one table; the median of N runs (default 3) for each tool, alternating, so both see the
# same machine state. vips's --min-ampl 0.001 gives radius 11 at sigma 3 (clfilter, as OpenCV:
# radius 12); 0.001 is the smallest vips 8.14 accepts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=3 huge=0 keep=0
while [ $# -gt 0 ]; do
  case $1 in
    --reps) reps=$2; shift 2 ;;
    --huge) huge=1; shift ;;
    --keep) keep=1; shift ;;
    *) echo "usage: bench/files.sh [--reps N] [--huge] [--keep]" >&2; exit 2 ;;
  esac
done
clf=$root/build/bin/clfilter
[ -x "$clf" ] || { echo "build first: bash scripts/setup.sh" >&2; exit 1; }
command -v vips >/dev/null || { echo "vips not found: apt-get install libvips-tools (scripts/setup.sh does)" >&2; exit 1; }
work=$root/out/bench-files
mkdir -p "$work"
cd "$work"
[ -f photo.jpg ] || oiiotool --pattern noise:type=gaussian:mean=0.5:stddev=0.2 3840x2160 3 --blur 9x9 \
  --pattern checker:width=240:height=240:color1=0.2,0.3,0.4:color2=0.8,0.7,0.6 3840x2160 3 --add \
  -d uint8 -o photo.jpg
# A noise image of width x height as an RGB u8 tiled TIFF, made by vips a strip at a time.
make_tiff() {
  vips gaussnoise "$1.noise.v" "$2" "$3" --mean 128 --sigma 40
  vips cast "$1.noise.v" "$1.u8.v" uchar && rm -f "$1.noise.v"
  vips bandjoin "$1.u8.v $1.u8.v $1.u8.v" "$1.rgb.v" && rm -f "$1.u8.v"
  vips copy "$1.rgb.v" "$1[tile,tile-width=256,tile-height=256,compression=none${4:-}]" && rm -f "$1.rgb.v"
}
[ -f big.tif ] || make_tiff big.tif 16384 16384
[ "$huge" = 1 ] && { [ -f huge.tif ] || make_tiff huge.tif 65536 65536 ",bigtiff"; }

# Runs "$@" and prints "seconds peak_KiB".
measure() { /usr/bin/time -f "%e %M" "$@" 2>&1 >/dev/null | tail -1; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

files=(photo.jpg big.tif)
printf "%-10s %12s %12s %8s %14s %14s\n" file clfilter_s vips_s ratio clf_rss_MiB vips_rss_MiB
for f in "${files[@]}"; do
  ext=${f##*.}
  : >clf.txt; : >vips.txt
  for _ in $(seq "$reps"); do
    measure "$clf" "$f" "out_clf.$ext" -f gaussian:sigma=3 -q >>clf.txt
    measure vips gaussblur "$f" "out_vips.$ext" 3 --min-ampl 0.001 --precision float >>vips.txt
  done
  c=$(cut -d' ' -f1 clf.txt | median) v=$(cut -d' ' -f1 vips.txt | median)
  cm=$(cut -d' ' -f2 clf.txt | sort -n | tail -1) vm=$(cut -d' ' -f2 vips.txt | sort -n | tail -1)
  printf "%-10s %12s %12s %8s %14s %14s\n" "$f" "$c" "$v" "$(awk -v c="$c" -v v="$v" 'BEGIN{printf "%.2fx", v/c}')" \
    $((cm / 1024)) $((vm / 1024))
done
echo "(ratio = vips time / clfilter time: above 1 clfilter is faster; rss = peak resident set)"
if [ "$huge" = 1 ]; then
  # A run the benchmark can check: the exit status, wall time and peak RSS of clfilter alone.
  /usr/bin/time -f "%e %M" -o huge_time.txt "$clf" huge.tif out_clf.tif -f gaussian:sigma=3 -q
  read -r hs hm <huge_time.txt
  printf "huge.tif (65536x65536 RGB u8, 12.9 GB): clfilter %s s, peak RSS %s MiB\n" "$hs" $((hm / 1024))
  # The streamed output against a strip-wise reference: three bands of rows (top, middle, bottom)
  # cut from the input with the chain's halo (12 rows), filtered whole, must equal the same rows of
  # the streamed output.
  for y in 0 32768 65472; do
    top=$((y >= 12 ? y - 12 : 0)); end=$((y + 64 + 12 > 65536 ? 65536 : y + 64 + 12))
    vips crop huge.tif band_in.tif 0 "$top" 65536 $((end - top))
    "$clf" band_in.tif band_ref.tif -f gaussian:sigma=3 -q
    vips crop band_ref.tif band_want.tif 0 $((y - top)) 65536 64
    vips crop out_clf.tif band_got.tif 0 "$y" 65536 64
    oiiotool band_got.tif band_want.tif --diff --fail 0 >/dev/null && echo "huge.tif rows $y..$((y + 63)): equal to the strip-wise reference" ||
      { echo "huge.tif rows $y..$((y + 63)): DIFFERENT from the strip-wise reference"; exit 1; }
  done
  rm -f band_*.tif
fi
[ "$keep" = 1 ] || rm -f out_clf.* out_vips.*

# Batch: 100 files.
mkdir -p batch batch_clf batch_vips
for i in $(seq -w 1 100); do [ -f "batch/p$i.jpg" ] || cp photo.jpg "batch/p$i.jpg"; done
one_by_one() { for f in batch/*.jpg; do vips gaussblur "$f" "batch_vips/${f##*/}" 3 --min-ampl 0.001 --precision float; done; }
two_at_once() {
  ls batch/*.jpg | xargs -P 2 -I{} sh -c 'vips gaussblur "$1" "batch_vips/$(basename "$1")" 3 --min-ampl 0.001 --precision float' _ {}
}
: >b_clf.txt; : >b_seq.txt; : >b_par.txt
for _ in $(seq "$reps"); do
  measure "$clf" batch/*.jpg --output-dir batch_clf -f gaussian:sigma=3 -q >>b_clf.txt
  /usr/bin/time -f "%e %M" bash -c "$(declare -f one_by_one); one_by_one" 2>&1 >/dev/null | tail -1 >>b_seq.txt
  /usr/bin/time -f "%e %M" bash -c "$(declare -f two_at_once); two_at_once" 2>&1 >/dev/null | tail -1 >>b_par.txt
done
c=$(cut -d' ' -f1 b_clf.txt | median) s=$(cut -d' ' -f1 b_seq.txt | median) p=$(cut -d' ' -f1 b_par.txt | median)
printf "\nbatch of 100 x photo.jpg: clfilter %s s; vips one at a time %s s (%.2fx), two at once %s s (%.2fx)\n" \
  "$c" "$s" "$(awk -v a="$s" -v b="$c" 'BEGIN{print a/b}')" "$p" "$(awk -v a="$p" -v b="$c" 'BEGIN{print a/b}')"

# Start-up.
oiiotool --pattern constant:color=0.5,0.5,0.5 16x16 3 -d uint8 -o tiny.jpg
st() { cut -d' ' -f1 | median; }
v=$(for _ in 1 2 3; do measure "$clf" --version; done | st)
l=$(for _ in 1 2 3; do measure "$clf" --list-filters; done | st)
w=$(for _ in 1 2 3; do measure "$clf" tiny.jpg tiny_out.jpg -f gaussian:sigma=3 -q; done | st)
o=$(for _ in 1 2 3; do measure "$clf" tiny.jpg tiny_out.jpg -f gaussian:sigma=3 -q --io oiio; done | st)
cold=$(for _ in 1 2 3; do rm -rf cold && mkdir -p cold/pocl &&
  XDG_CACHE_HOME=$PWD/cold POCL_CACHE_DIR=$PWD/cold/pocl measure "$clf" tiny.jpg tiny_out.jpg -f gaussian:sigma=3 -q; done | st)
echo "start-up: --version $v s, --list-filters $l s, 16x16 JPEG job warm $w s (through OpenImageIO," \
  "--io oiio: $o s), cold caches $cold s"
[ "$keep" = 1 ] || rm -rf out_clf.* out_vips.* ./*.txt batch_clf batch_vips cold tiny_out.jpg

#!/usr/bin/env bash
# Kernel experiments on the GPU machine (docs/DEVELOPERS.md): the same filters under several
# CLF_BUILD_OPTIONS, then ptxas's register use and the SASS instruction mix of the tiled single
# pass, or of LAB_KERNEL (say bilateral_rows). LAB_VARIANTS: build options separated by ';' ("base"
# = none); LAB_FILTERS: bench filter specs separated by spaces; LAB_BENCH_ARGS: more bench options
# (--type u8); LAB_TEST_VARIANTS: -D names to run test_filters under; LAB_SASS /
# LAB_SASS_VARIANTS: the filters and options to disassemble.
# Logs under $OUT.
set -uo pipefail
source "$(dirname "$0")/device-build.sh"
filters=${LAB_FILTERS:-"gaussian:sigma=1.5 gaussian:sigma=3 box:radius=8 gaussian:sigma=8"}
args=()
for f in $filters; do args+=(--filter "$f"); done
IFS=';' read -ra variants <<<"${LAB_VARIANTS:-base}"
for v in "${variants[@]}"; do
  opts=$v
  [ "$v" = base ] && opts=""
  echo "== $v"
  CLF_BUILD_OPTIONS="$opts" ./build-dev/bin/clfilter-bench --size 8192x8192 --reps 3 ${LAB_BENCH_ARGS:-} "${args[@]}" \
    | grep -E "copy kernel|^[a-z].*(tiled|direct) " | cut -c1-80
done 2>&1 | tee "$out/lab.txt"
for v in ${LAB_TEST_VARIANTS:-}; do
  echo "== tests with -D $v"
  CLF_BUILD_OPTIONS="-D $v" ./build-dev/bin/test_filters 2>&1 | tail -2
done 2>&1 | tee -a "$out/lab.txt"
# SASS of LAB_KERNEL for each LAB_SASS filter under each LAB_SASS_VARIANTS (a fresh cache: the
# one program with that kernel in it).
kernel=${LAB_KERNEL:-clf_separable_tiled}
ptxas=$(command -v ptxas || ls /usr/local/cuda*/bin/ptxas 2>/dev/null | head -1)
cuobjdump=$(command -v cuobjdump || ls /usr/local/cuda*/bin/cuobjdump 2>/dev/null | head -1)
IFS=';' read -ra sass_variants <<<"${LAB_SASS_VARIANTS:-base}"
n=0
for f in ${LAB_SASS:-}; do
  for v in "${sass_variants[@]}"; do
    opts=$v
    [ "$v" = base ] && opts=""
    cache=$(mktemp -d)
    for build in first second; do  # a program goes to disk at its second build
      XDG_CACHE_HOME=$cache CLF_BUILD_OPTIONS="$opts" ./build-dev/bin/clfilter-bench --size 1024x1024 --reps 1 \
        ${LAB_BENCH_ARGS:-} --filter "$f" >/dev/null 2>&1
    done
    for bin in $(grep -l "$kernel" "$cache"/clfilter/*.bin); do  # each program with it
      n=$((n + 1))
      tr -d '\000' <"$bin" >"$cache/k.ptx"
      cp "$cache/k.ptx" "$out/sass$n.ptx"
      echo "== sass$n: $f ${v:0:40}"
      "$ptxas" -arch=sm_90 -v "$cache/k.ptx" -o "$cache/k.cubin" 2>&1 | grep -A2 "$kernel" | grep -E "Used|spill|stack"
      "$cuobjdump" -sass -fun "$kernel" "$cache/k.cubin" >"$out/sass$n.sass" 2>&1
      python3 - "$out/sass$n.sass" <<'PY'
import collections, re, sys
ops = collections.Counter()
for line in open(sys.argv[1]):
    m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)", line)
    if m: ops[m.group(1).split('.')[0]] += 1
print(sum(ops.values()), "instructions:", ", ".join(f"{k} {v}" for k, v in ops.most_common(16)))
PY
    done
  done
done 2>&1 | tee -a "$out/lab.txt"

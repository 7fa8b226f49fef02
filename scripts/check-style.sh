#!/usr/bin/env bash
# The format rules scripts/test.sh (and so CI) holds the product code to:
#   - clang-format (.clang-format: Google style, 100 columns) reports nothing on core, plugins,
#     cli, python, samples and bench;
#   - no line of product code, C++, OpenCL C or the Python package, is longer than 100 columns;
#   - no function in core/src, cli or plugins is longer than 80 lines;
#   - no class in core (its public headers too), cli or plugins is longer than 250 lines: its
#     definition and its member functions together;
#   - no #if in OpenCL C (kernels/, plugins/, samples/) is nested deeper than 2;
#   - #include <clf/clf.hpp> (what an embedder includes) pulls in no Boost header;
#   - plugins read the tuning by name (Device::knob), never through clf::Tuning;
#   - no kernel launch leaves its group to the driver (cl::NullRange as the local size);
#   - what README.md and docs/ name in code (files, knobs, functions, options) is in the code
#     (tests/tools/check_docs.py).
# Prints each finding and exits 1 when there is one. Fix C++ layout with:
#   clang-format -i $(git ls-files 'core/*.[ch]pp' 'core/*.h' 'plugins/*.[ch]pp' ...)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
status=0
mapfile -t cxx < <(git ls-files 'common/*.hpp' 'core/*.cpp' 'core/*.hpp' 'core/*.h' 'plugins/*.cpp' 'plugins/*.hpp' 'cli/*.cpp' \
  'cli/*.hpp' 'python/*.cpp' 'samples/*.cpp' 'bench/*.cpp' 'bench/*.hpp')
mapfile -t other_sources < <(git ls-files 'kernels/*' 'plugins/*.cl' 'samples/*.cl' 'python/clfilter/*.py')
if ! clang-format --dry-run --Werror "${cxx[@]}" 2>/tmp/clf-format.$$; then
  grep -E "warning|error" /tmp/clf-format.$$ | head -40
  echo "check-style: clang-format reports $(grep -c -E "warning|error" /tmp/clf-format.$$) findings (clang-format -i fixes them)"
  status=1
fi
rm -f /tmp/clf-format.$$
if awk 'length > 100 { printf "%s:%d: %d columns\n", FILENAME, FNR, length; found = 1 } END { exit !found }' \
  "${cxx[@]}" "${other_sources[@]}"; then
  echo "check-style: lines over 100 columns"
  status=1
fi
# A function: its signature starts at column 0 (an identifier, then "(" on that line; it may wrap
# over several lines, with a constructor's initialisers), its body opens at the first line that
# ends with "{" and closes at the "}" at column 0. A body on the signature's line ("{}", "{ ... }")
# ends it.
if awk 'FNR == 1 { sig = 0; body = 0 }
        !body && !sig && /^[A-Za-z].*\(/ && !/;$/ { sig = FNR; name = $0 }
        sig && !body && (/;$/ || /\}$/) { sig = 0; next }
        sig && !body && /\{$/ { body = FNR }
        /^\}/ && body { if (FNR - body - 1 > 80) { printf "%s:%d: %d lines: %s\n", FILENAME, sig, FNR - body - 1, name; found = 1 } sig = 0; body = 0 }
        END { exit !found }' $(git ls-files 'core/src/*.cpp' 'cli/*.cpp' 'plugins/*/*.cpp'); then
  echo "check-style: functions over 80 lines"
  status=1
fi
# A class: its definition from "class X" or "struct X" at column 0 to "};" at column 0, plus the
# bodies of the functions defined outside it as X::name, in any of the files.
if awk 'FNR == 1 { in_class = 0; sig = 0; body = 0 }
        !in_class && /^(class|struct) [A-Za-z_]/ && !/;$/ {
          name = $2; sub(/[^A-Za-z0-9_].*/, "", name); in_class = FNR; next }
        in_class && /^};/ { lines[name] += FNR - in_class + 1; where[name] = FILENAME; in_class = 0; next }
        in_class { next }
        !body && !sig && /^[A-Za-z].*\(/ && !/;$/ {
          sig = FNR; owner = ""
          if (match($0, /[A-Za-z_][A-Za-z0-9_]*::~?[A-Za-z_][A-Za-z0-9_]*\(/)) {
            owner = substr($0, RSTART, RLENGTH); sub(/::.*/, "", owner) } }
        sig && !body && (/;$/ || /\}$/) { sig = 0; next }
        sig && !body && /\{$/ { body = FNR }
        /^\}/ && body { if (owner != "") lines[owner] += FNR - sig + 1; sig = 0; body = 0 }
        END { for (c in lines) if (lines[c] > 250) { printf "%s: class %s: %d lines\n", where[c], c, lines[c]; found = 1 }
              exit !found }' $(git ls-files 'common/*.hpp' 'core/include/*.hpp' 'core/src/*.[ch]pp' 'cli/*.[ch]pp' 'plugins/*/*.[ch]pp'); then
  echo "check-style: classes over 250 lines"
  status=1
fi
# Kernel variants are chosen by the host, one family a file: conditional compilation stays shallow.
if awk 'FNR == 1 { depth = 0 }
        /^[ \t]*#[ \t]*if/ { if (++depth > 2) { printf "%s:%d: #if nested %d deep\n", FILENAME, FNR, depth; found = 1 } }
        /^[ \t]*#[ \t]*endif/ { --depth }
        END { exit !found }' $(git ls-files 'kernels/*.cl' 'kernels/*.clh' 'plugins/*.cl' 'samples/*.cl'); then
  echo "check-style: OpenCL C with #if nested deeper than 2"
  status=1
fi
if echo '#include <clf/clf.hpp>' | "${CXX:-c++}" -std=c++17 -E -Icore/include -x c++ - | grep -q '/boost/'; then
  echo "check-style: <clf/clf.hpp> includes Boost (only clf/plugin.hpp may)"
  status=1
fi
# Boost.DLL stays with the plugins: only plugin sources, their tests and registry.cpp include
# clf/plugin.hpp.
if git grep -l -E '#include [<"]clf/plugin\.hpp[>"]' -- '*.cpp' '*.hpp' |
  grep -v -E '^(plugins|samples/(plugin|dog)|tests/plugins)/|^core/src/registry\.cpp$|^tests/test_plugins\.cpp$'; then
  echo "check-style: the files above include clf/plugin.hpp (Boost.DLL); only plugins may"
  status=1
fi
# Plugins read the tuning by name (Device::knob): Tuning's layout is not part of the plugin ABI.
if git grep -n -E '\bTuning\b|\.tuning\(\)|->tuning\(\)' -- 'plugins/*' 'samples/*'; then
  echo "check-style: plugins above use clf::Tuning; they read tuning values with Device::knob"
  status=1
fi
# Every launch names its group (Stage::launch's local size, or Stage::launch_items): a group the
# driver picks (cl::NullRange) divides the image's size, a new one for each size.
if git grep -n 'NullRange' -- core/src plugins samples cli python |
  grep -v -E 'enqueueNDRangeKernel\([A-Za-z_]+, cl::NullRange'; then
  echo "check-style: the launches above leave the group to the driver; give one (Stage::launch_items)"
  status=1
fi
python3 tests/tools/check_docs.py || status=1
[ "$status" = 0 ] && echo "check-style: clean"
exit "$status"

#!/usr/bin/env bash
# On the GPU machine (a device run carrying .devdeps, after `source .devdeps/unpack.sh`): the Python
# module built with that machine's python3 (pybind11's CMake package when .devdeps carries Debian's
# pybind11-dev, else the headers torch ships there), the pytest suite on the GPU (scikit-image's
# photographs carried as .devdeps/photos.npz), then bench/python_batch.py and bench/python_call.py.
# Logs under $OUT.
set -uo pipefail
out=${OUT:-out/device}
mkdir -p "$out"
py=$(command -v python3)
# The system compiler, not $CXX: that machine's /opt/gcc links libstdc++ statically into each
# shared library, and a second copy of libstdc++ inside a Python process (which has loaded the
# shared one) crashed in std::ostream on the first program build.
[ -x /usr/bin/g++ ] && export CXX=/usr/bin/g++ CC=/usr/bin/gcc
headers=$("$py" -c "import os, torch; print(os.path.join(os.path.dirname(torch.__file__), 'include'))" 2>/dev/null)
rm -rf build-py; cmake -S . -B build-py -DCMAKE_BUILD_TYPE=Release -DCLF_BUILD_CLI=OFF -DCLF_BUILD_BENCH=OFF -DCLF_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE="$py" -DCLF_PYBIND11_INCLUDE_DIR="$headers" >"$out/python_build.log" 2>&1 &&
  cmake --build build-py -j"$(nproc)" >>"$out/python_build.log" 2>&1 ||
  { tail -30 "$out/python_build.log"; exit 1; }
export PYTHONPATH=$PWD/build-py/python CLF_PHOTOS=$PWD/.devdeps/photos.npz
"$py" -c "import clfilter; print(clfilter.Pipeline('sobel').device)"
"$py" -m pytest -q tests/python 2>&1 | tee "$out/pytest.log" | tail -5
"$py" bench/python_batch.py --photos "$CLF_PHOTOS" --files "${CLF_BATCH_FILES:-48}" --workers "${CLF_BATCH_WORKERS:-8}" --rounds 3 \
  | tee "$out/python_batch.txt"
"$py" bench/python_call.py --photos "$CLF_PHOTOS" | tee "$out/python_call.txt"

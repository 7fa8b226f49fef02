# Sourced by the GPU machine's scripts (scripts/device-run.sh, scripts/device-lab.sh): $out for the
# logs, and the library, tests and bench built into build-dev without the CLI (no OpenImageIO
# there) or Python (scripts/device-python.sh); CLF_DEVICE defaults to the GPU.
out=${OUT:-out/device}
mkdir -p "$out"
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCLF_BUILD_CLI=OFF -DCLF_BUILD_PYTHON=OFF >"$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
cmake --build build-dev -j"$(nproc)" >>"$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head -30; exit 1; }
export CLF_DEVICE=${CLF_DEVICE:-gpu}

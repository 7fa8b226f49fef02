// The columns-first separable pass as NVIDIA's OpenCL compiler built it, launched through the CUDA
// driver so that Nsight Compute (which does not see OpenCL launches) can read its counters. Takes
// the program's PTX (the binary clfilter caches on NVIDIA, see scripts/device-lab.sh), finds
// clf_separable_columns, and runs it over an 8192^2 f32 plane with the launch clfilter-bench's
// layout line names for gaussian:sigma=3 on the H200 (columns first 232x64/128: 58 float4 columns
// of outputs a group of 128 work-items, 64 rows a group; weights by value, radius 12). Prints the
// time a launch (CUDA events, best of 20, LAUNCHES=N) to compare with the bench's, and one output
// against a plain loop. Not part of the build; on the GPU machine, after a build-dev:
//   args="--size 1024x1024 --reps 1 --filter gaussian:sigma=3" c=$(mktemp -d)
//   for i in 1 2; do XDG_CACHE_HOME=$c ./build-dev/bin/clfilter-bench $args; done  # 2nd: cached
//   tr -d '\000' < $(grep -l clf_separable_columns $c/clfilter/*.bin) > /tmp/c.ptx
//   nvcc -O2 dev/kernel-lab/ptx_columns.cpp -o /tmp/ptx_columns -lcuda
//   /tmp/ptx_columns /tmp/c.ptx
//   ncu="ncu --clock-control none --launch-skip 1 --launch-count 1 --section SpeedOfLight"
//   LAUNCHES=2 $ncu --section WarpStateStats --section InstructionStats /tmp/ptx_columns /tmp/c.ptx
//   (--metrics sass__inst_executed_per_opcode --print-metric-instances details: the mix)
// Arguments: PROGRAM.ptx [radius 12] [outputs a group, float4s: 58] [rows a group: 64].
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cuda_ptx.hpp"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PROGRAM.ptx [radius] [output float4s a group] [rows]\n",
                 argv[0]);
    return 2;
  }
  const int radius = argc > 2 ? std::atoi(argv[2]) : 12;
  const int outputs4 = argc > 3 ? std::atoi(argv[3]) : 58,
            rows_a_group = argc > 4 ? std::atoi(argv[4]) : 64;
  const int W = 8192, H = 8192, margin = 16, pitch = W + 2 * margin;
  CUfunction kernel = load_ptx_kernel(argv[1], "clf_separable_columns");
  int regs = 0, shared = 0;
  cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel);
  cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, kernel);
  const size_t src_floats = size_t(pitch) * (H + 2 * margin), dst_floats = size_t(W) * H;
  CUdeviceptr src, dst;
  CHECK(cuMemAlloc(&src, src_floats * 4));
  CHECK(cuMemAlloc(&dst, dst_floats * 4));
  std::vector<float> host(src_floats);
  for (size_t i = 0; i < host.size(); ++i) host[i] = float(i % 251) / 251.f;
  CHECK(cuMemcpyHtoD(src, host.data(), host.size() * 4));
  struct Taps {
    float w[64];
  } wx{}, wy{};
  double sum = 0;
  const double sigma = radius / 4.0;
  for (int i = -radius; i <= radius; ++i) sum += std::exp(-i * i / (2 * sigma * sigma));
  for (int i = -radius; i <= radius; ++i)
    wx.w[i + radius] = wy.w[i + radius] = float(std::exp(-i * i / (2 * sigma * sigma)) / sum);
  int src_origin = margin * pitch + margin, src_pitch = pitch, src_plane = int(src_floats);
  int dst_origin = 0, dst_pitch = W, dst_plane = int(dst_floats), width = W, rows = H;
  float delta = 0;
  void* args[] = {&src,       &src_origin, &src_pitch, &src_plane, &dst, &dst_origin, &dst_pitch,
                  &dst_plane, &width,      &rows,      &wx,        &wy,  &delta};
  const unsigned groups_x = (W / 4 + outputs4 - 1) / outputs4,
                 groups_y = (H + rows_a_group - 1) / rows_a_group;
  const float best = best_launch_ms(kernel, groups_x, groups_y, 128, args);
  std::vector<float> out(size_t(W) * 4);
  CHECK(cuMemcpyDtoH(out.data(), dst + size_t(4000) * W * 4, out.size() * 4));
  // One output against a plain loop (the weights in the row taps' order, as the kernel sums).
  const int x = 1000, y = 4000;
  double want = 0;
  for (int i = -radius; i <= radius; ++i) {
    double column = 0;
    for (int j = -radius; j <= radius; ++j)
      column += double(wy.w[j + radius]) * host[size_t(src_origin) + size_t(y + j) * pitch + x + i];
    want += double(wx.w[i + radius]) * column;
  }
  std::printf(
      "%d registers, %d B shared; grid %ux%u of 128; best of %d: %.4f ms; out(1000, 4000) %.6f, "
      "loop %.6f\n",
      regs, shared, groups_x, groups_y, lab_launches(), best, out[x], want);
  return 0;
}

// The bilateral's GPU layouts (bilateral_pairs, bilateral_rows) as NVIDIA's OpenCL compiler built
// them, launched through the CUDA driver so that Nsight Compute can read their counters (as
// ptx_columns.cpp does for the separable pass). Runs KERNEL over an 8192^2 image of CHANNELS float
// planes of random u8 levels, with the launch bilateral.cpp makes: OUTPUTS a work-item, groups of
// GROUP, ROWS rows a group. Prints the time a launch (CUDA events, best of LAUNCHES=N, default 20)
// and output (1000, 4000) against the formula. Not part of the build; on the GPU machine:
//   f=bilateral:d=9,sigma_color=75,sigma_space=75 c=$(mktemp -d)
//   args="--size 1024x1024 --reps 1 --type u8 --channels 3 --filter $f"
//   for i in 1 2; do XDG_CACHE_HOME=$c ./build-dev/bin/clfilter-bench $args; done  # 2nd: cached
//   tr -d '\000' < $(grep -l bilateral_pairs $c/clfilter/*.bin) > /tmp/b.ptx
//   nvcc -O2 dev/kernel-lab/ptx_bilateral.cpp -o /tmp/ptx_bilateral -lcuda
//   /tmp/ptx_bilateral /tmp/b.ptx bilateral_pairs 3 4 128 64
//   ncu="ncu --clock-control none --launch-skip 1 --launch-count 1 --section SpeedOfLight"
//   LAUNCHES=2 $ncu --section WarpStateStats --section Occupancy /tmp/ptx_bilateral /tmp/b.ptx ...
// Arguments: PROGRAM.ptx KERNEL CHANNELS OUTPUTS GROUP ROWS (radius 4, sigmas 75: d=9).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "cuda_ptx.hpp"

int main(int argc, char** argv) {
  if (argc < 7) {
    std::fprintf(stderr, "usage: %s PROGRAM.ptx KERNEL CHANNELS OUTPUTS GROUP ROWS\n", argv[0]);
    return 2;
  }
  const char* name = argv[2];
  const int channels = std::atoi(argv[3]), outputs = std::atoi(argv[4]), group = std::atoi(argv[5]),
            group_rows = std::atoi(argv[6]);
  const int W = 8192, H = 8192, radius = 4, margin = 32, pitch = W + 2 * margin;
  const double sigma = 75;
  CUfunction kernel = load_ptx_kernel(argv[1], name);
  int regs = 0, shared = 0;
  cuFuncGetAttribute(&regs, CU_FUNC_ATTRIBUTE_NUM_REGS, kernel);
  cuFuncGetAttribute(&shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, kernel);
  const size_t plane = size_t(pitch) * (H + 2 * margin), dst_plane = size_t(W) * H;
  std::vector<float> host(plane * channels);
  std::mt19937 random(7);
  for (auto& v : host) v = float(random() % 256);
  CUdeviceptr src, dst, offsets, space;
  CHECK(cuMemAlloc(&src, host.size() * 4));
  CHECK(cuMemAlloc(&dst, dst_plane * channels * 4));
  CHECK(cuMemcpyHtoD(src, host.data(), host.size() * 4));
  std::vector<int> taps_xy;
  std::vector<float> weights;
  for (int dy = -radius; dy <= radius; ++dy)
    for (int dx = -radius; dx <= radius; ++dx)
      if (std::sqrt(double(dx) * dx + double(dy) * dy) <= radius) {
        taps_xy.push_back(dx), taps_xy.push_back(dy);
        weights.push_back(float(std::exp(-(dx * dx + dy * dy) / (2 * sigma * sigma))));
      }
  CHECK(cuMemAlloc(&offsets, taps_xy.size() * 4));
  CHECK(cuMemAlloc(&space, weights.size() * 4));
  CHECK(cuMemcpyHtoD(offsets, taps_xy.data(), taps_xy.size() * 4));
  CHECK(cuMemcpyHtoD(space, weights.data(), weights.size() * 4));
  int src_origin = margin * pitch + margin, src_pitch = pitch, src_plane = int(plane);
  int dst_origin = 0, dst_pitch = W, dst_plane_i = int(dst_plane), width = W, rows = H;
  int taps = int(weights.size());
  float color_coeff = float(-0.5 / (sigma * sigma));
  void* args[] = {&src,        &src_origin, &src_pitch,   &src_plane,   &dst,
                  &dst_origin, &dst_pitch,  &dst_plane_i, &width,       &rows,
                  &offsets,    &space,      &taps,        &color_coeff, (void*)&group_rows};
  const int items = (W + outputs - 1) / outputs;
  const unsigned groups_x = unsigned((items + group - 1) / group),
                 groups_y = unsigned((H + group_rows - 1) / group_rows);
  const float best = best_launch_ms(kernel, groups_x, groups_y, unsigned(group), args);
  const int x = 1000, y = 4000;
  float got = 0;
  CHECK(cuMemcpyDtoH(&got, dst + (size_t(y) * W + x) * 4, 4));
  auto at = [&](int c, int dx, int dy) {
    return double(host[c * plane + size_t(src_origin) + size_t(y + dy) * pitch + x + dx]);
  };
  double sum = 0, wsum = 0;
  for (size_t k = 0; k < weights.size(); ++k) {
    const int dx = taps_xy[2 * k], dy = taps_xy[2 * k + 1];
    double dist = 0;
    for (int c = 0; c < channels; ++c) dist += std::fabs(at(c, dx, dy) - at(c, 0, 0));
    const double w = weights[k] * std::exp(dist * dist * color_coeff);
    wsum += w, sum += w * at(0, dx, dy);
  }
  std::printf(
      "%s: %d registers, %d B shared; grid %ux%u of %d; best of %d: %.4f ms; out(1000, 4000) "
      "%.4f, formula %.4f\n",
      name, regs, shared, groups_x, groups_y, group, lab_launches(), best, got, sum / wsum);
  return 0;
}

// Tensor-core probe: NVIDIA's OpenCL compiler takes PTX's mma.sync inline (TF32, m16n8k8, on
// sm_80 and later), and this checks the fragment layout the PTX ISA gives (one warp: D = A(16x8)
// B(8x8) against a CPU product, plain TF32 and 3xTF32: hi and lo halves, three products), then
// times mma.sync alone: the rate a tensor-core correlation would be bound by. Not part of the
// build:
//   g++ -O2 -std=c++17 dev/kernel-lab/mma_probe.cpp -o /tmp/mma_probe -lOpenCL && /tmp/mma_probe
#define CL_TARGET_OPENCL_VERSION 300
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#include <CL/opencl.hpp>
#include "first_device.hpp"
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>
const char* src = R"CLC(
inline uint tf32(float x) { uint r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r; }
inline void mma(float* d, const uint* a, const uint* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__kernel void probe(__global const float* A, __global const float* B, __global float* D,
                    int split) {
  const int lane = get_local_id(0), g = lane >> 2, t = lane & 3;
  float av[4] = {A[g * 8 + t], A[(g + 8) * 8 + t], A[g * 8 + t + 4], A[(g + 8) * 8 + t + 4]};
  float bv[2] = {B[t * 8 + g], B[(t + 4) * 8 + g]};
  uint ah[4], al[4], bh[2], bl[2];
  for (int i = 0; i < 4; ++i) { ah[i] = tf32(av[i]); al[i] = tf32(av[i] - as_float(ah[i])); }
  for (int i = 0; i < 2; ++i) { bh[i] = tf32(bv[i]); bl[i] = tf32(bv[i] - as_float(bh[i])); }
  float d[4] = {0, 0, 0, 0};
  if (split) { mma(d, al, bh); mma(d, ah, bl); }
  mma(d, ah, bh);
  D[g * 8 + 2 * t] = d[0]; D[g * 8 + 2 * t + 1] = d[1];
  D[(g + 8) * 8 + 2 * t] = d[2]; D[(g + 8) * 8 + 2 * t + 1] = d[3];
}
// Throughput: four independent accumulators a work-item, 4 n mma.sync each.
__kernel void rate(__global float* out, int n) {
  uint a[4] = {get_local_id(0), 1, 2, 3}, b[2] = {5, 6};
  float d0[4] = {0,0,0,0}, d1[4] = {0,0,0,0}, d2[4] = {0,0,0,0}, d3[4] = {0,0,0,0};
  for (int i = 0; i < n; ++i) { mma(d0, a, b); mma(d1, a, b); mma(d2, a, b); mma(d3, a, b); }
  out[get_global_id(0)] = d0[0] + d1[1] + d2[2] + d3[3];
}
)CLC";
int main() {
  const cl::Device dev = first_device(CL_DEVICE_TYPE_GPU);
  std::printf("device %s\n", dev.getInfo<CL_DEVICE_NAME>().c_str());
  cl::Context ctx(dev);
  cl::CommandQueue q(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
  cl::Program prog(ctx, src);
  try {
    prog.build({dev}, "-cl-std=CL3.0");
  } catch (...) {
  }
  std::printf("build status %d\nlog: %s\n", prog.getBuildInfo<CL_PROGRAM_BUILD_STATUS>(dev),
              prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
  if (prog.getBuildInfo<CL_PROGRAM_BUILD_STATUS>(dev) != CL_BUILD_SUCCESS) return 1;
  auto bins = prog.getInfo<CL_PROGRAM_BINARIES>();
  std::string ptx(bins[0].begin(), bins[0].end());
  for (const char* key : {".version", ".target"}) {
    auto p = ptx.find(key);
    if (p != std::string::npos) std::printf("%s\n", ptx.substr(p, ptx.find('\n', p) - p).c_str());
  }
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> A(128), B(64), D(128);
  for (auto& v : A) v = u(rng);
  for (auto& v : B) v = u(rng);
  cl::Buffer bA(ctx, cl_mem_flags(CL_MEM_COPY_HOST_PTR), size_t(512), A.data());
  cl::Buffer bB(ctx, cl_mem_flags(CL_MEM_COPY_HOST_PTR), size_t(256), B.data());
  cl::Buffer bD(ctx, cl_mem_flags(CL_MEM_READ_WRITE), size_t(512));
  for (int split : {0, 1}) {
    cl::Kernel k(prog, "probe");
    k.setArg(0, bA);
    k.setArg(1, bB);
    k.setArg(2, bD);
    k.setArg(3, split);
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(32), cl::NDRange(32));
    q.enqueueReadBuffer(bD, CL_TRUE, 0, 512, D.data());
    double worst = 0;
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double ref = 0;
        for (int k = 0; k < 8; ++k) ref += double(A[m * 8 + k]) * B[k * 8 + n];
        worst = std::max(worst, std::fabs(ref - D[m * 8 + n]));
      }
    std::printf("split %d: largest error %.3g\n", split, worst);
  }
  const int groups = 132 * 16, n = 4096;
  cl::Buffer bo(ctx, CL_MEM_READ_WRITE, groups * 128 * 4);
  cl::Kernel k(prog, "rate");
  k.setArg(0, bo);
  k.setArg(1, n);
  for (int r = 0; r < 3; ++r) {
    cl::Event e;
    q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(groups * 128), cl::NDRange(128), nullptr,
                           &e);
    e.wait();
    double ms = (e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                 e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) /
                1e6;
    double mmas = double(groups) * 4 * n * 4;  // warps x mma
    std::printf("rate: %.3f ms, %.1f TFLOP/s tf32\n", ms, mmas * 16 * 8 * 8 * 2 / ms / 1e9);
  }
}

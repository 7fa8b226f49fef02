// Lab: the row pass of a separable correlation (radius R) as a Toeplitz product on TF32 tensor
// cores (mma.sync m16n8k8, 3xTF32: hi and lo halves, three products), against the same pass in
// FP32 multiply-adds (4 outputs a work-item, float4s from the cache) and a copy, on one 8192x8192
// f32 plane, each checked against a CPU sum on 20 000 pixels. A warp computes 16 rows x NT * 8
// outputs; the A fragment of column block m serves every n-tile j with m - j in [0, S). Not part
// of the build:
//   g++ -O2 -std=c++17 dev/kernel-lab/mma_rows.cpp -o /tmp/mma_rows -lOpenCL && /tmp/mma_rows
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#include <CL/opencl.hpp>
#include "first_device.hpp"
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

const char* src = R"CLC(
inline uint tf32(float x) { uint r; asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x)); return r; }
inline void mma(float* d, uint a0, uint a1, uint a2, uint a3, uint b0, uint b1) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}
#define S ((8 + 2 * R + 7) / 8)
inline float tap(__constant float* w, int i) { return i >= 0 && i <= 2 * R ? w[i] : 0.f; }
// A warp: 16 rows x NT * 8 outputs; a group: 4 warps down.
__kernel __attribute__((reqd_work_group_size(128, 1, 1)))
void rows_mma(__global const float* src, __global float* dst, int pitch, __constant float* w,
              int origin) {
  src += origin, dst += origin;
  const int lane = get_local_id(0) & 31, warp = get_local_id(0) >> 5, g = lane >> 2, t = lane & 3;
  const int x0 = get_group_id(0) * NT * 8, y0 = (get_group_id(1) * 4 + warp) * 16;
  uint bh[S][2], bl[S][2];
#pragma unroll
  for (int s = 0; s < S; ++s)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float v = tap(w, 8 * s + t + 4 * h - g);
      bh[s][h] = tf32(v);
      bl[s][h] = tf32(v - as_float(bh[s][h]));
    }
  float acc[NT][4];
#pragma unroll
  for (int j = 0; j < NT; ++j) acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0.f;
  const __global float* r0 = src + (y0 + g) * pitch + x0 - R + t;
  const __global float* r1 = r0 + 8 * pitch;
#pragma unroll
  for (int m = 0; m < NT + S - 1; ++m) {
    const float a[4] = {r0[8 * m], r1[8 * m], r0[8 * m + 4], r1[8 * m + 4]};
    uint ah[4], al[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) { ah[i] = tf32(a[i]); al[i] = tf32(a[i] - as_float(ah[i])); }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      const int s = m - j;
      if (s < 0 || s >= S) continue;
      mma(acc[j], al[0], al[1], al[2], al[3], bh[s][0], bh[s][1]);
      mma(acc[j], ah[0], ah[1], ah[2], ah[3], bl[s][0], bl[s][1]);
      mma(acc[j], ah[0], ah[1], ah[2], ah[3], bh[s][0], bh[s][1]);
    }
  }
  __global float* d0 = dst + (y0 + g) * pitch + x0 + 2 * t;
#pragma unroll
  for (int j = 0; j < NT; ++j) {
    vstore2((float2)(acc[j][0], acc[j][1]), 0, d0 + 8 * j);
    vstore2((float2)(acc[j][2], acc[j][3]), 0, d0 + 8 * pitch + 8 * j);
  }
}
// FP32: 4 outputs a work-item, float4s from the cache.
__kernel void rows_fma(__global const float* src, __global float* dst, int pitch,
                       __constant float* w, int origin) {
  src += origin, dst += origin;
  const int x = get_global_id(0) * 4, y = get_global_id(1);
  const __global float* row = src + y * pitch + x - R;
  float4 acc = (float4)(0.f);
#pragma unroll
  for (int k = 0; k <= 2 * R; ++k) acc = fma((float4)(w[k]), vload4(0, row + k), acc);
  vstore4(acc, 0, dst + y * pitch + x);
}
__kernel void copy4(__global const float4* src, __global float4* dst) {
  dst[get_global_id(0)] = src[get_global_id(0)];
}
)CLC";

int main() {
  const int W = 8192, H = 8192, margin = 64, pitch = W + 2 * margin;
  const cl::Device dev = first_device(CL_DEVICE_TYPE_GPU);
  cl::Context ctx(dev);
  cl::CommandQueue q(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(0, 1);
  std::vector<float> in(size_t(pitch) * H);
  for (auto& v : in) v = u(rng);
  cl::Buffer bin(ctx, CL_MEM_COPY_HOST_PTR, in.size() * 4, in.data());
  cl::Buffer bout(ctx, CL_MEM_READ_WRITE, in.size() * 4);
  auto time = [&](cl::Kernel& k, cl::NDRange global, cl::NDRange local) {
    double best = 1e30;
    for (int r = 0; r < 6; ++r) {
      cl::Event e;
      q.enqueueNDRangeKernel(k, cl::NullRange, global, local, nullptr, &e);
      e.wait();
      const double ms = (e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                         e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) /
                        1e6;
      if (r) best = std::min(best, ms);
    }
    return best;
  };
  {
    cl::Program p(ctx, src);
    p.build({dev}, "-D R=1 -D NT=8");
    cl::Kernel k(p, "copy4");
    k.setArg(0, bin);
    k.setArg(1, bout);
    std::printf("copy %.3f ms (8192^2 f32)\n",
                time(k, cl::NDRange(size_t(W) * H / 4), cl::NDRange(256)));
  }
  for (int R : {4, 12, 20}) {
    std::vector<float> w(2 * R + 1);
    double sum = 0;
    for (int i = 0; i <= 2 * R; ++i)
      sum += w[i] = std::exp(-0.5 * (i - R) * (i - R) / (R / 3.0 * R / 3.0));
    for (auto& v : w) v /= sum;
    cl::Buffer bw(ctx, CL_MEM_COPY_HOST_PTR, w.size() * 4, w.data());
    for (int nt : {4, 8, 16}) {
      cl::Program p(ctx, src);
      try {
        p.build({dev}, ("-D R=" + std::to_string(R) + " -D NT=" + std::to_string(nt)).c_str());
      } catch (...) {
        std::printf("%s\n", p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
        return 1;
      }
      for (const char* name : {"rows_mma", "rows_fma"}) {
        if (std::string(name) == "rows_fma" && nt != 8) continue;
        cl::Kernel k(p, name);
        k.setArg(0, bin);
        k.setArg(1, bout);
        k.setArg(2, pitch);
        k.setArg(3, bw);
        k.setArg(4, margin);
        const bool mma = name[5] == 'm';
        const double ms =
            mma ? time(k, cl::NDRange(W / (nt * 8) * 128, H / 64), cl::NDRange(128, 1))
                : time(k, cl::NDRange(W / 4, H), cl::NDRange(64, 4));
        std::vector<float> out(in.size());
        q.enqueueReadBuffer(bout, CL_TRUE, 0, out.size() * 4, out.data());
        double worst = 0;
        for (int i = 0; i < 20000; ++i) {
          const int y = (i * 7919) % H, x = (i * 104729) % W;
          double ref = 0;
          for (int k2 = 0; k2 <= 2 * R; ++k2)
            ref += double(w[k2]) * in[size_t(y) * pitch + margin + x - R + k2];
          worst = std::max(worst,
                           std::fabs(ref - out[size_t(y) * pitch + margin + x]) / std::fabs(ref));
        }
        std::printf("R=%2d %s NT=%2d: %.3f ms, largest relative error %.2g\n", R, name, nt, ms,
                    worst);
      }
    }
  }
}

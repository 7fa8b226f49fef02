// Columns-first lab: times columns.cl's separable single pass (column pass from global memory
// into __local, then the row pass from there; a Gaussian of the sigma given, zero borders) against
// a copy kernel, device-resident on one 8192x8192 f32 plane, and checks 11 rows of each against a
// CPU reference in double. Each variant is CWxTHxROWS[:build options]: float4 columns a group sums
// (its halo included), rows a group, rows per work-item, and columns.cl's lab switches (-D LIN,
// STEPS=n, ROW16, F2, YFIRST, CLAMP, VST, NOCOL, NOROW, STORE1; see there). A variant
// sGWxHxBxVW[:options] runs sliding.cl's walking groups instead: GW work-items of VW floats, H
// rows a group, B rows a batch (switches PD=n, RESTRICT, NOCOL, NOROW). Not part of the build:
//   g++ -O2 -std=c++17 dev/kernel-lab/columns.cpp -o /tmp/columns -lOpenCL
//   /tmp/columns 3 128x16x16 "64x16x8:-D CLAMP" s128x32x16x2     (LAB_CPU=1: the CPU device)
// (run from the project root). The PTX of each
// variant goes to /tmp/cf_<variant>_<radius>.ptx.
#define CL_HPP_TARGET_OPENCL_VERSION 120
#define CL_HPP_MINIMUM_OPENCL_VERSION 120
#define CL_HPP_ENABLE_EXCEPTIONS
#include <CL/opencl.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "first_device.hpp"

static double ms(const cl::Event& e) {
  return (e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
          e.getProfilingInfo<CL_PROFILING_COMMAND_START>()) *
         1e-6;
}

int main(int argc, char** argv) {
  const int W = 8192, Hh = 8192, reps = 7;
  const double sigma = argc > 1 ? atof(argv[1]) : 3.0;
  const int R = (int)std::ceil(4 * sigma);
  std::vector<std::string> variants;
  for (int i = 2; i < argc; ++i) variants.push_back(argv[i]);
  const cl::Device dev = first_device(getenv("LAB_CPU") ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU);
  cl::Context ctx(dev);
  cl::CommandQueue q(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
  std::ifstream f("dev/kernel-lab/columns.cl");
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string src = ss.str();
  std::ifstream f2("dev/kernel-lab/sliding.cl");
  std::stringstream ss2;
  ss2 << f2.rdbuf();
  const std::string sliding_src = ss2.str();
  const int W4 = W / 4, PADL = getenv("LAB_PADL") ? atoi(getenv("LAB_PADL")) : 64,
            pitch4 = getenv("LAB_PITCH4") ? atoi(getenv("LAB_PITCH4")) : W4 + 2 * PADL,
            PADR = R + 64;
  const size_t in_elems = (size_t)(Hh + 2 * PADR) * pitch4 * 4;
  std::vector<float> in(in_elems, 0.f);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> U(0.f, 1.f);
  const int origin4 = PADR * pitch4 + PADL;
  for (int y = 0; y < Hh; ++y)
    for (int x = 0; x < W; ++x) in[(size_t)origin4 * 4 + (size_t)y * pitch4 * 4 + x] = U(rng);
  std::vector<float> w(2 * R + 1);
  double sum = 0;
  for (int i = -R; i <= R; ++i) sum += w[i + R] = std::exp(-i * i / (2 * sigma * sigma));
  for (auto& v : w) v = (float)(v / sum);
  cl::Buffer bin(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_elems * 4, in.data());
  cl::Buffer bout(ctx, CL_MEM_READ_WRITE, (size_t)W * Hh * 4);
  // reference rows (zero borders): column pass then row pass, in double
  const int check_rows[] = {0, 1, 15, 16, 17, 31, 32, 100, 4097, Hh - 2, Hh - 1};
  std::vector<std::vector<float>> ref;
  for (int y : check_rows) {
    std::vector<double> tmp(W + 2 * R, 0.0);
    for (int x = -R; x < W + R; ++x) {
      if (x < 0 || x >= W) continue;
      double a = 0;
      for (int j = -R; j <= R; ++j) {
        const int yy = y + j;
        if (yy < 0 || yy >= Hh) continue;
        a += w[j + R] * in[(size_t)origin4 * 4 + (size_t)yy * pitch4 * 4 + x];
      }
      tmp[x + R] = a;
    }
    std::vector<float> o(W);
    for (int x = 0; x < W; ++x) {
      double a = 0;
      for (int i = -R; i <= R; ++i) a += w[i + R] * tmp[x + i + R];
      o[x] = (float)a;
    }
    ref.push_back(o);
  }
  printf("device %s, %dx%d f32, sigma %g radius %d\n", dev.getInfo<CL_DEVICE_NAME>().c_str(), W, Hh,
         sigma, R);
  for (int round = 0; round < 2; ++round) {
    {
      cl::Program p(ctx, src);
      p.build("-I dev/kernel-lab -D R=1 -D CW=32 -D TH=8 -D LYC=8");
      cl::Kernel k(p, "copy4");
      k.setArg(0, bin);
      k.setArg(1, origin4);
      k.setArg(2, pitch4);
      k.setArg(3, bout);
      k.setArg(4, W4);
      double best = 1e9;
      for (int i = 0; i < reps; ++i) {
        cl::Event e;
        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange(W4, Hh), cl::NDRange(64, 4), nullptr,
                               &e);
        e.wait();
        best = std::min(best, ms(e));
      }
      printf("copy kernel %.3f ms\n", best);
    }
    for (auto& v : variants) {
      int CW, TH, LYC, VW = 0;
      const bool sliding = v[0] == 's';
      if (sliding) {
        if (sscanf(v.c_str(), "s%dx%dx%dx%d", &CW, &TH, &LYC, &VW) != 4) continue;
      } else if (sscanf(v.c_str(), "%dx%dx%d", &CW, &TH, &LYC) != 3) {
        continue;
      }
      const std::string extra = v.find(':') != std::string::npos ? v.substr(v.find(':') + 1) : "";
      std::ostringstream opt;
      opt << "-I dev/kernel-lab ";
      if (sliding)
        opt << "-D R=" << R << " -D GW=" << CW << " -D H=" << TH << " -D B=" << LYC
            << " -D VW=" << VW << " " << extra;
      else
        opt << "-D R=" << R << " -D CW=" << CW << " -D TH=" << TH << " -D LYC=" << LYC << " "
            << extra;
      cl::Program p(ctx, sliding ? sliding_src : src);
      try {
        p.build(opt.str().c_str());
      } catch (...) {
        printf("%s: build failed\n%s\n", v.c_str(),
               p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
        continue;
      }
      cl::Kernel k(p, sliding ? "sw" : "cf");
      struct {
        float w[128];
      } taps{};
      for (int i = 0; i <= 2 * R; ++i) taps.w[i] = w[i];
      k.setArg(0, bin);
      k.setArg(1, sliding ? 4 * origin4 : origin4);
      k.setArg(2, sliding ? 4 * pitch4 : pitch4);
      k.setArg(3, bout);
      k.setArg(4, W4);
      k.setArg(5, Hh);
      k.setArg(6, sizeof(float) * (2 * R + 1), taps.w);
      k.setArg(7, sizeof(float) * (2 * R + 1), taps.w);
      int steps = 1;
      if (extra.find("STEPS=") != std::string::npos)
        steps = atoi(extra.c_str() + extra.find("STEPS=") + 6);
      {
        auto bins = p.getInfo<CL_PROGRAM_BINARIES>();
        std::string name =
            "/tmp/cf_" + std::to_string(&v - &variants[0]) + "_" + std::to_string(R) + ".ptx";
        std::ofstream(name).write((const char*)bins[0].data(), bins[0].size());
      }
      const int H4 = (R + 3) / 4,
                OW = sliding                                    ? CW * VW / 4 - 2 * H4
                     : extra.find("ROW16") != std::string::npos ? ((CW - 2 * H4) & ~3)
                                                                : CW - 2 * H4,
                WG = sliding ? CW : CW * TH / LYC * (extra.find("F2") != std::string::npos ? 2 : 1);
      const int ngx = (W4 + OW - 1) / OW;
      q.enqueueFillBuffer(bout, (float)NAN, 0, (size_t)W * Hh * 4);
      double best = 1e9;
      for (int i = 0; i < reps; ++i) {
        cl::Event e;
        q.enqueueNDRangeKernel(k, cl::NullRange, cl::NDRange((size_t)ngx * WG, Hh / TH / steps),
                               cl::NDRange(WG, 1), nullptr, &e);
        e.wait();
        best = std::min(best, ms(e));
      }
      std::vector<float> out((size_t)W * Hh);
      q.enqueueReadBuffer(bout, CL_TRUE, 0, out.size() * 4, out.data());
      double err = 0;
      for (size_t r = 0; r < ref.size(); ++r)
        for (int x = 0; x < W; ++x) {
          const double dd = std::fabs(out[(size_t)check_rows[r] * W + x] - ref[r][x]);
          err = std::isnan(dd) ? 1e9 : std::max(err, dd);
        }
      printf("cf %-24s %.3f ms  max err %.2e  (WG %d, OW %d)\n", v.c_str(), best, err, WG, OW);
    }
  }
}

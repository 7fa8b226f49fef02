// Kernel lab: times candidate correlation kernel layouts (lab.cl: t1 the old scalar-staged tiled
// kernel, t2/t5 float4/float8/float16 async staging with 4-wide register blocks, t3 hand-written
// staging, t4 blocked direct reads) device-resident on one 8192x8192 f32 plane, checks each
// against a CPU reference on 40 000 pixels, prints the compiler's register report where the driver
// gives one, and writes the 5x5 program's binary (PTX on NVIDIA) to $OUT. Not part of the build:
//   g++ -O2 -std=c++17 dev/kernel-lab/lab.cpp -o /tmp/lab -lOpenCL && /tmp/lab [W H]
// (run from the project root).
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#define CL_HPP_ENABLE_EXCEPTIONS
#include <CL/opencl.hpp>
#include "first_device.hpp"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

static std::string slurp(const char* p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

int main(int argc, char** argv) {
  const int W = argc > 1 ? atoi(argv[1]) : 8192, H = argc > 2 ? atoi(argv[2]) : 8192;
  const char* out = getenv("OUT") ? getenv("OUT") : ".";
  cl::Device dev = first_device(CL_DEVICE_TYPE_GPU);
  if (!dev()) dev = first_device(CL_DEVICE_TYPE_ALL);
  printf("device: %s | %s | local %lu\n", dev.getInfo<CL_DEVICE_NAME>().c_str(),
         dev.getInfo<CL_DRIVER_VERSION>().c_str(),
         (unsigned long)dev.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>());
  cl::Context ctx(dev);
  cl::CommandQueue q(ctx, dev, CL_QUEUE_PROFILING_ENABLE);
  const std::string src = slurp("dev/kernel-lab/lab.cl");
  const int MX = 32, MY = 16;
  const int pitch = (W + 2 * MX + 31) / 32 * 32;
  const size_t in_floats = size_t(pitch) * (H + 2 * MY) + 64;
  const int origin = MY * pitch + MX;
  std::vector<float> host(in_floats);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> U(0, 1);
  for (auto& v : host) v = U(rng);
  cl::Buffer in(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, in_floats * 4, host.data());
  const int dpitch = (W + 31) / 32 * 32;
  cl::Buffer outb(ctx, CL_MEM_READ_WRITE, size_t(dpitch) * H * 4 + 64);
  std::vector<float> res(size_t(dpitch) * H);
  const double pix = double(W) * H;
  auto time_kernel = [&](cl::Kernel& k, cl::NDRange g, cl::NDRange l) {
    double best = 1e30;
    for (int r = 0; r < 8; ++r) {
      cl::Event e;
      q.enqueueNDRangeKernel(k, cl::NullRange, g, l, nullptr, &e);
      e.wait();
      if (r)
        best = std::min(best, double(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                     e.getProfilingInfo<CL_PROFILING_COMMAND_START>()));
    }
    return best;
  };
  // copy limit
  double copy_gpix;
  {
    cl::Program p(ctx, src);
    p.build("-D RX=1 -D RY=1 -D TW=256 -D TH=4 -D WG=64");
    cl::Kernel k(p, "copy4");
    k.setArg(0, in);
    k.setArg(1, outb);
    const double ns = time_kernel(k, cl::NDRange(size_t(dpitch) * H / 4), cl::NullRange);
    copy_gpix = pix / ns;
    printf("copy4: %.1f GB/s, %.1f GPix/s at 8 B/px\n", 8 * pix / ns, copy_gpix);
  }
  struct Cfg {
    const char* name;
    int tw, th, wg, lx;
    int ew = 0;
  };
  std::vector<Cfg> cfgs = {{"t1", 1024, 4, 256, 0}, {"t2", 256, 4, 64, 0}, {"t2", 248, 8, 64, 0},
                           {"t3", 256, 4, 64, 0},   {"t3", 256, 8, 64, 0}, {"t4", 0, 2, 0, 64},
                           {"t4", 0, 4, 0, 64},     {"t4", 0, 8, 0, 64},   {"t4", 0, 4, 0, 128}};
  for (int ew : {4, 8, 16})
    for (int th : {2, 4, 8})
      for (int tw : {256, 512, -1})
        for (int wg : {64, 128}) {
          if (tw == 512 && wg == 64) continue;
          cfgs.push_back({"t5", tw, th, wg, 0, ew});
        }
  struct Filt {
    const char* name;
    int rx, ry;
    std::vector<float> w;
  };
  std::vector<Filt> filts = {{"sobel_dx", 1, 1, {-1, 0, 1, -2, 0, 2, -1, 0, 1}},
                             {"conv5x5", 2, 2, {}},
                             {"conv9x9", 4, 4, {}},
                             {"row_r9", 9, 0, {}},
                             {"col_r9", 0, 9, {}}};
  for (int i = 0; i < 19; ++i) {
    filts[3].w.push_back(U(rng));
    filts[4].w.push_back(U(rng));
  }
  for (int i = 0; i < 25; ++i) filts[1].w.push_back(U(rng) - 0.5f);
  for (int i = 0; i < 81; ++i) filts[2].w.push_back(U(rng) - 0.5f);
  bool dumped = false;
  for (auto& f : filts) {
    cl::Buffer wb(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, f.w.size() * 4, f.w.data());
    const int kw = 2 * f.rx + 1, kh = 2 * f.ry + 1;
    for (auto c : cfgs) {
      if (c.ew) {
        const int hxe = (f.rx + c.ew - 1) / c.ew * c.ew;
        if (c.tw < 0) c.tw = c.ew * c.wg - 2 * hxe;
        c.tw = c.tw / 4 * 4;
      }
      if (c.th == 2 && f.ry > 2) continue;
      std::string opts =
          "-D EW=" + std::to_string(c.ew ? c.ew : 4) + " -D RX=" + std::to_string(f.rx) +
          " -D RY=" + std::to_string(f.ry) + " -D TW=" + std::to_string(c.tw ? c.tw : 256) +
          " -D TH=" + std::to_string(c.th) + " -D WG=" + std::to_string(c.wg ? c.wg : 64) +
          (dev.getInfo<CL_DEVICE_VENDOR>().find("NVIDIA") != std::string::npos ? " -cl-nv-verbose"
                                                                               : "");
      cl::Program p(ctx, src);
      try {
        p.build(opts.c_str());
      } catch (...) {
        printf("%s %s: build failed\n%s\n", f.name, c.name,
               p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
        continue;
      }
      std::string log = p.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev);
      std::string regs;
      {  // pick the ptxas line for our function
        std::string key = std::string("Function properties for ") + c.name;
        size_t pos = log.find(std::string("Compiling entry function '") + c.name + "'");
        if (pos != std::string::npos) {
          size_t u = log.find("Used", pos);
          if (u != std::string::npos) regs = log.substr(u, log.find('\n', u) - u);
        }
        size_t sp = log.find("spill", pos == std::string::npos ? 0 : pos);
        if (sp != std::string::npos && regs.find("spill") == std::string::npos) {
          size_t b = log.rfind('\n', sp);
          regs += " |" + log.substr(b + 1, log.find('\n', sp) - b - 1);
        }
      }
      if (!dumped && f.rx == 2) {  // PTX of the 5x5 build with all kernels
        auto bins = p.getInfo<CL_PROGRAM_BINARIES>();
        std::ofstream(std::string(out) + "/lab_5x5.ptx")
            .write((const char*)bins[0].data(), bins[0].size());
        std::ofstream(std::string(out) + "/lab_5x5_buildlog.txt") << log;
        dumped = true;
      }
      cl::Kernel k(p, c.name);
      int a = 0;
      k.setArg(a++, in);
      k.setArg(a++, origin);
      k.setArg(a++, pitch);
      k.setArg(a++, outb);
      k.setArg(a++, 0);
      k.setArg(a++, dpitch);
      k.setArg(a++, W);
      k.setArg(a++, H);
      k.setArg(a++, wb);
      cl::NDRange g, l;
      if (c.name[1] == '4') {
        g = cl::NDRange((W / 4 + c.lx - 1) / c.lx * c.lx, (H + c.th - 1) / c.th);
        l = cl::NDRange(c.lx, 1);
      } else {
        g = cl::NDRange(size_t((W + c.tw - 1) / c.tw) * c.wg, (H + c.th - 1) / c.th);
        l = cl::NDRange(c.wg, 1);
      }
      q.enqueueFillBuffer(outb, 0.f, 0, size_t(dpitch) * H * 4);
      q.finish();
      double ns;
      try {
        ns = time_kernel(k, g, l);
      } catch (cl::Error& e) {
        printf("%s %s run failed %d\n", f.name, c.name, e.err());
        continue;
      }
      q.enqueueReadBuffer(outb, CL_TRUE, 0, res.size() * 4, res.data());
      double maxerr = 0;
      std::mt19937 r2(7);
      for (int s = 0; s < 40000; ++s) {
        int x = s < 2000 ? (s % 2 ? W - 1 - s % 37 : s % 37) : int(r2() % W),
            y = s < 2000 ? int(r2() % H) : int(r2() % H);
        if (s % 3 == 0 && s >= 2000) y = s % 2 ? H - 1 - s % 17 : s % 17;
        double ref = 0;
        for (int j = 0; j < kh; ++j)
          for (int i = 0; i < kw; ++i)
            ref += f.w[j * kw + i] * host[origin + (y + j - f.ry) * pitch + x + i - f.rx];
        maxerr = std::max(maxerr, std::abs(ref - res[size_t(y) * dpitch + x]));
      }
      printf(
          "%-8s %s ew=%2d tw=%4d th=%2d wg=%3d lx=%3d  %7.1f GPix/s  %5.1f%% copy  err %.1e  %s\n",
          f.name, c.name, c.ew, c.tw, c.th, c.wg, c.lx, pix / ns, 100 * (pix / ns) / copy_gpix,
          maxerr, regs.c_str());
    }
  }
}

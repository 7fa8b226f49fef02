// Ramp probe: does a streamed u8 image come nearer its bare transfer with strips of unequal
// heights? An 8192^2 u8 image through the streamer's pipeline (upload -> one kernel -> download
// per strip, three queues, a ring of 3 slots sized for the tallest strip), unprofiled, for each
// plan given: heights in rows, "a,b,cxN,..." (cxN: N strips of c rows), summing to 8192. Small
// first strips let the download start sooner, small last ones end it sooner; every strip costs
// the driver a fixed time each way. Printed against the image's upload and download at once.
// PROBE_SLOTS=N: a ring of N slots. PROBE_ANY=1: any device (PoCL). Not part of the build:
//   g++ -O2 -std=c++17 dev/kernel-lab/ramp_probe.cpp -o /tmp/ramp -lOpenCL && /tmp/ramp PLAN...
#define CL_TARGET_OPENCL_VERSION 300
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#include <CL/opencl.hpp>
#include "first_device.hpp"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

const char* src = R"CLC(
// [1 2 1] / 4 along the row, in floats, as a one-filter chain's unpack, pass and pack in one.
__kernel void fused(__global const uchar4* in, __global uchar4* out, int n) {
  const int i = get_global_id(0);
  if (i >= n) return;
  const float4 l = convert_float4(in[max(i - 1, 0)]), c = convert_float4(in[i]),
               r = convert_float4(in[min(i + 1, n - 1)]);
  out[i] = convert_uchar4_sat_rte((float4)(l.w, c.x, c.y, c.z) * 0.25f + c * 0.5f +
                                  (float4)(c.y, c.z, c.w, r.x) * 0.25f);
}
)CLC";

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

std::vector<int> parse_plan(const std::string& text) {
  std::vector<int> rows;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const auto x = item.find('x');
    const int h = std::atoi(item.substr(0, x).c_str());
    const int n = x == std::string::npos ? 1 : std::atoi(item.substr(x + 1).c_str());
    for (int k = 0; k < n; ++k) rows.push_back(h);
  }
  return rows;
}

int main(int argc, char** argv) {
  const int W = 8192, H = 8192, reps = 9;
  const int slots = std::getenv("PROBE_SLOTS") ? std::atoi(std::getenv("PROBE_SLOTS")) : 3;
  const cl::Device dev =
      first_device(std::getenv("PROBE_ANY") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU);
  if (!dev()) {
    std::puts("no GPU");
    return 1;
  }
  cl::Context ctx(dev);
  cl::Program prog(ctx, src);
  if (prog.build({dev}) != CL_SUCCESS) {
    std::puts(prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
    return 1;
  }
  cl::CommandQueue qu(ctx, dev), qc(ctx, dev), qd(ctx, dev);
  const size_t image = size_t(W) * H;
  cl::Buffer hin(ctx, CL_MEM_ALLOC_HOST_PTR, image), hout(ctx, CL_MEM_ALLOC_HOST_PTR, image);
  auto* pin =
      static_cast<unsigned char*>(qu.enqueueMapBuffer(hin, CL_TRUE, CL_MAP_WRITE, 0, image));
  auto* pout =
      static_cast<unsigned char*>(qu.enqueueMapBuffer(hout, CL_TRUE, CL_MAP_READ, 0, image));
  for (size_t i = 0; i < image; ++i) pin[i] = (unsigned char)(i * 7);
  cl::Kernel fused(prog, "fused");
  auto best = [&](const std::function<void()>& run) {
    double b = 1e9;
    for (int r = 0; r < reps; ++r) {
      qu.finish();
      qc.finish();
      qd.finish();
      const auto t0 = Clock::now();
      run();
      qu.finish();
      qc.finish();
      qd.finish();
      b = std::min(b, ms(t0, Clock::now()));
    }
    return b;
  };
  cl::Buffer whole(ctx, CL_MEM_READ_WRITE, image), whole2(ctx, CL_MEM_READ_WRITE, image);
  const double bare = best([&] {
    qu.enqueueWriteBuffer(whole, CL_FALSE, 0, image, pin);
    qu.flush();
    qd.enqueueReadBuffer(whole2, CL_FALSE, 0, image, pout);
  });
  std::printf("%s: bare (upload and download at once) %.3f ms; %d slots\n",
              dev.getInfo<CL_DEVICE_NAME>().c_str(), bare, slots);
  for (int a = 1; a < argc; ++a) {
    const std::vector<int> plan = parse_plan(argv[a]);
    int sum = 0, tallest = 0;
    for (int h : plan) sum += h, tallest = std::max(tallest, h);
    if (sum != H) {
      std::printf("%s: %d rows, not %d\n", argv[a], sum, H);
      continue;
    }
    struct Slot {
      cl::Buffer up, down;
      cl::Event downloaded;
    };
    std::vector<Slot> ring(slots);
    for (auto& s : ring) {
      s.up = cl::Buffer(ctx, CL_MEM_READ_WRITE, size_t(tallest) * W);
      s.down = cl::Buffer(ctx, CL_MEM_READ_WRITE, size_t(tallest) * W);
    }
    const double t = best([&] {
      for (auto& s : ring) s.downloaded = cl::Event();
      size_t offset = 0;
      for (size_t k = 0; k < plan.size(); ++k) {
        Slot& s = ring[k % slots];
        const size_t bytes = size_t(plan[k]) * W;
        std::vector<cl::Event> free;
        if (s.downloaded()) free.push_back(s.downloaded);
        cl::Event up, done;
        qu.enqueueWriteBuffer(s.up, CL_FALSE, 0, bytes, pin + offset,
                              free.empty() ? nullptr : &free, &up);
        const int n4 = int(bytes / 4);
        fused.setArg(0, s.up);
        fused.setArg(1, s.down);
        fused.setArg(2, n4);
        std::vector<cl::Event> ready{up};
        qc.enqueueNDRangeKernel(fused, cl::NullRange, cl::NDRange((n4 + 255) / 256 * 256),
                                cl::NDRange(256), &ready, &done);
        std::vector<cl::Event> computed{done};
        qd.enqueueReadBuffer(s.down, CL_FALSE, 0, bytes, pout + offset, &computed, &s.downloaded);
        qu.flush();
        qc.flush();
        qd.flush();
        offset += bytes;
      }
    });
    std::printf("%-44s %2zu strips %.3f ms, %.3fx bare\n", argv[a], plan.size(), t, t / bare);
  }
  return 0;
}

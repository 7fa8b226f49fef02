// Overlap probe: the floor a streamed u8 image meets on a GPU, unprofiled. First an 8192^2 u8
// image's upload and download (pinned host memory) in 1 to 64 pieces: each way alone, both at
// once, and alternating over two queues each way. Then S strips (the argument, 16 by default),
// each unpacked to floats, two memory-bound passes and packed back (4 launches, as a one-filter
// chain's strip) or the same in one launch: alone, beside independent uploads and downloads,
// beside device-to-device copies, and as the streamer's pipeline (upload -> compute -> download
// per strip on three queues, a ring of 3 slots). Last, kernels reading and writing host buffers
// (CL_MEM_ALLOC_HOST_PTR): the bus's time where the driver reads host memory in place.
// PROBE_TRANSFERS=1: the transfers only; PROBE_ANY=1: any device (PoCL). Not part of the build:
//   g++ -O2 -std=c++17 dev/kernel-lab/overlap_probe.cpp -o /tmp/overlap -lOpenCL && /tmp/overlap
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
#include <vector>

const char* src = R"CLC(
__kernel void unpack(__global const uchar4* in, __global float4* out) {
  const size_t i = get_global_id(0);
  out[i] = convert_float4(in[i]);
}
// [1 2 1] / 4 along the row at the 4 pixels of c, l and r its neighbouring vectors.
inline float4 smooth(float4 l, float4 c, float4 r) {
  return (float4)(l.w, c.x, c.y, c.z) * 0.25f + c * 0.5f + (float4)(c.y, c.z, c.w, r.x) * 0.25f;
}
__kernel void pass(__global const float4* in, __global float4* out, int n) {
  const size_t i = get_global_id(0);
  out[i] = smooth(in[max((int)i - 1, 0)], in[i], in[min((int)i + 1, n - 1)]);
}
__kernel void pack(__global const float4* in, __global uchar4* out) {
  const size_t i = get_global_id(0);
  out[i] = convert_uchar4_sat_rte(in[i]);
}
__kernel void fused(__global const uchar4* in, __global uchar4* out, int n) {
  const size_t i = get_global_id(0);
  out[i] = convert_uchar4_sat_rte(smooth(convert_float4(in[max((int)i - 1, 0)]),
                                         convert_float4(in[i]),
                                         convert_float4(in[min((int)i + 1, n - 1)])));
}
)CLC";

using Clock = std::chrono::steady_clock;
double ms(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

int main(int argc, char** argv) {
  const int W = 8192, H = 8192, S = argc > 1 ? std::atoi(argv[1]) : 16, slots = 3, reps = 7;
  const size_t strip_px = size_t(W) * (H / S), n4 = strip_px / 4;
  const cl::Device dev =
      first_device(std::getenv("PROBE_ANY") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU);
  if (!dev()) {
    std::puts("no GPU");
    return 1;
  }
  std::printf("%s, %d strips of %zu px\n", dev.getInfo<CL_DEVICE_NAME>().c_str(), S, strip_px);
  cl::Context ctx(dev);
  cl::Program prog(ctx, src);
  if (prog.build({dev}) != CL_SUCCESS) {
    std::puts(prog.getBuildInfo<CL_PROGRAM_BUILD_LOG>(dev).c_str());
    return 1;
  }
  cl::CommandQueue qu(ctx, dev), qc(ctx, dev), qd(ctx, dev), qd2(ctx, dev);
  const size_t image = size_t(W) * H;
  cl::Buffer hin(ctx, CL_MEM_ALLOC_HOST_PTR, image), hout(ctx, CL_MEM_ALLOC_HOST_PTR, image);
  auto* pin =
      static_cast<unsigned char*>(qu.enqueueMapBuffer(hin, CL_TRUE, CL_MAP_WRITE, 0, image));
  auto* pout =
      static_cast<unsigned char*>(qu.enqueueMapBuffer(hout, CL_TRUE, CL_MAP_READ, 0, image));
  for (size_t i = 0; i < image; ++i) pin[i] = (unsigned char)(i * 7);
  struct Slot {
    cl::Buffer up, a, b, down;
    cl::Event downloaded;
  };
  std::vector<Slot> ring(slots);
  for (auto& s : ring) {
    s.up = cl::Buffer(ctx, CL_MEM_READ_WRITE, strip_px);
    s.a = cl::Buffer(ctx, CL_MEM_READ_WRITE, strip_px * 4);
    s.b = cl::Buffer(ctx, CL_MEM_READ_WRITE, strip_px * 4);
    s.down = cl::Buffer(ctx, CL_MEM_READ_WRITE, strip_px);
  }
  cl::Kernel unpack(prog, "unpack"), pass(prog, "pass"), pack(prog, "pack"), fused(prog, "fused");
  const cl::NDRange global(n4), local(256);
  auto compute = [&](Slot& s, bool one, const std::vector<cl::Event>* wait, cl::Event* done) {
    if (one) {
      fused.setArg(0, s.up);
      fused.setArg(1, s.down);
      fused.setArg(2, int(n4));
      qc.enqueueNDRangeKernel(fused, cl::NullRange, global, local, wait, done);
      return;
    }
    unpack.setArg(0, s.up);
    unpack.setArg(1, s.a);
    qc.enqueueNDRangeKernel(unpack, cl::NullRange, global, local, wait);
    pass.setArg(0, s.a);
    pass.setArg(1, s.b);
    pass.setArg(2, int(n4));
    qc.enqueueNDRangeKernel(pass, cl::NullRange, global, local);
    pass.setArg(0, s.b);
    pass.setArg(1, s.a);
    qc.enqueueNDRangeKernel(pass, cl::NullRange, global, local);
    pack.setArg(0, s.a);
    pack.setArg(1, s.down);
    qc.enqueueNDRangeKernel(pack, cl::NullRange, global, local, nullptr, done);
  };
  auto transfers = [&]() {
    for (int k = 0; k < S; ++k) {
      qu.enqueueWriteBuffer(ring[k % slots].up, CL_FALSE, 0, strip_px, pin + k * strip_px);
      qd.enqueueReadBuffer(ring[(k + 1) % slots].down, CL_FALSE, 0, strip_px, pout + k * strip_px);
    }
  };
  auto best = [&](const char* what, const std::function<void()>& run, cl::CommandQueue* timed) {
    double b = 1e9, c = 1e9;
    for (int r = 0; r < reps; ++r) {
      qu.finish();
      qc.finish();
      qd.finish();
      const auto t0 = Clock::now();
      run();
      if (timed) {
        timed->finish();
        c = std::min(c, ms(t0, Clock::now()));
      }
      qu.finish();
      qc.finish();
      qd.finish();
      b = std::min(b, ms(t0, Clock::now()));
    }
    if (timed)
      std::printf("%-44s all %.3f ms, compute queue %.3f ms (%.1f us a strip)\n", what, b, c,
                  1000 * c / S);
    else
      std::printf("%-44s %.3f ms (%.1f us a strip)\n", what, b, 1000 * b / S);
  };
  cl::Buffer whole(ctx, CL_MEM_READ_WRITE, image), whole2(ctx, CL_MEM_READ_WRITE, image);
  for (const int pieces : {1, 4, 16, 64}) {
    const size_t piece = image / pieces;
    auto up = [&] {
      for (int k = 0; k < pieces; ++k)
        qu.enqueueWriteBuffer(whole, CL_FALSE, k * piece, piece, pin + k * piece);
    };
    auto down = [&] {
      for (int k = 0; k < pieces; ++k)
        qd.enqueueReadBuffer(whole2, CL_FALSE, k * piece, piece, pout + k * piece);
    };
    std::printf("-- the image in %d pieces\n", pieces);
    best("upload", up, nullptr);
    best("download", down, nullptr);
    best(
        "upload and download at once",
        [&] {
          up();
          qu.flush();
          down();
        },
        nullptr);
    // Pieces alternating over two queues each way: a piece's fixed cost under the other's.
    best(
        "at once, each way on two queues",
        [&] {
          for (int k = 0; k < pieces; ++k) {
            (k % 2 ? qc : qu)
                .enqueueWriteBuffer(whole, CL_FALSE, k * piece, piece, pin + k * piece);
            (k % 2 ? qd2 : qd)
                .enqueueReadBuffer(whole2, CL_FALSE, k * piece, piece, pout + k * piece);
            qu.flush();
            qc.flush();
            qd.flush();
            qd2.flush();
          }
          qd2.finish();
        },
        nullptr);
  }
  if (std::getenv("PROBE_TRANSFERS")) return 0;
  for (int one = 0; one < 2; ++one) {
    const char* tag = one ? "1 launch a strip" : "4 launches a strip";
    std::printf("== %s\n", tag);
    best(
        "compute alone",
        [&] {
          for (int k = 0; k < S; ++k) compute(ring[k % slots], one, nullptr, nullptr);
        },
        nullptr);
    best("transfers alone", transfers, nullptr);
    best(
        "compute beside independent transfers",
        [&] {
          transfers();
          qu.flush();
          qd.flush();
          for (int k = 0; k < S; ++k) compute(ring[k % slots], one, nullptr, nullptr);
        },
        &qc);
    best(
        "compute beside device-to-device copies",
        [&] {
          for (int k = 0; k < S; ++k)
            qu.enqueueCopyBuffer(ring[0].b, ring[1].b, 0, 0, strip_px * 4);
          qu.flush();
          for (int k = 0; k < S; ++k) compute(ring[k % slots], one, nullptr, nullptr);
        },
        &qc);
    best(
        "pipeline: upload -> compute -> download",
        [&] {
          for (auto& s : ring) s.downloaded = cl::Event();
          for (int k = 0; k < S; ++k) {
            Slot& s = ring[k % slots];
            std::vector<cl::Event> free;
            if (s.downloaded()) free.push_back(s.downloaded);
            cl::Event up, done;
            qu.enqueueWriteBuffer(s.up, CL_FALSE, 0, strip_px, pin + k * strip_px,
                                  free.empty() ? nullptr : &free, &up);
            std::vector<cl::Event> ready{up};
            compute(s, one, &ready, &done);
            std::vector<cl::Event> computed{done};
            qd.enqueueReadBuffer(s.down, CL_FALSE, 0, strip_px, pout + k * strip_px, &computed,
                                 &s.downloaded);
            qu.flush();
            qc.flush();
            qd.flush();
          }
        },
        nullptr);
  }
  {
    // Kernels on host memory (CL_MEM_ALLOC_HOST_PTR, unmapped): a strip's unpack reading the
    // host buffer and its pack writing one. ~80 us a 4 MiB strip = the bus (zero copy); far less
    // = the driver keeps a device copy of the buffer.
    qu.enqueueUnmapMemObject(hin, pin);
    qu.enqueueUnmapMemObject(hout, pout);
    qu.finish();
    cl::Kernel unpack_at(prog, "unpack"), pack_at(prog, "pack");
    // Each strip's kernel on its region of the host buffer (argument `host`), the plane the other.
    auto per_strip = [&](const char* what, cl::Kernel& kernel, cl::Buffer& buffer, int host,
                         cl_mem_flags flags) {
      std::vector<double> t;
      for (int k = 0; k < S; ++k) {
        cl_buffer_region r{k * strip_px, strip_px};
        cl::Buffer part = buffer.createSubBuffer(flags, CL_BUFFER_CREATE_TYPE_REGION, &r);
        kernel.setArg(host, part);
        kernel.setArg(1 - host, ring[0].a);
        const auto t0 = Clock::now();
        qc.enqueueNDRangeKernel(kernel, cl::NullRange, global, local);
        qc.finish();
        t.push_back(ms(t0, Clock::now()));
      }
      std::sort(t.begin(), t.end());
      std::printf("%s, a strip: min %.1f us, median %.1f, max %.1f\n", what, 1000 * t.front(),
                  1000 * t[t.size() / 2], 1000 * t.back());
    };
    for (int rep = 0; rep < 3; ++rep) {
      per_strip("unpack from host memory", unpack_at, hin, 0, CL_MEM_READ_ONLY);
      per_strip("pack to host memory", pack_at, hout, 1, CL_MEM_WRITE_ONLY);
      const auto t0 = Clock::now();
      void* m = qd.enqueueMapBuffer(hout, CL_TRUE, CL_MAP_READ, 0, image);
      std::printf("map the host output after: %.1f us\n", 1000 * ms(t0, Clock::now()));
      qd.enqueueUnmapMemObject(hout, m);
      qd.finish();
    }
  }
  return 0;
}

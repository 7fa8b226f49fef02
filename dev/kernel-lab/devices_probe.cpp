// Devices probe: what the host's buses give several GPUs at once, unprofiled. Each GPU of every
// platform (devices_of in first_device.hpp) gets its own context, an upload and a download queue, a
// pinned host buffer each way and device buffers; a thread a device moves 64 MiB pieces (uploads,
// downloads, or both at once on the two queues) for a fixed count. Printed: each device alone, then
// all devices together, in GB/s a way, the best of 3. A batch over several devices cannot scale
// past the ratio of the last line to the first. PROBE_ANY=1: every device (PoCL). Not part of the
// build:
//   g++ -O2 -std=c++17 dev/kernel-lab/devices_probe.cpp -o /tmp/devices -lOpenCL -lpthread
#define CL_TARGET_OPENCL_VERSION 300
#define CL_HPP_TARGET_OPENCL_VERSION 300
#define CL_HPP_MINIMUM_OPENCL_VERSION 200
#include <CL/opencl.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "first_device.hpp"

constexpr size_t kPiece = size_t(64) << 20;
constexpr int kPieces = 48;

struct Lane {
  cl::Device device;
  cl::Context context;
  cl::CommandQueue up, down;
  cl::Buffer host_in, host_out, on_device_in, on_device_out;
  void *in = nullptr, *out = nullptr;

  explicit Lane(const cl::Device& d)
      : device(d),
        context(d),
        up(context, d),
        down(context, d),
        host_in(context, CL_MEM_ALLOC_HOST_PTR, kPiece),
        host_out(context, CL_MEM_ALLOC_HOST_PTR, kPiece),
        on_device_in(context, CL_MEM_READ_WRITE, kPiece),
        on_device_out(context, CL_MEM_READ_WRITE, kPiece) {
    in = up.enqueueMapBuffer(host_in, CL_TRUE, CL_MAP_WRITE, 0, kPiece);
    out = down.enqueueMapBuffer(host_out, CL_TRUE, CL_MAP_READ, 0, kPiece);
    std::fill_n(static_cast<char*>(in), kPiece, 7);
    move(true, true, 2);  // first-use costs
  }
  // `pieces` pieces each way asked for, the two ways on their own queues, then both finished.
  void move(bool upload, bool download, int pieces) {
    for (int p = 0; p < pieces; ++p) {
      if (upload) up.enqueueWriteBuffer(on_device_in, CL_FALSE, 0, kPiece, in);
      if (download) down.enqueueReadBuffer(on_device_out, CL_FALSE, 0, kPiece, out);
    }
    up.finish();
    down.finish();
  }
};

// GB/s a way when `lanes` move kPieces pieces each at once (a thread a lane), the best of 3.
double rate(const std::vector<Lane*>& lanes, bool upload, bool download) {
  double best = 1e30;
  for (int r = 0; r < 3; ++r) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> threads;
    for (Lane* lane : lanes) threads.emplace_back([=] { lane->move(upload, download, kPieces); });
    for (auto& t : threads) t.join();
    best = std::min(
        best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return double(kPiece) * kPieces * lanes.size() / best / 1e9;
}

int main() {
  const cl_device_type type = std::getenv("PROBE_ANY") ? CL_DEVICE_TYPE_ALL : CL_DEVICE_TYPE_GPU;
  std::vector<std::unique_ptr<Lane>> lanes;
  for (const cl::Device& d : devices_of(type)) lanes.push_back(std::make_unique<Lane>(d));
  if (lanes.empty()) {
    std::puts("no device");
    return 1;
  }
  std::printf("%d MiB pieces, %d a way a device, GB/s a way (upload | download | both at once)\n",
              int(kPiece >> 20), kPieces);
  auto row = [](const std::string& label, const std::vector<Lane*>& set) {
    std::printf("  %-40s %6.1f | %6.1f | %6.1f\n", label.c_str(), rate(set, true, false),
                rate(set, false, true), rate(set, true, true));
  };
  std::vector<Lane*> all;
  for (size_t i = 0; i < lanes.size(); ++i) {
    all.push_back(lanes[i].get());
    row(std::to_string(i) + " " + lanes[i]->device.getInfo<CL_DEVICE_NAME>() + " alone",
        {lanes[i].get()});
  }
  if (all.size() > 1) row("all " + std::to_string(all.size()) + " at once (the sum)", all);
  return 0;
}

// The buffers of device images gone, kept for the next image of their size (as CuPy's pool keeps
// them: allocating and freeing device memory costs more than a small image's kernels), with the
// commands still queued on them. At most `count` of them and at most `most_bytes` in all; they
// stay counted in the device's bytes_in_use while kept.
#pragma once
#include <deque>
#include <mutex>
#include <vector>

#include "clf/device.hpp"

namespace clf::detail {

class BufferPool {
 public:
  BufferPool(size_t count, uint64_t most_bytes) : count_(count), most_(most_bytes) {}
  // A kept buffer of exactly `bytes` (the most recent), with the events still pending on it in
  // `pending`; an empty buffer when none is kept.
  DeviceBuffer take(size_t bytes, std::vector<cl::Event>& pending);
  // Keeps `buffer` (or releases it, when larger than the pool), dropping the oldest past the
  // limits: OpenCL frees a released buffer once its queued commands have run.
  void give(DeviceBuffer buffer, std::vector<cl::Event> pending);
  void clear();

 private:
  struct Kept {
    DeviceBuffer buffer;
    std::vector<cl::Event> pending;
  };
  const size_t count_;
  const uint64_t most_;
  std::mutex mutex_;
  std::deque<Kept> kept_;  // the most recent last
};

}  // namespace clf::detail

// How many of something fit the device's __local memory: work-items that each own their counts
// (the rank kernels' histograms), copies of a table (the bilateral's, one a lane).
#pragma once
#include <cstddef>
#include <cstdint>

namespace clf_plugins {

// `most`, halved while that many of `bytes_each` pass `local_bytes` (at least 1).
inline int halved_to_fit(size_t bytes_each, uint64_t local_bytes, int most) {
  int count = most;
  while (count > 1 && uint64_t(count) * bytes_each > local_bytes) count /= 2;
  return count;
}

}  // namespace clf_plugins

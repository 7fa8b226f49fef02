// How a kernel whose groups each walk down several rows (or blocks of rows) shares out a strip's
// few rows: fewer a group, so that the launch still has enough groups to keep the device busy.
#pragma once
#include <algorithm>
#include <clf/device.hpp>
#include <cstddef>

namespace clf_plugins {

// Groups a launch keeps in flight at least: `per_unit` a compute unit.
inline size_t min_groups(const clf::Device& device, double per_unit) {
  return size_t(std::max(0.0, per_unit)) * size_t(std::max(1, device.info().compute_units));
}

// Of `units` (rows, blocks of rows) down a launch `across` groups wide, the most a group walks, at
// most `most`, that still makes `least` groups in all; 1 where none does.
inline size_t units_a_group(size_t units, size_t across, size_t most, size_t least) {
  size_t n = std::max<size_t>(1, most);
  while (n > 1 && across * ((units + n - 1) / n) < least) --n;
  return n;
}

}  // namespace clf_plugins

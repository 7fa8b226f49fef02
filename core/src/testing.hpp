// Test hooks: not installed, not part of the public API.
#pragma once
#include <cstdint>

#include "clf/device.hpp"

namespace clf::detail {

struct DeviceTesting {
  // Fault injection on an open device (DeviceOptions::alloc_limit at any time); 0 = off.
  static void set_alloc_limit(Device& device, uint64_t limit);
};

}  // namespace clf::detail

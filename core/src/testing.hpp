// Test hooks: not installed, not part of the public API.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "clf/device.hpp"

namespace clf::detail {

struct DeviceTesting {
  // Fault injection on an open device (DeviceOptions::alloc_limit at any time); 0 = off.
  static void set_alloc_limit(Device& device, uint64_t limit);
};

struct StreamTesting {
  // Every command the streamer enqueues from now on, as "track: name after N" (N: the events it
  // waits for), appended to `log` in the order enqueued; null stops it.
  static void set_command_log(std::vector<std::string>* log);
};

}  // namespace clf::detail

// Devices that share another's context, program cache and options with a tuning of their own: the
// tuner builds its candidate layouts on them, several threads at once. Not part of the public API.
#pragma once
#include <memory>

#include "clf/device.hpp"

namespace clf::detail {

struct DeviceTwin {
  // Its own host queue, recycled buffers and memory count; programs built on it are the
  // original's too.
  static std::shared_ptr<Device> make(const Device& device, const Tuning& tuning);
};

}  // namespace clf::detail

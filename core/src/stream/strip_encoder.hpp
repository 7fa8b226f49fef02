// The compute side of one strip, on the lane's compute queue: the native rows unpacked to stage
// 0's float planes, each stage's input padded by the border rule and its filter enqueued, the
// final planes packed to native rows. It knows nothing of transports: it reads and writes the
// DeviceRows they give it.
#pragma once
#include <vector>

#include "clf/filter.hpp"
#include "clf/pipeline.hpp"
#include "stream/transport.hpp"

namespace clf::detail {

class StripEncoder {
 public:
  // `final_image`: the whole output on the device when it has the layout of the final float planes
  // (single-channel float, in place or resident), for the last stage to write; else null.
  StripEncoder(Device& device, const std::vector<Filter*>& chain, const StripPlan& plan,
               StreamResources& resources, Trace& trace, const RunOptions& options,
               const DeviceRows* final_image);
  // Enqueues the strip's compute commands after strip.ready, reading `in`, shared rows from
  // `previous` (the slot of the strip before), writing `out`. Returns the strip's "computed"
  // event: its last command, which the download and the slot's reuse wait for.
  cl::Event encode(const StripCommands& strip, Slot& slot, const Slot& previous,
                   const DeviceRows& in, const DeviceRows& out);

 private:
  void poison(const Slot& slot);  // RunOptions::poison
  void unpack(const StripCommands& strip, Slot& slot, const Slot& previous, const DeviceRows& in);
  void pad(int s, const Plane& input, Range own);
  void stage(int s, const StripCommands& strip, Slot& slot);
  cl::Event pack(const StripCommands& strip, Slot& slot, const DeviceRows& out);
  void wait_for_stage(int index, int s);
  Plane plane(int s, const DeviceBuffer& buffer, Range own) const;  // stage s's input planes

  Device& device_;
  const std::vector<Filter*>& chain_;
  const StripPlan& plan_;
  Conversions& conversions_;
  const cl::CommandQueue& queue_;
  Trace& trace_;
  const RunOptions& options_;
  const DeviceRows* const final_image_;
  Stage stage_;  // what each filter enqueues through
};

}  // namespace clf::detail

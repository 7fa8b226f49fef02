// How a strip's rows cross between the host and the device, one side at a time, chosen once per
// run (make_upload, make_download):
//   staged    through the slot's pinned staging: the source reads into it, the sink writes from it
//   pinned    DMA straight from / to a whole image in pinned memory
//   in place  CPU devices: the kernels read and write the whole host images (nothing is copied)
//   resident  device images: the kernels read and write them where they are
// A new transport is one class here, chosen in make_upload or make_download.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "stream/resources.hpp"
#include "stream/stream.hpp"
#include "stream/trace.hpp"

namespace clf::detail {

// One strip as its commands are enqueued.
struct StripCommands {
  int index = 0;
  bool first = false;            // the lane's first strip in this run
  Range strip, upload, fresh;    // rows it outputs, rows stage 0 reads, rows that cross the bus
  std::vector<cl::Event> ready;  // what the strip's first kernel waits for
};

// Rows on the device: the strip's first row (upload side: strip.upload.begin; download side:
// strip.strip.begin) starts at sample `first_sample` of `buffer`.
struct DeviceRows {
  cl::Buffer buffer;
  cl_ulong first_sample = 0;
};

// What either side works with: the lane's device, queues and trace, and the run's images.
struct TransportContext {
  Device& device;
  const cl::CommandQueue (&queues)[3];  // by QueueRole
  const Endpoints& ends;
  const StripPlan& plan;
  Trace& trace;
};

class Upload {
 public:
  virtual ~Upload() = default;
  // The strip's fresh rows onto the device, if they must move; what the strip's first kernel must
  // wait for joins strip.ready.
  virtual void enqueue(StripCommands& strip, Slot& slot) = 0;
  // Where the unpack reads rows strip.upload from.
  virtual DeviceRows rows(const StripCommands& strip, const Slot& slot) const = 0;
  virtual bool staged() const { return false; }  // the slots need pinned upload staging
  // No host work per strip: the device orders the slots' reuse by itself.
  virtual bool device_ordered() const { return true; }
  // Rows were taken from the source: a failed run cannot be retried unless the input is in memory.
  virtual bool source_used() const { return false; }
};

class Download {
 public:
  virtual ~Download() = default;
  // Where the pack writes the strip's rows.
  virtual DeviceRows rows(const StripCommands& strip, const Slot& slot) const = 0;
  // The strip's rows to where they are wanted once `computed` has run; returns what the host
  // waits for before land().
  virtual cl::Event enqueue(const StripCommands& strip, Slot& slot, const cl::Event& computed) = 0;
  // The host's part, on the landing thread, once the strip's event has completed.
  virtual void land(int index, const Slot& slot) {}
  // The whole output image on the device (in place, resident), or null.
  virtual const DeviceRows* image() const { return nullptr; }
  virtual bool staged() const { return false; }
  virtual bool device_ordered() const { return true; }
};

std::unique_ptr<Upload> make_upload(const TransportContext& context);
std::unique_ptr<Download> make_download(const TransportContext& context);

}  // namespace clf::detail

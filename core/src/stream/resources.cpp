// The queues, conversion kernels and slot ring a Pipeline keeps per device (resources.hpp).
#include "stream/resources.hpp"

#include "clf/error.hpp"
#include "embedded.hpp"
#include "stream/trace.hpp"

namespace clf::detail {

RingKey RingKey::of(const StripPlan& plan, int slots, bool staged_in, bool staged_out) {
  RingKey key;
  key.slots = slots;
  key.upload_bytes = plan.upload_bytes();
  key.download_bytes = plan.download_bytes();
  key.work_floats = plan.work_floats();
  key.temp_floats = plan.temp_floats();
  key.temps = plan.max_temps();
  key.in_place = plan.in_place();
  key.staged_in = staged_in;
  key.staged_out = staged_out;
  return key;
}

void StreamResources::prepare_queues(Device& device, const QueuesKey& key) {
  if (queues_key_ == key) return;
  queues_key_.reset();
  const cl_command_queue_properties props = key.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  for (int q = 0; q < 3; ++q) {
    if (q > 0 && key.queues == 1) {
      queues[q] = queues[0];
      continue;
    }
    cl_int err = CL_SUCCESS;
    queues[q] = cl::CommandQueue(device.context(), device.device(), props, &err);
    cl_check(err, "clCreateCommandQueue", track_name(Track(q)));
  }
  const int pixel = int(key.type);  // PixelType is numbered as CLF_PIXEL (clf/contract.h)
  // Single-channel rows convert a vector of pixels per work-item where the device likes vectors;
  // three- and four-channel rows 16 pixels where it likes 16-wide ones.
  const int vw = key.vector_width;
  const bool wide = (key.channels == 3 || key.channels == 4) && vw == 16;
  Conversions& c = conversions;
  c.pack_vector = (key.channels == 1 && vw > 1) || wide ? vw : 1;
  c.rows = std::max(1, key.conversion_rows);
  std::string options = "-D CLF_PIXEL=" + std::to_string(pixel) +
                        " -D CLF_CHANNELS=" + std::to_string(key.channels) +
                        " -D CLF_ROWS=" + std::to_string(c.rows);
  if (c.pack_vector > 1) options += " -D VW=" + std::to_string(c.pack_vector);
  cl::Program pack = device.build("clf_pack", clf_kernel_pack_cl, options, Helpers::border);
  cl::Program pad = device.build("clf_pad", clf_kernel_pad_cl, "", Helpers::border);
  c.unpack = device.kernel(pack, c.pack_vector > 1 ? "clf_unpackv" : "clf_unpack");
  c.pack = device.kernel(pack, c.pack_vector > 1 ? "clf_packv" : "clf_pack");
  c.pad_rows = device.kernel(pad, "clf_pad_rows");
  c.pad_cols = device.kernel(pad, "clf_pad_cols");
  queues_key_ = key;
}

void StreamResources::prepare_ring(Device& device, const StripPlan& plan, const RingKey& key) {
  if (ring_key_ == key) return;
  ring_key_.reset();
  ring.clear();  // free the old ring before the new one is counted against the budget
  ring.resize(size_t(key.slots));
  for (auto& slot : ring) {
    for (auto& work : slot.work)
      work = device.alloc(plan.work_floats() * sizeof(float), "strip planes");
    for (int t = 0; t < plan.max_temps(); ++t)
      slot.temps.push_back(device.alloc(plan.temp_floats() * sizeof(float), "filter temp planes"));
    if (plan.in_place()) continue;
    slot.up = device.alloc(plan.upload_bytes(), "upload strip", CL_MEM_READ_ONLY);
    slot.down = device.alloc(plan.download_bytes(), "download strip", CL_MEM_WRITE_ONLY);
    // Pinned host staging, unless the image itself is pinned: DMA runs from/to it while kernels
    // run (pageable memory is several times slower and serialises on a bounce buffer).
    if (key.staged_in)
      slot.staging_in = device.pinned(plan.upload_bytes(), "pinned upload staging");
    if (key.staged_out)
      slot.staging_out = device.pinned(plan.download_bytes(), "pinned download staging");
  }
  ring_key_ = key;
}

uint64_t StreamResources::ring_bytes() const {
  uint64_t bytes = 0;
  for (const auto& slot : ring) {
    bytes += slot.up.bytes() + slot.down.bytes() + slot.work[0].bytes() + slot.work[1].bytes();
    for (const auto& t : slot.temps) bytes += t.bytes();
  }
  return bytes;
}

}  // namespace clf::detail

// The streamer: runs a chain of filters over an image in strips through a ring of device slots,
// with separate upload / compute / download queues. Private to the core; Pipeline::run is its face.
#pragma once
#include <string>
#include <vector>

#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/pipeline.hpp"
#include "clf/rows.hpp"
#include "clf/stats.hpp"

namespace clf::detail {

// The streamer's access to the Stage it hands each filter.
struct StageBinder {
  static void bind(Stage& stage, Device& device, const cl::CommandQueue& queue,
                   const ImageShape& shape, std::vector<cl::Event>* events,
                   std::vector<std::string>* event_names, std::vector<cl::Event>* span_begins) {
    stage.device_ = &device;
    stage.queue_ = &queue;
    stage.channels_ = shape.channels;
    stage.image_rows_ = shape.height;
    stage.pixel_type_ = shape.type;
    stage.events_ = events;
    stage.event_names_ = event_names;
    stage.span_begins_ = span_begins;
  }
  static void set_planes(Stage& stage, const Plane& input, const Plane& output,
                         std::vector<Plane> temps, int first_row) {
    stage.first_row_ = first_row;
    stage.input_ = input;
    stage.output_ = output;
    stage.temps_ = std::move(temps);
  }
};

// One ring slot: the device buffers of a strip in flight and its pinned host staging.
struct Slot {
  DeviceBuffer up, down, work[2];
  std::vector<DeviceBuffer> temps;
  Device::Pinned staging_in, staging_out;  // host side of the transfers, unless images are pinned
  // The last strip that used the slot in this run: when its upload buffer has been read (by its
  // kernels and by the next strip's halo copy) and when its download buffer has been read (its
  // download). The next strip in the slot waits for them on the device.
  cl::Event up_free, downloaded;
};

// Queues, conversion kernels and the slot ring, kept by a Pipeline between runs: a run of the same
// shape reuses them instead of creating queues and allocating strips again (a fixed cost that
// dominated small images). Each part is rebuilt when its key changes.
struct StreamResources {
  std::string queues_key, ring_key;
  cl::CommandQueue queues[3];
  cl::Kernel unpack, pack, pad_rows, pad_cols;
  int pack_vector = 1;  // pixels per work-item of unpack/pack
  std::vector<Slot> ring;

  uint64_t ring_bytes() const;  // device bytes the ring holds (outside a run's own budget)
  void clear() { *this = StreamResources(); }
};

// What a run reads and writes. Rows go through `source` and `sink` (pinned staging on the host
// side), except where whole images allow better: `in` / `out` pinned are DMA'd from and to
// directly, and on CPU devices both images are used in place (zero-copy). Device images (both or
// neither, on the one lane's device) are always used in place.
struct Endpoints {
  ImageShape shape;
  RowSource* source = nullptr;
  RowSink* sink = nullptr;
  const Image* in = nullptr;  // optional: the whole input in memory
  Image* out = nullptr;       // optional: the whole output in memory
  const DeviceImage* device_in = nullptr;
  DeviceImage* device_out = nullptr;
  bool resident() const { return device_in != nullptr; }
};

// A device with the chain built on it and the resources its Pipeline keeps for it.
struct Lane {
  Device* device = nullptr;
  std::vector<Filter*> chain;
  StreamResources* resources = nullptr;
};

// Runs the chain over `ends`; with several lanes (the same chain on several devices), strip i runs
// on lane i mod lanes.
RunStats stream(const std::vector<Lane>& lanes, const Endpoints& ends, const RunOptions& options);

}  // namespace clf::detail

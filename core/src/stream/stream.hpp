// The streamer: runs a chain of filters over an image in strips through a ring of device slots,
// with separate upload / compute / download queues. Private to the core; Pipeline::run is its face.
// stream.cpp says which part lives where.
#pragma once
#include <vector>

#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/pipeline.hpp"
#include "clf/rows.hpp"
#include "clf/stats.hpp"
#include "stream/resources.hpp"

namespace clf::detail {

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

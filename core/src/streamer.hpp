// The streamer: runs a chain of filters over an image in strips through a ring of device slots, with
// separate upload / compute / download queues. Private to the core; Pipeline::run is its face.
#pragma once
#include <vector>

#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/pipeline.hpp"
#include "clf/stats.hpp"

namespace clf::detail {

RunStats stream(Device& device, const std::vector<Filter*>& chain, const Image& in, Image& out,
                const RunOptions& options);

}  // namespace clf::detail

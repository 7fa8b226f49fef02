// What a Pipeline keeps for a device between runs: the three queues, the conversion kernels and
// the ring of slots. A run of the same shape reuses them instead of creating queues and
// allocating strips again (a fixed cost that dominated small images). Each part is rebuilt when
// its key, what it was made for, changes.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "clf/device.hpp"
#include "clf/image.hpp"
#include "stream/strip_plan.hpp"

namespace clf::detail {

// One ring slot: the device buffers of a strip in flight and its pinned host staging.
struct Slot {
  DeviceBuffer up, down, work[2];
  std::vector<DeviceBuffer> temps;
  Device::Pinned staging_in, staging_out;  // host side of staged transfers
  // The last strip that used the slot in this run: when its upload buffer has been read (by its
  // kernels and by the next strip's halo copy) and when its download buffer has been read (its
  // download). The next strip in the slot waits for them on the device.
  cl::Event up_free, downloaded;
};

// What the queues and conversion kernels were made for.
struct QueuesKey {
  int queues = 0;  // 1: one queue does all three jobs
  bool profiling = false;
  PixelType type = PixelType::f32;
  int channels = 0, vector_width = 0, conversion_rows = 1;
  bool operator==(const QueuesKey& o) const {
    return queues == o.queues && profiling == o.profiling && type == o.type &&
           channels == o.channels && vector_width == o.vector_width &&
           conversion_rows == o.conversion_rows;
  }
};

// What the ring was made for: its depth and every buffer's size.
struct RingKey {
  int slots = 0;
  uint64_t upload_bytes = 0, download_bytes = 0, work_floats = 0, temp_floats = 0;
  int temps = 0;
  bool in_place = false;                       // no upload or download buffers
  bool staged_in = false, staged_out = false;  // pinned host staging per side
  bool operator==(const RingKey& o) const {
    return slots == o.slots && upload_bytes == o.upload_bytes &&
           download_bytes == o.download_bytes && work_floats == o.work_floats &&
           temp_floats == o.temp_floats && temps == o.temps && in_place == o.in_place &&
           staged_in == o.staged_in && staged_out == o.staged_out;
  }
  static RingKey of(const StripPlan& plan, int slots, bool staged_in, bool staged_out);
};

// Native rows <-> float planes, and the border fill of a stage's input.
struct Conversions {
  cl::Kernel unpack, pack, pad_rows, pad_cols;
  int pack_vector = 1;  // pixels per work-item of unpack and pack
  int rows = 1;         // rows per work-item of unpack and pack
  // The launch's global y for `strip_rows` rows.
  size_t items_y(size_t strip_rows) const { return (strip_rows + size_t(rows) - 1) / size_t(rows); }
};

enum QueueRole { upload_queue = 0, compute_queue = 1, download_queue = 2 };

struct StreamResources {
  cl::CommandQueue queues[3];  // by QueueRole
  Conversions conversions;
  std::vector<Slot> ring;

  // Makes what the key describes unless it is there already.
  void prepare_queues(Device& device, const QueuesKey& key);
  void prepare_ring(Device& device, const StripPlan& plan, const RingKey& key);
  uint64_t ring_bytes() const;  // device bytes the ring holds (outside a run's own budget)
  void clear() { *this = StreamResources(); }

 private:
  std::optional<QueuesKey> queues_key_;
  std::optional<RingKey> ring_key_;
};

}  // namespace clf::detail

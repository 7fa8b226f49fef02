// Streams rows through a chain of filters in strips. Per strip: the host's rows (from the source,
// a pinned image, or the image in place) -> upload (queue U) -> unpack to float planes, pad and
// filter per stage, pack to native pixels (queue C) -> download (queue D) -> the host's rows (to
// the sink on the landing thread, a pinned image, or in place). Device images are read and
// written where they are. A ring of slots keeps several strips in flight; events order upload ->
// compute -> download per strip, and a slot is reused only after its previous strip has landed.
//
// The parts, each in its file here: the strip plan (geometry), the resources a Pipeline keeps
// (queues, conversion kernels, slots), the transports (one per side, chosen once), the strip
// encoder (the compute commands), the trace, the lane (one device's part of a run), the
// Scheduler (strip i on lane i mod lanes, landing in order) and cyclic rows (chains that wrap
// vertically). This file plans a run within the device budget and retries it with smaller
// strips when the device runs out of memory. docs/ARCHITECTURE.md walks the whole path.
#include "stream/stream.hpp"

#include <algorithm>
#include <chrono>

#include "clf/error.hpp"
#include "stream/cyclic_rows.hpp"
#include "stream/scheduler.hpp"

namespace clf::detail {
namespace {

uint64_t default_budget(const DeviceInfo& info) {
  // Leave room for other users of the device and for the driver's own allocations.
  return info.global_mem_bytes / 2;
}

void check_options(const RunOptions& options) {
  if (options.slots < 1 || options.slots > 64)
    throw Error(ErrorKind::usage,
                "slots must be in [1, 64] (got " + std::to_string(options.slots) + ")");
  if (options.queues != 1 && options.queues != 3)
    throw Error(ErrorKind::usage,
                "queues must be 1 or 3 (got " + std::to_string(options.queues) + ")");
  if (options.strip_rows < 0)
    throw Error(ErrorKind::usage,
                "strip rows must be >= 0 (got " + std::to_string(options.strip_rows) + ")");
}

// "1.5 MiB", "640 KiB", "12 bytes": a size a reader takes in at a glance, never rounded to 0.
std::string readable_bytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

// True when some stage with a vertical halo wraps: without a cyclic plan, its strip is the image.
bool mixes_wrap(const std::vector<StageShape>& stages) {
  for (const StageShape& s : stages)
    if (s.hy > 0 && s.border.mode == BorderMode::wrap) return true;
  return false;
}

// Names RunOptions' fields, not a program's flags: the library is called from C++ and Python too.
Error over_budget(const StripPlan& plan, int slots, uint64_t budget, uint64_t room,
                  bool mixed_wrap) {
  const std::string why = plan.indexable() ? "" : " (a strip buffer passes 2^31 floats)";
  const std::string left = room == budget ? "" : ", " + readable_bytes(room) + " of it left";
  return Error(ErrorKind::device,
               std::to_string(slots) + " strips of " + std::to_string(plan.strip_rows()) +
                   " rows need " + readable_bytes(uint64_t(slots) * plan.slot_bytes()) +
                   " of device memory, over the budget of " + readable_bytes(budget) + left + why +
                   "; raise the budget (max_device_memory) or lower the strips in flight (slots)" +
                   (mixed_wrap ? "; a chain mixing wrap with other vertical borders needs the "
                                 "whole image on the device"
                               : ""),
               CL_MEM_OBJECT_ALLOCATION_FAILURE);
}

}  // namespace

namespace {
// Device memory a lane may use for this run: its budget less what is allocated outside the ring.
struct Room {
  uint64_t budget = 0, fixed = 0;
  uint64_t left() const { return budget > fixed ? budget - fixed : 0; }
};
}  // namespace

// One attempt at a plan: every lane's LaneRun set up, the strips scheduled over them, the stats
// gathered. On failure, `rows_consumed` says whether rows were taken from a source that cannot
// rewind (so the attempt cannot be retried).
void run_plan(const std::vector<Lane>& lanes, const Endpoints& ends, const RunOptions& options,
              const StripPlan& plan, int slots, RunStats& stats, bool& rows_consumed) {
  std::vector<std::unique_ptr<LaneRun>> runs;
  for (size_t l = 0; l < lanes.size(); ++l)
    runs.push_back(
        std::make_unique<LaneRun>(lanes[l], int(l), int(lanes.size()), ends, options, plan, slots));
  try {
    for (auto& run : runs) run->prepare();
    const auto t0 = Clock::now();
    Scheduler(runs, options, plan.strips(), slots).run();
    stats.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    stats.host_enqueue_ms = 0;
    stats.bytes_uploaded = 0;
    stats.bytes_downloaded =
        ends.resident() ? 0 : ends.shape.row_bytes() * size_t(ends.shape.height);
    for (auto& run : runs) run->add_stats(stats, t0);
  } catch (...) {
    for (auto& run : runs) rows_consumed = rows_consumed || (run->source_used() && !ends.in);
    throw;
  }
  stats.device_bytes_peak = 0;
  for (const Lane& lane : lanes)
    stats.device_bytes_peak = std::max(stats.device_bytes_peak, lane.device->peak_bytes_in_use());
}

RunStats stream(const std::vector<Lane>& lanes, const Endpoints& ends, const RunOptions& options) {
  check_options(options);
  if (lanes.empty()) throw Error(ErrorKind::usage, "a run needs at least one device");
  const DeviceInfo& info = lanes[0].device->info();
  const std::vector<StageShape> stages = stage_shapes(lanes[0].chain);
  // In place only where the images fit one buffer each (the driver refuses larger host-pointer
  // buffers with CL_INVALID_BUFFER_SIZE); larger images stream in strips like on a GPU.
  uint64_t max_alloc = lanes[0].device->max_alloc_bytes();
  std::vector<Room> rooms;
  for (const Lane& lane : lanes) {
    max_alloc = std::min(max_alloc, lane.device->max_alloc_bytes());
    // Filter weights and the like, already allocated (a ring kept from the last run is this run's).
    uint64_t ahead = 0;  // what the filters will allocate for this width
    for (const auto& filter : lane.chain) ahead += filter->device_bytes_ahead(ends.shape.width);
    rooms.push_back({options.max_device_memory ? options.max_device_memory
                                               : default_budget(lane.device->info()),
                     lane.device->bytes_in_use() - lane.resources->ring_bytes() + ahead});
  }
  // A chain whose vertical borders all wrap streams cyclically where the source has a second
  // reader (otherwise its one strip is the whole image); in place would be one strip.
  const int wrap_halo = cyclic_halo(stages, ends.shape.height);
  std::unique_ptr<RowSource> second =
      wrap_halo > 0 && ends.source ? ends.source->second_reader() : nullptr;
  const bool cyclic = second != nullptr;
  if (ends.resident() && (lanes.size() != 1 || !ends.device_out))
    throw Error(ErrorKind::usage, "device images run on one device, from one to another");
  const bool in_place =
      ends.resident() || (options.zero_copy && info.is_cpu && ends.in && ends.out && !cyclic &&
                          lanes.size() == 1 && ends.in->byte_size() <= max_alloc);
  std::unique_ptr<CyclicRows> cyclic_rows;
  Endpoints run_ends = ends;
  if (cyclic) {
    cyclic_rows = std::make_unique<CyclicRows>(*ends.source, std::move(second), wrap_halo);
    run_ends.source = cyclic_rows.get();
  }
  RunStats stats;
  stats.queues = options.queues;
  stats.devices = int(lanes.size());
  int requested_rows = options.strip_rows;
  for (int attempt = 0;; ++attempt) {
    auto fits = [&](const StripPlan& P, int slots) {
      for (const Room& room : rooms)
        if (uint64_t(slots) * P.slot_bytes() > room.left()) return false;
      return P.indexable() && P.work_floats() * sizeof(float) <= max_alloc &&
             P.upload_bytes() <= max_alloc && P.temp_floats() * sizeof(float) <= max_alloc;
    };
    const StripChoice choice = choose_strips(stages, ends.shape, in_place, cyclic, info.is_gpu,
                                             requested_rows, options.slots, fits);
    const StripPlan plan(stages, ends.shape, choice.rows, in_place, cyclic);
    const Room tightest =
        *std::min_element(rooms.begin(), rooms.end(),
                          [](const Room& a, const Room& b) { return a.left() < b.left(); });
    if (!fits(plan, choice.slots))
      throw over_budget(plan, choice.slots, tightest.budget, tightest.left(),
                        !cyclic && mixes_wrap(stages));
    for (const Lane& lane : lanes) lane.device->reset_peak();
    stats.strips = plan.strips();
    stats.strip_rows = plan.strip_rows();
    stats.slots = choice.slots;
    stats.device_budget = tightest.budget;
    stats.retries = attempt;
    stats.zero_copy = in_place;
    bool rows_consumed = false;
    try {
      run_plan(lanes, run_ends, options, plan, choice.slots, stats, rows_consumed);
      return stats;
    } catch (const Error& e) {
      for (const Lane& lane : lanes) {
        lane.resources->clear();  // queues that saw a failure, buffers sized for it
        if (e.is_out_of_memory()) lane.device->release_recycled();
      }
      // Out of device memory: retry with half the working set, down to one-row strips (unless a
      // source that cannot rewind has handed out rows already).
      if (!e.is_out_of_memory() || (plan.strip_rows() == 1 && choice.slots == 1) || rows_consumed)
        throw;
      for (Room& room : rooms)
        room.budget = room.fixed + uint64_t(choice.slots) * plan.slot_bytes() / 2;
      requested_rows = 0;
      stats.trace.clear();
    }
  }
}

}  // namespace clf::detail

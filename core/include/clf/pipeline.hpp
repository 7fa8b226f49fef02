// clf::Pipeline: a chain of configured filters run on one device, streamed in strips.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clf/device_image.hpp"
#include "clf/filter.hpp"
#include "clf/image.hpp"
#include "clf/rows.hpp"
#include "clf/stats.hpp"

namespace clf {

class Registry;
namespace detail {
struct StreamResources;
struct Endpoints;
}  // namespace detail

struct RunOptions {
  int strip_rows = 0;              // output rows per strip; 0 = chosen from the memory budget
  int slots = 3;                   // strips in flight (ring of N buffers), >= 1
  int queues = 3;                  // 3 = upload / compute / download queues; 1 = one in-order queue
  uint64_t max_device_memory = 0;  // bytes; 0 = a safe fraction of the device's memory
  bool profile = false;            // collect per-command timings (RunStats busy times, trace)
  // On CPU devices, kernels read the input and write the output image in place (buffers over the
  // host memory, CL_MEM_USE_HOST_PTR): no upload or download copies. Ignored on other devices.
  bool zero_copy = true;
  // Halo rows two neighbouring strips share are read on the device from the previous strip's
  // upload buffer, instead of crossing the bus again, when they are at least this many bytes
  // (below that, resending them costs less than the ordering it adds). Needs slots >= 2.
  uint64_t device_halo_copy_bytes = 256 << 10;
  // Called after strips land (device images: once they are queued), always on the thread that
  // called run(), with done rising to total.
  std::function<void(int done, int total)> progress;
  // set -> stop at the next strip (CPU devices: at the next filter), Error(cancelled)
  const std::atomic<bool>* cancel = nullptr;
  // For testing a filter: each strip's float and temp planes are filled with NaN before the strip
  // is computed, so that a kernel reading what the unpack, the border and the stages before it did
  // not write shows NaN in its results, or faults where it indexes a table with it.
  bool poison = false;
};

// Thread safety: a Pipeline may be shared by threads; its runs (and add) are serialised. Pipelines
// of their own run concurrently, on one Device or on several.
// The largest halo a filter may declare, per side: beyond it no image could be planned (a
// filter's halo past this is refused by add(), naming the filter).
constexpr int max_halo = 1 << 16;

class Pipeline {
 public:
  explicit Pipeline(std::shared_ptr<Device> device);
  // One image's strips spread over several devices, in turn (strip i on device i mod n): every
  // filter is built on each. For one large image; a batch of files goes faster with a Pipeline
  // per device, each taking whole files.
  explicit Pipeline(std::vector<std::shared_ptr<Device>> devices);
  ~Pipeline();
  Pipeline(Pipeline&&) noexcept;

  // Validates `params` against the factory's specs and builds the filter on this device.
  void add(std::shared_ptr<const FilterFactory> factory,
           const std::map<std::string, std::string>& params);
  // "gaussian:sigma=2,border=wrap" looked up in `registry`.
  void add(const Registry& registry, const std::string& spec);
  // A filter created by hand (one device only). One from a Registry's factory keeps its plugin
  // loaded by itself.
  void add(std::unique_ptr<Filter> filter);

  size_t size() const;
  const Filter& filter(size_t index) const;  // as built on the first device
  Device& device() const { return *devices_.front(); }
  const std::vector<std::shared_ptr<Device>>& devices() const { return devices_; }
  Halo halo() const;  // sum over the chain

  // Runs the chain over `in`; `out` is (re)allocated to in's size and type. A pipeline with no
  // filters is refused (Error(usage)), as the Python module refuses one. Streamed output is
  // bit-identical whatever the strip height, slot count or queue count. `in` and `out` may share
  // memory (the same Image, or storage that overlaps): the input is then copied first. Queues and
  // strip buffers stay allocated for the next run of the same shape (they count against the
  // device's budget until the Pipeline goes).
  RunStats run(const Image& in, Image& out, const RunOptions& options = {});
  // Streams rows from `source` to `sink` (files, or anything else not held in memory whole): host
  // memory stays within a few strips (slots x strip rows plus the halo), whatever the height.
  // Output is bit-identical to run() on the same pixels. A chain whose vertical borders all wrap
  // streams too when `source` has a second_reader() (for its last rows); without one, or mixed
  // with other vertical borders, a wrap chain's one strip is the whole image.
  RunStats run(RowSource& source, RowSink& sink, const RunOptions& options = {});
  // Runs the chain from one image in device memory to another on the same device: kernels read
  // `in` and write `out` in place, and nothing crosses the bus. Returns once the commands are
  // queued (progress counts queued strips): they wait on the device for what was queued on the
  // images before, and whatever uses the images next waits for them (DeviceImage). `out` is
  // (re)allocated on that device unless it has in's shape and type and does not overlap it.
  // Output is bit-identical to the host run(). One device only: a pipeline over several, or an
  // image on another Device (a context of its own), is refused (Error(usage)).
  RunStats run(const DeviceImage& in, DeviceImage& out, const RunOptions& options = {});

 private:
  RunStats stream(const detail::Endpoints& ends, const RunOptions& options);
  std::vector<std::shared_ptr<Device>> devices_;
  struct Link;  // a filter (one per device) and what keeps its plugin loaded
  std::vector<Link> links_;
  std::vector<std::unique_ptr<detail::StreamResources>> resources_;  // per device, between runs
  std::unique_ptr<std::mutex> mutex_;                                // serialises add() and run()
};

}  // namespace clf

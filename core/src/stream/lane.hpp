// One lane of a run: a device with its chain, queues and slot ring. It enqueues the strips the
// Scheduler gives it (strip i goes to lane i mod lanes): the upload side's commands, the strip
// encoder's, the download side's; and lands them. The slots are reused in turn, each strip
// waiting on the device for the slot's previous strip.
#pragma once
#include <memory>
#include <vector>

#include "stream/strip_encoder.hpp"
#include "stream/trace.hpp"
#include "stream/transport.hpp"

namespace clf::detail {

class LaneRun;
struct Landing {  // a strip whose download is enqueued
  int index = 0;
  LaneRun* lane = nullptr;
  Slot* slot = nullptr;
  cl::Event downloaded;
};

class LaneRun {
 public:
  LaneRun(const Lane& lane, int lane_index, int lanes, const Endpoints& ends,
          const RunOptions& options, const StripPlan& plan, int slots);
  // Queues, kernels, transports and slots (the Pipeline keeps queues and slots between runs).
  void prepare();
  // One strip: checks for cancellation, then enqueues it in its slot, timing the host's part.
  Landing issue_strip(int index);
  void land(const Landing& job);  // waits for the strip, then the host's part (staged: the sink)
  void finish();
  void add_stats(RunStats& stats, Clock::time_point t0);
  bool source_used() const { return upload_ && upload_->source_used(); }
  bool resident() const { return ends_.resident(); }
  // Device images: the run's last command, which whatever uses them next waits for.
  void record_resident(const cl::Event& last);
  // No host work per strip on either side: the device orders slot reuse by itself.
  bool device_ordered() const { return upload_->device_ordered() && download_->device_ordered(); }

 private:
  Slot& slot_of(int index) { return ring_[size_t((index / lanes_) % slots_)]; }
  std::string strip_tag(int index) const;

  Device& device_;
  const std::vector<Filter*>& chain_;
  const Endpoints& ends_;
  const RunOptions& options_;
  const StripPlan& plan_;
  const int slots_, lane_, lanes_;
  StreamResources& res_;  // kept by the Pipeline
  std::vector<Slot>& ring_ = res_.ring;
  const std::unique_ptr<Trace> trace_;
  const TransportContext transport_context_;
  std::unique_ptr<Upload> upload_;
  std::unique_ptr<Download> download_;
  std::unique_ptr<StripEncoder> encoder_;
  std::vector<Range> fresh_;  // per strip: the rows it uploads from the host
  double enqueue_us_ = 0;     // host time issuing strips
};

}  // namespace clf::detail

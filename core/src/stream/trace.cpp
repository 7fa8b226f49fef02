// The traces (trace.hpp): null, and profiling, which maps device timestamps onto the host clock.
#include "stream/trace.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <vector>

#include "testing.hpp"

namespace clf::detail {

const char* track_name(Track track) {
  switch (track) {
    case Track::upload:
      return "upload";
    case Track::compute:
      return "compute";
    case Track::download:
      return "download";
    case Track::host_read:
      return "host read";
    case Track::host_write:
      return "host write";
  }
  return "?";
}

namespace {
// Tests only: read without the lock first, so that runs pay one atomic load per command.
std::mutex command_log_mutex;
std::atomic<std::vector<std::string>*> command_log{nullptr};
}  // namespace

void StreamTesting::set_command_log(std::vector<std::string>* log) {
  std::lock_guard<std::mutex> lock(command_log_mutex);
  command_log = log;
}

void Trace::command(Track track, const std::string& name, const cl::Event& event, size_t waits,
                    const cl::Event& span_begin) {
  if (command_log.load(std::memory_order_relaxed)) {
    std::lock_guard<std::mutex> lock(command_log_mutex);
    if (auto* log = command_log.load())
      log->push_back(std::string(track_name(track)) + ": " + tag_ + name + " after " +
                     std::to_string(waits));
  }
  record(track, name, event, span_begin);
}

namespace {

class NullTrace final : public Trace {
 public:
  bool profiling() const override { return false; }
  void host_span(Track, const std::string&, Clock::time_point) override {}
  void collect(RunStats&, Clock::time_point) override {}

 private:
  void record(Track, const std::string&, const cl::Event&, const cl::Event&) override {}
};

// Milliseconds covered by the union of [start, end) spans given in microseconds.
double busy_ms(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, cur_start = 0, cur_end = -1;
  for (auto [s, e] : spans) {
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total / 1000.0;
}

class ProfilingTrace final : public Trace {
 public:
  bool profiling() const override { return true; }
  void host_span(Track track, const std::string& name, Clock::time_point start) override {
    std::lock_guard<std::mutex> lock(host_mutex_);  // the landing thread writes the sink
    host_.push_back({track, name, start, Clock::now()});
  }
  void collect(RunStats& stats, Clock::time_point t0) override;

 private:
  void record(Track track, const std::string& name, const cl::Event& event,
              const cl::Event& span_begin) override {
    if (!first_()) {  // its QUEUED time is about now: device time -> host time (collect)
      first_ = event;
      first_enqueued_ = Clock::now();
    }
    device_.push_back({track, strip_tag() + name, event, span_begin});
  }
  struct Command {
    Track track;
    std::string name;
    cl::Event event, span_begin;
  };
  struct HostSpan {
    Track track;
    std::string name;
    Clock::time_point start, end;
  };
  std::vector<Command> device_;
  std::vector<HostSpan> host_;
  std::mutex host_mutex_;
  cl::Event first_;
  Clock::time_point first_enqueued_;
};

void ProfilingTrace::collect(RunStats& stats, Clock::time_point t0) {
  if (!first_()) return;  // no strip
  cl_ulong queued = 0;
  first_.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &queued);
  const double offset_us = std::chrono::duration<double, std::micro>(first_enqueued_ - t0).count() -
                           double(queued) / 1000.0;
  std::vector<std::pair<double, double>> spans[3];
  for (const Command& c : device_) {
    cl_ulong start = 0, end = 0;
    const bool span = c.span_begin() != nullptr;
    if ((span ? c.span_begin : c.event)
                .getProfilingInfo(span ? CL_PROFILING_COMMAND_END : CL_PROFILING_COMMAND_START,
                                  &start) != CL_SUCCESS ||
        c.event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) != CL_SUCCESS)
      continue;
    const double s = double(start) / 1000.0 + offset_us, e = double(end) / 1000.0 + offset_us;
    spans[int(c.track)].push_back({s, e});
    stats.trace.push_back({track_name(c.track), c.name, s, e});
  }
  auto since_t0 = [&](Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(t - t0).count();
  };
  for (const HostSpan& h : host_)
    stats.trace.push_back({track_name(h.track), h.name, since_t0(h.start), since_t0(h.end)});
  // Several lanes: the busiest device's queues.
  stats.upload_busy_ms = std::max(stats.upload_busy_ms, busy_ms(spans[0]));
  stats.compute_busy_ms = std::max(stats.compute_busy_ms, busy_ms(spans[1]));
  stats.download_busy_ms = std::max(stats.download_busy_ms, busy_ms(spans[2]));
  stats.profiled = true;
}

}  // namespace

std::unique_ptr<Trace> make_trace(bool profiling) {
  if (profiling) return std::make_unique<ProfilingTrace>();
  return std::make_unique<NullTrace>();
}

}  // namespace clf::detail

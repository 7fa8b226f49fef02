// What a run records of its commands. Every command a lane enqueues is noted here, in the order it
// is enqueued, whether the run is profiled or not: a profiling trace asks for each command's event
// and turns the timings into RunStats' trace and busy times after the run; the null trace keeps
// nothing. Profiling only adds events: it never adds, drops or reorders a command, and
// test_streaming compares the commands of a run profiled and not to prove it.
#pragma once
#include <chrono>
#include <memory>
#include <string>

#include "clf/cl.hpp"
#include "clf/stats.hpp"

namespace clf::detail {

using Clock = std::chrono::steady_clock;

enum class Track { upload, compute, download, host_read, host_write };
const char* track_name(Track track);

class Trace {
 public:
  virtual ~Trace() = default;
  // Where the command about to be enqueued puts its event: `storage` when the caller needs the
  // event itself (to order later commands) or the trace times the command, else nowhere.
  cl::Event* event(cl::Event& storage, bool needed = false) const {
    return needed || profiling() ? &storage : nullptr;
  }
  virtual bool profiling() const = 0;
  // Names the commands that follow: "strip 7 " (with "device 1 " before it on several devices).
  void begin_strip(std::string tag) { tag_ = std::move(tag); }
  const std::string& strip_tag() const { return tag_; }
  // A command was enqueued on `track` after `waits` events, with `event` (empty unless asked for
  // through event()). `span_begin`: a marker before the command that the span starts at (work a
  // library enqueued between two markers, Stage::enqueue_span).
  void command(Track track, const std::string& name, const cl::Event& event, size_t waits = 0,
               const cl::Event& span_begin = cl::Event());
  // Host work of a strip (reading the source, writing the sink) from `start` to now.
  virtual void host_span(Track track, const std::string& name, Clock::time_point start) = 0;
  // After the run: the recorded timings into `stats`, with times from `t0`.
  virtual void collect(RunStats& stats, Clock::time_point t0) = 0;

 private:
  virtual void record(Track track, const std::string& name, const cl::Event& event,
                      const cl::Event& span_begin) = 0;
  std::string tag_;
};

// The trace of a run: profiling (every command's event) or null.
std::unique_ptr<Trace> make_trace(bool profiling);

}  // namespace clf::detail

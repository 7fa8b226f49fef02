// What a run measured: busy time per queue from OpenCL profiling events, wall time, bytes moved,
// and the trace (Chrome trace-event JSON, opened by Perfetto and chrome://tracing).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace clf {

struct TraceEvent {
  std::string track;                // "upload", "compute", "download", "host read", "host write"
  std::string name;                 // "strip 3 clf_separable_tiled"
  double start_us = 0, end_us = 0;  // from the start of the run
};

struct RunStats {
  double wall_ms = 0;
  double upload_busy_ms = 0, compute_busy_ms = 0, download_busy_ms = 0;  // 0 unless profiled
  double host_enqueue_ms = 0;  // host time spent issuing the strips' commands (all strips)
  uint64_t bytes_uploaded = 0, bytes_downloaded = 0;
  int strips = 0, strip_rows = 0, slots = 0, queues = 0, retries = 0;
  int devices = 1;  // strip i ran on device i mod devices
  uint64_t device_bytes_peak = 0, device_budget = 0;
  bool profiled = false;
  bool zero_copy = false;  // a CPU device read and wrote the images in place: nothing was copied
  std::vector<TraceEvent> trace;

  // (upload + compute + download busy) / wall: 1 = serial, up to 3 with perfect overlap.
  double overlap_ratio() const;
  std::string summary() const;  // the --stats text
};

// Writes stats.trace as trace-event JSON (B/E pairs, one thread track per queue and host thread).
void write_trace_json(const RunStats& stats, const std::string& path);

}  // namespace clf

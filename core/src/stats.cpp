// RunStats text for --stats and the Chrome trace-event JSON for --trace.
#include "clf/stats.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>

#include "clf/error.hpp"

namespace clf {
namespace {
std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}
}  // namespace

double RunStats::overlap_ratio() const {
  if (wall_ms <= 0) return 0;
  return (upload_busy_ms + compute_busy_ms + download_busy_ms) / wall_ms;
}

std::string RunStats::summary() const {
  char buf[1024];
  const double mb = 1024.0 * 1024.0;
  int n = std::snprintf(buf, sizeof buf,
                        "wall %.2f ms; %d strips of %d rows, %d slots, %d queue%s; %s %.1f MiB, "
                        "%s %.1f MiB; device memory peak %.1f MiB of %.1f MiB budget; host issued "
                        "the commands in %.2f ms",
                        wall_ms, strips, strip_rows, slots, queues, queues == 1 ? "" : "s",
                        zero_copy ? "read in place" : "uploaded", bytes_uploaded / mb,
                        zero_copy ? "written in place" : "downloaded", bytes_downloaded / mb,
                        device_bytes_peak / mb, device_budget / mb, host_enqueue_ms);
  std::string text(buf, size_t(std::max(n, 0)));
  if (devices > 1) text += "; strips spread over " + std::to_string(devices) + " devices";
  if (profiled) {
    std::snprintf(buf, sizeof buf,
                  "\nbusy: upload %.2f ms, compute %.2f ms, download %.2f ms; overlap ratio %.2f "
                  "(sum of busy / wall; 1 = serial)",
                  upload_busy_ms, compute_busy_ms, download_busy_ms, overlap_ratio());
    text += buf;
  }
  if (retries)
    text += "\nretried " + std::to_string(retries) +
            "x with smaller strips after running out of device memory";
  return text;
}

void write_trace_json(const RunStats& stats, const std::string& path) {
  std::map<std::string, int> tids;
  for (const char* track : {"host read", "upload", "compute", "download", "host write"})
    tids.emplace(track, int(tids.size()) + 1);
  for (const auto& e : stats.trace) tids.emplace(e.track, int(tids.size()) + 1);
  std::vector<const TraceEvent*> events;
  for (const auto& e : stats.trace) events.push_back(&e);
  std::stable_sort(events.begin(), events.end(), [](const TraceEvent* a, const TraceEvent* b) {
    return a->start_us < b->start_us;
  });
  std::ostringstream out;
  out.precision(3);
  out << std::fixed << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out << "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,\"args\":{\"name\":"
         "\"clfilter\"}}";
  for (const auto& [track, tid] : tids)
    out << ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":" << tid
        << ",\"args\":{\"name\":" << json_string(track)
        << "}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":" << tid
        << ",\"args\":{\"sort_index\":" << tid << "}}";
  for (const TraceEvent* e : events) {
    const int tid = tids[e->track];
    out << ",\n{\"name\":" << json_string(e->name) << ",\"cat\":" << json_string(e->track)
        << ",\"ph\":\"B\",\"pid\":1,\"tid\":" << tid << ",\"ts\":" << e->start_us << "}";
    out << ",\n{\"name\":" << json_string(e->name) << ",\"cat\":" << json_string(e->track)
        << ",\"ph\":\"E\",\"pid\":1,\"tid\":" << tid
        << ",\"ts\":" << std::max(e->end_us, e->start_us) << "}";
  }
  out << "\n]}\n";
  std::ofstream file(path, std::ios::binary | std::ios::trunc);
  file << out.str();
  file.close();
  if (!file) throw Error(ErrorKind::io, "cannot write trace file '" + path + "'");
}

}  // namespace clf

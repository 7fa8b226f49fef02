// The batch engine (see batch.hpp).
#include "batch.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "clf/error.hpp"
#include "jpeg_io.hpp"

namespace clf {

const IoModule& file_io(const std::string& io, const FileJob& job) {
  if (io == "auto" && jpeg_direct(job.in, job.out)) return jpeg_io();
  return io_module();
}

namespace {

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

bool cancelled(const BatchOptions& options) {
  return options.run.cancel && options.run.cancel->load();
}

// One file from IN to OUT renamed into place; what went wrong is the result's error.
FileResult run_file(const FileJob& job, Pipeline& pipeline, const BatchOptions& options,
                    const RunOptions& run) {
  FileResult result{job.in, job.out};
  const auto start = std::chrono::steady_clock::now();
  const IoModule& io = file_io(options.io, job);
  const std::unique_ptr<InputFile> input = io.open_input(job.in, options.run.cancel);
  const std::unique_ptr<OutputFile> output =
      io.open_output(job.out, *input, options.output, options.run.cancel);
  result.stats = pipeline.run(*input, *output, run);
  output->commit();
  result.pixels = uint64_t(input->shape().width) * uint64_t(input->shape().height);
  result.written = true;
  result.warnings = input->warnings();
  for (const auto& w : output->warnings()) result.warnings.push_back(w);
  result.note = output->whole_image_note();
  result.format = output->written();
  result.ms = ms_since(start);
  return result;
}

}  // namespace

std::vector<FileResult> run_files(
    const std::vector<FileJob>& jobs, const std::vector<std::shared_ptr<Device>>& devices,
    const std::function<std::unique_ptr<Pipeline>(const std::shared_ptr<Device>&, int worker)>&
        make_pipeline,
    const BatchOptions& options) {
  if (devices.empty()) throw Error(ErrorKind::usage, "a batch needs at least one device");
  std::vector<FileResult> results(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) results[i].in = jobs[i].in, results[i].out = jobs[i].out;
  if (jobs.empty()) return results;
  const int per_core = int(std::clamp(std::thread::hardware_concurrency(), 1u, 4u));
  const int workers = std::min<int>(
      int(jobs.size()),
      std::max<int>(options.workers > 0 ? options.workers : per_core, int(devices.size())));
  std::vector<std::unique_ptr<Pipeline>> pipelines;
  for (int w = 0; w < workers; ++w) {
    pipelines.push_back(make_pipeline(devices[size_t(w) % devices.size()], w));
    if (options.poll) options.poll();
    if (cancelled(options)) throw Error(ErrorKind::cancelled, "interrupted while building");
  }
  std::atomic<size_t> next{0};
  std::mutex report;
  auto work = [&](Pipeline& pipeline, bool caller) {
    RunOptions run = options.run;
    run.progress = nullptr;
    if (caller && options.poll) run.progress = [&](int, int) { options.poll(); };
    for (size_t i; !cancelled(options) && (i = next++) < jobs.size();) {
      FileResult& result = results[i];
      try {
        result = run_file(jobs[i], pipeline, options, run);
      } catch (const std::exception& e) {
        const auto* error = dynamic_cast<const Error*>(&e);
        if (error && error->kind() == ErrorKind::cancelled) return;
        result.error = e.what();
      }
      if (options.on_file) {
        std::lock_guard<std::mutex> lock(report);
        options.on_file(result);
      }
      if (caller && options.poll) options.poll();
    }
  };
  std::vector<std::thread> threads;
  for (int w = 1; w < workers; ++w)
    threads.emplace_back(work, std::ref(*pipelines[size_t(w)]), false);
  try {
    work(*pipelines[0], true);
  } catch (...) {  // poll threw: stop the others before the error goes up
    for (auto& t : threads) t.join();
    throw;
  }
  for (auto& t : threads) t.join();
  if (cancelled(options)) {
    const auto written = std::count_if(results.begin(), results.end(),
                                       [](const FileResult& r) { return r.written; });
    throw Error(ErrorKind::cancelled, "interrupted after " + std::to_string(written) + " of " +
                                          std::to_string(jobs.size()) + " files were written");
  }
  return results;
}

std::string batch_summary(const std::vector<FileResult>& results, double wall_ms) {
  std::vector<double> ms;
  uint64_t pixels = 0;
  RunStats busy;
  for (const FileResult& r : results) {
    if (!r.written) continue;
    ms.push_back(r.ms);
    pixels += r.pixels;
    busy.upload_busy_ms += r.stats.upload_busy_ms;
    busy.compute_busy_ms += r.stats.compute_busy_ms;
    busy.download_busy_ms += r.stats.download_busy_ms;
    busy.profiled = r.stats.profiled;
  }
  std::sort(ms.begin(), ms.end());
  const double seconds = std::max(wall_ms, 1e-3) / 1000;
  char text[512];
  int n = std::snprintf(text, sizeof text,
                        "batch: %zu of %zu files, %.1f MPix, wall %.1f ms (%.2f files/s, %.1f "
                        "MPix/s)",
                        ms.size(), results.size(), pixels / 1e6, wall_ms, ms.size() / seconds,
                        pixels / 1e6 / seconds);
  if (!ms.empty() && n > 0 && n < int(sizeof text))
    n += std::snprintf(text + n, sizeof text - n,
                       "\na file (IN opened to OUT renamed): %.1f ms shortest, %.1f median, %.1f "
                       "longest",
                       ms.front(), ms[ms.size() / 2], ms.back());
  if (busy.profiled && n > 0 && n < int(sizeof text))
    std::snprintf(text + n, sizeof text - n,
                  "\nbusy, all files: upload %.2f ms, compute %.2f ms, download %.2f ms",
                  busy.upload_busy_ms, busy.compute_busy_ms, busy.download_busy_ms);
  return text;
}

}  // namespace clf

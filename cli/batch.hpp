// Many files through one chain: the engine behind the command line's batches (--output-dir,
// --frames) and Python's clfilter.filter_files. Job threads, each with a pipeline of its own
// built once, take files from one list; a file's rows are decoded, filtered and encoded in
// strips, so files overlap each other's decoding, device work and encoding. A file that fails is
// reported and the others go on; a cancel stops the files in flight (their outputs untouched)
// and takes no new ones.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clf/device.hpp"
#include "clf/pipeline.hpp"
#include "clf/stats.hpp"
#include "io_module.hpp"
#include "jobs.hpp"

namespace clf {

// What became of one file.
struct FileResult {
  std::string in, out;
  bool written = false;
  std::string error;                  // why not, naming the file (empty when written)
  std::vector<std::string> warnings;  // what the output could not keep
  std::string note;                   // a whole-image encoder's note, else empty
  std::string format;                 // what was written: "3840x2160, 3 channels, u8"
  double ms = 0;                      // from opening IN to OUT renamed into place
  uint64_t pixels = 0;                // width x height, when written
  RunStats stats;                     // the streamer's (queues' busy time when run.profile)
};

struct BatchOptions {
  std::string io = "auto";  // "auto": JPEG to JPEG through libjpeg-turbo alone; "oiio"
  OutputOptions output;
  RunOptions run;   // `cancel` stops the batch; `progress` is not used (see `poll`)
  int workers = 0;  // job threads; 0: one per core, at most 4; at least one per device
  // Called on the calling thread between strips and between files (Python checks its signals
  // there); it may set run.cancel.
  std::function<void()> poll;
  // Called once per file as it ends, one call at a time, on any job thread.
  std::function<void(const FileResult&)> on_file;
};

// The codecs for one file: JPEG to JPEG through libjpeg-turbo without loading OpenImageIO (see
// jpeg_io.hpp), unless io is "oiio"; every other file through the OpenImageIO module.
const IoModule& file_io(const std::string& io, const FileJob& job);

// Runs `jobs`: thread w on devices[w mod D], its pipeline from make_pipeline. Results in the
// jobs' order (files not started when a cancel came have neither `written` nor an error).
// Throws Error(cancelled) after the threads have stopped, if run.cancel was set.
std::vector<FileResult> run_files(
    const std::vector<FileJob>& jobs, const std::vector<std::shared_ptr<Device>>& devices,
    const std::function<std::unique_ptr<Pipeline>(const std::shared_ptr<Device>&, int worker)>&
        make_pipeline,
    const BatchOptions& options);

// The --stats text of a batch: files written, pixels, wall time and throughput, each file's time
// (IN opened to OUT renamed: shortest, median, longest), the queues' busy time summed over the
// files when they were profiled.
std::string batch_summary(const std::vector<FileResult>& results, double wall_ms);

}  // namespace clf

// The autotuner: measures each kernel family's candidate layouts on a device and keeps the
// fastest, so that a device nobody measured gets its layout from one tuning run. The winners are
// written to the device's tuned file in the cache directory, which Device::open applies after the
// tuning database on every later run (Device::tuning_source names it).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "clf/device.hpp"

namespace clf {

class Registry;

// One kernel family: the filters that measure it, on images of one pixel type and channel count,
// and the layouts it may take, each a tuning text ("NAME=VALUE,..." over the device's database
// tuning; "" = the database's own).
struct TuneFamily {
  std::string name;
  std::vector<std::string> workloads;  // filter specs, e.g. "gaussian:sigma=3"
  std::vector<std::string> candidates;
  // The images its workloads run on (the bilateral's colour tables are for u8 levels, its pairs
  // for several channels). An integer type's outputs may differ from the database layout's by one
  // level, a float's by 1e-4 of the largest value.
  PixelType type = PixelType::f32;
  int channels = 1;
};
// The families there are, with candidates for this kind of device.
std::vector<TuneFamily> tune_families(const DeviceInfo& info);

struct TuneResult {
  std::string family, chosen;  // chosen: the winning candidate's text ("" = the database's)
  double database_ms = 0, chosen_ms = 0;  // the workloads' summed time per run
  int candidates = 0, failed = 0;         // failed: candidates the device refused
  // "window: 0.201 ms, the database's 0.203 ms (1.01x), 12 candidates, 0 refused: TEXT"
  std::string summary() const;
};

struct TuneOptions {
  // Filters to tune for, run as one chain ("gaussian:sigma=7", "sobel": what the CLI's --filter
  // gives): a workload of every family beside its own, whose times it adds to.
  std::vector<std::string> chain;
  // The measured images' widths and heights (of each family's type and channels), a candidate's
  // time summed over them; none: 4096^2 and 8192^2 on GPUs, 1024^2 else.
  std::vector<std::pair<int, int>> sizes;
  std::function<void(const std::string&)> progress;  // a line per candidate measured
  // Threads that build a family's programs, every candidate's, before any is timed (a GPU's
  // driver compiles side by side); 0: on GPUs the host's cores, at most 8, on CPUs 1; 1: each
  // candidate's as it is timed.
  int build_threads = 0;
};

// Measures every family's candidates on `device` (on a twin of it: its context and programs, a
// tuning of its own), writes the winners to tuned_file(device) and applies them to `device`;
// nothing changes where it throws. A chain's filter the registry lacks, or a bad parameter, is
// Error(usage) before anything is measured. Throws Error(usage) when the
// device has no cache directory to keep them in.
std::vector<TuneResult> tune(const std::shared_ptr<Device>& device, const Registry& registry,
                             const TuneOptions& options = {});
// Where a device's tuning run is kept: <cache_dir>/tuning/<device name>-<driver version>.tuning;
// "" when the device has no cache directory.
std::string tuned_file(const Device& device);
// The same for a device not opened: its description and a cache directory (Environment's).
std::string tuned_file(const DeviceInfo& info, const std::string& cache_dir);

}  // namespace clf

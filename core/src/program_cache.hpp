// The programs one device has built: in memory for the process, and with a cache directory on disk
// as the driver's binaries from a program's second build from source on (seen_before), keyed by a
// hash of the device, its driver, the options and the full source, so that a change to any of them
// builds again. Not on disk for PoCL while its own kernel cache is on (pocl_kernel_cache, from
// DeviceOptions); the directory still holds the tuning.
#pragma once
#include <atomic>
#include <future>
#include <map>
#include <mutex>
#include <string>

#include "clf/cl.hpp"
#include "clf/device.hpp"

namespace clf::detail {

class ProgramCache {
 public:
  // cache_dir: "" keeps programs in memory only; it must exist otherwise.
  ProgramCache(const DeviceInfo& info, cl::Context context, cl::Device device,
               std::string cache_dir, bool pocl_kernel_cache = true);
  // The program for `source` built with `options`: from memory, the disk cache, or compiled.
  // Throws Error(build) naming `name`, with the build log. Safe to call from several threads.
  cl::Program get(const std::string& name, const std::string& source, const std::string& options);
  const std::string& dir() const { return dir_; }
  size_t built() const { return built_; }  // compiled from source (not cached)

 private:
  cl::Program from_disk(const std::string& key, const std::string& options) const;
  bool seen_before(const std::string& key) const;
  void to_disk(const std::string& key, const cl::Program& program) const;
  cl::Program compile(const std::string& name, const std::string& source,
                      const std::string& options);
  const DeviceInfo info_;
  const cl::Context context_;
  const cl::Device device_;
  const std::string dir_;
  const bool binaries_;  // programs on disk in dir_ (not PoCL's with its kernel cache)
  std::mutex mutex_;     // guards programs_
  std::map<std::string, std::shared_future<cl::Program>> programs_;  // built or being built
  std::atomic<size_t> built_{0};
};

}  // namespace clf::detail

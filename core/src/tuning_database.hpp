// The tuning database (core/tuning/devices.tuning, embedded): sections of NAME = VALUE lines, each
// for the devices its key matches. Private to the core; tests read it through this header.
#pragma once
#include <string>
#include <vector>

#include "clf/device.hpp"

namespace clf::detail {

// Applies to `tuning` every section of `database` that matches `info`, the more general first
// ([gpu]/[cpu], [platform], [vendor], [device]; in file order within a rank). Returns the keys of
// the sections applied, as written ("gpu", "device H200"). Throws Error(usage) naming the line of
// anything malformed.
std::vector<std::string> apply_tuning_database(Tuning& tuning, const DeviceInfo& info,
                                               const std::string& database,
                                               const std::string& what = "tuning database");
// The database compiled into the library.
const std::string& tuning_database();
// A tuning run's file for the device (clf::tuned_file): "" without a cache directory.
std::string tuned_path(const DeviceInfo& info, const std::string& cache_dir);
// The database, then the device's tuned file if there is one: what a device opens with. Returns
// where it came from (Device::tuning_source). A tuned file that does not parse is an
// Error(usage) naming it.
std::string initial_tuning(Tuning& tuning, const DeviceInfo& info, const std::string& cache_dir);

}  // namespace clf::detail

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
                                               const std::string& database);
// The database compiled into the library.
const std::string& tuning_database();

}  // namespace clf::detail

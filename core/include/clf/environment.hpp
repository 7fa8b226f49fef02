// The environment variables clfilter's programs honour, read in one place. The library's own
// functions read none: a program calls read_environment() once and passes what it wants on
// (Device::open's selector and DeviceOptions, Registry's directories).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "clf/device.hpp"

namespace clf {

struct Environment {
  std::string device;         // CLF_DEVICE: a Device::open selector
  std::string variant, tile;  // CLF_VARIANT, CLF_TILE: kernel layout overrides (the CLI's)
  std::vector<std::string>
      plugin_path;  // CLF_PLUGIN_PATH, a colon list: searched before the default
  // $XDG_CACHE_HOME/clfilter, else $HOME/.cache/clfilter; "" when CLF_NO_DISK_CACHE is set (not 0).
  std::string cache_dir;
  uint64_t alloc_limit = 0;       // CLF_INJECT_ALLOC_LIMIT: fault injection for tests (bytes)
  std::string build_options;      // CLF_BUILD_OPTIONS: added to every program's build options
  bool pocl_kernel_cache = true;  // POCL_KERNEL_CACHE unset or not 0 (PoCL's own)

  DeviceOptions device_options() const {
    return {cache_dir, alloc_limit, build_options, pocl_kernel_cache};
  }
};

Environment read_environment();

}  // namespace clf

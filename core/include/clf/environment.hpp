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
  // PoCL's kernel cache by PoCL's rule: POCL_CACHE_DIR, else $XDG_CACHE_HOME/pocl/kcache, else
  // $HOME/.cache/pocl/kcache ("" when none is set); and the temporary directory, TMPDIR or /tmp.
  std::string pocl_cache_dir, temp_dir;

  DeviceOptions device_options() const {
    return {cache_dir, alloc_limit, build_options, pocl_kernel_cache};
  }
};

Environment read_environment();

// PoCL offers no device at all where it cannot make its kernel cache (no home directory, a
// read-only one, a service account's). A program calls this before its first OpenCL call: where
// env.pocl_cache_dir can neither be written nor made, it points POCL_CACHE_DIR (setenv) at a
// directory of this user's own, temp_dir/clfilter-pocl-UID (made with mode 0700; not taken when
// another user owns it or others may write it), and returns it; else (PoCL's own will do) "".
std::string use_writable_pocl_cache(const Environment& env);

}  // namespace clf

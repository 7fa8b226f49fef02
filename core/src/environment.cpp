// read_environment: the one place the library reads environment variables.
#include "clf/environment.hpp"

#include <cstdlib>
#include <filesystem>
#include <sstream>

namespace clf {

namespace {
std::string variable(const char* name) {
  const char* value = std::getenv(name);
  return value ? value : "";
}
}  // namespace

Environment read_environment() {
  Environment env;
  env.device = variable("CLF_DEVICE");
  env.variant = variable("CLF_VARIANT");
  env.tile = variable("CLF_TILE");
  std::istringstream path(variable("CLF_PLUGIN_PATH"));
  for (std::string dir; std::getline(path, dir, ':');)
    if (!dir.empty()) env.plugin_path.push_back(dir);
  const std::string no_cache = variable("CLF_NO_DISK_CACHE");
  if (no_cache.empty() || no_cache == "0") {
    const std::string xdg = variable("XDG_CACHE_HOME"), home = variable("HOME");
    if (!xdg.empty())
      env.cache_dir = (std::filesystem::path(xdg) / "clfilter").string();
    else if (!home.empty())
      env.cache_dir = (std::filesystem::path(home) / ".cache" / "clfilter").string();
  }
  env.alloc_limit = std::strtoull(variable("CLF_INJECT_ALLOC_LIMIT").c_str(), nullptr, 10);
  env.build_options = variable("CLF_BUILD_OPTIONS");
  env.pocl_kernel_cache = variable("POCL_KERNEL_CACHE") != "0";
  return env;
}

}  // namespace clf

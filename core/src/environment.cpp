// read_environment: the one place the library reads environment variables; use_writable_pocl_cache
// the one place it sets one (for the program that calls it).
#include "clf/environment.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
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
  namespace fs = std::filesystem;
  // The user's cache directory: $XDG_CACHE_HOME, else $HOME/.cache ("" when neither is set).
  const std::string xdg = variable("XDG_CACHE_HOME"), home = variable("HOME");
  const fs::path cache_home = !xdg.empty()    ? fs::path(xdg)
                              : !home.empty() ? fs::path(home) / ".cache"
                                              : fs::path();
  const std::string no_cache = variable("CLF_NO_DISK_CACHE");
  if ((no_cache.empty() || no_cache == "0") && !cache_home.empty())
    env.cache_dir = (cache_home / "clfilter").string();
  env.alloc_limit = std::strtoull(variable("CLF_INJECT_ALLOC_LIMIT").c_str(), nullptr, 10);
  env.build_options = variable("CLF_BUILD_OPTIONS");
  env.pocl_kernel_cache = variable("POCL_KERNEL_CACHE") != "0";
  const std::string pocl = variable("POCL_CACHE_DIR"), tmp = variable("TMPDIR");
  env.pocl_cache_dir = !pocl.empty()         ? pocl
                       : !cache_home.empty() ? (cache_home / "pocl" / "kcache").string()
                                             : std::string();
  env.temp_dir = tmp.empty() ? "/tmp" : tmp;
  return env;
}

namespace {
// Whether `dir` is a directory this process may write, or the nearest existing one above it is
// (where it would be made).
bool writable_or_makeable(std::filesystem::path dir) {
  std::error_code ec;
  while (!dir.empty() && !std::filesystem::exists(dir, ec)) {
    if (dir == dir.parent_path()) return false;
    dir = dir.parent_path();
  }
  return !dir.empty() && std::filesystem::is_directory(dir, ec) &&
         ::access(dir.c_str(), W_OK | X_OK) == 0;
}
}  // namespace

std::string use_writable_pocl_cache(const Environment& env) {
  if (!env.pocl_cache_dir.empty() && writable_or_makeable(env.pocl_cache_dir)) return "";
  const std::string dir =
      (std::filesystem::path(env.temp_dir) / ("clfilter-pocl-" + std::to_string(::getuid())))
          .string();
  struct stat st {};
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) return "";
  // Not a link, this user's, and no one else's to write: another user's directory (made first, in
  // a shared /tmp) would hand them the kernels this process runs.
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
      (st.st_mode & 022) != 0 || ::access(dir.c_str(), W_OK | X_OK) != 0)
    return "";
  ::setenv("POCL_CACHE_DIR", dir.c_str(), 1);
  return dir;
}

}  // namespace clf

// clf::Registry: finds, loads (Boost.DLL) and owns filter plugins; reports the ones it skipped.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "clf/filter.hpp"

namespace clf {

struct PluginIssue {
  std::string path, reason;  // "path/libfoo.so", "ABI version 7, this clfilter needs 1"
};

class Registry {
 public:
  // Searches, in order: extra_dirs (a program adds clf::read_environment().plugin_path, the
  // CLF_PLUGIN_PATH list), then <libdir>/clfilter/plugins beside libclfilter (the install dir, and
  // the build tree's mirror of it) unless !default_dirs.
  // The first plugin to provide a filter name wins; later ones are reported as shadowed.
  explicit Registry(const std::vector<std::string>& extra_dirs = {}, bool default_dirs = true);
  ~Registry();
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Loads every shared library in `dir` (missing dir: an issue). Returns how many filters it added.
  int load_dir(const std::string& dir);
  int load_file(const std::string& path);

  // Factories keep their plugin library loaded for as long as they (or filters from them) live.
  std::shared_ptr<const FilterFactory> find(const std::string& name) const;
  // Throws Error(usage) "unknown filter 'x' (available: a, b)".
  std::shared_ptr<const FilterFactory> get(const std::string& name) const;
  std::vector<std::shared_ptr<const FilterFactory>> factories() const;  // sorted by name
  const std::vector<PluginIssue>& issues() const { return issues_; }
  const std::vector<std::string>& searched_dirs() const { return searched_; }

  static std::string default_plugin_dir();
  // The plugin ABI version this core loads (clf::plugin_abi_version, without clf/plugin.hpp's
  // Boost.DLL).
  static int abi_version();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<PluginIssue> issues_;
  std::vector<std::string> searched_;
};

}  // namespace clf

// Plugin discovery and loading through Boost.DLL. The registry owns the library handles; each
// factory it hands out keeps its library loaded, and a plugin that cannot be used becomes one
// PluginIssue (path + reason) while the others still load.
#define BOOST_DLL_USE_STD_FS
#include "clf/registry.hpp"

#include <algorithm>
#include <boost/dll/runtime_symbol_info.hpp>
#include <boost/dll/shared_library.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "clf/error.hpp"
#include "clf/plugin.hpp"
#include "nearest_name.hpp"
#include "util.hpp"

namespace fs = std::filesystem;

namespace clf {

struct Registry::Impl {
  std::map<std::string, std::shared_ptr<const FilterFactory>> by_name;
  std::map<std::string, std::string> source_of;  // filter name -> plugin path
  std::vector<std::string> loaded_files;
};

namespace {
using Library = std::shared_ptr<boost::dll::shared_library>;

// Every call from the core into plugin code goes through here. What the plugin throws is rethrown
// as a clf::Error the core creates: an exception whose type lives in the plugin (its vtable and
// type_info in the plugin's image) must not outlive the call, since the plugin may be unloaded
// while the exception unwinds. `filter` prefixes the message ("" where the caller names the
// plugin already, as a load issue does with its path).
template <class Call>
auto into_plugin(const std::string& filter, const char* what, Call&& call) -> decltype(call()) {
  const std::string named = filter.empty() ? "" : filter + ": ";
  try {
    return call();
  } catch (const Error& e) {
    throw Error(e.kind(), e.what(), e.cl_code());
  } catch (const std::bad_alloc&) {
    throw Error(ErrorKind::device, named + "out of host memory in " + what);
  } catch (const std::exception& e) {
    throw Error(ErrorKind::plugin, named + what + " failed: " + e.what());
  } catch (...) {
    throw Error(ErrorKind::plugin,
                named + what + " threw an exception that is not a std::exception");
  }
}

// A filter from a plugin, as the core hands it out: keeps the plugin's library loaded for as long
// as it lives, wherever it goes (a Pipeline, or a caller holding it past the Registry).
class PluginFilter final : public Filter {
 public:
  PluginFilter(Library library, std::unique_ptr<Filter> filter, std::string name)
      : library_(std::move(library)), filter_(std::move(filter)), name_(std::move(name)) {}
  ~PluginFilter() override { filter_.reset(); }  // its code is unmapped after, with library_

  Halo halo() const override {
    return into_plugin(name_, "halo()", [&] { return filter_->halo(); });
  }
  Border border() const override {
    return into_plugin(name_, "border()", [&] { return filter_->border(); });
  }
  int temp_planes() const override {
    return into_plugin(name_, "temp_planes()", [&] { return filter_->temp_planes(); });
  }
  int strip_rows_multiple() const override {
    return into_plugin(name_, "strip_rows_multiple()",
                       [&] { return filter_->strip_rows_multiple(); });
  }
  uint64_t device_bytes_ahead(int width) const override {
    return into_plugin(name_, "device_bytes_ahead()",
                       [&] { return filter_->device_bytes_ahead(width); });
  }
  void enqueue(Stage& stage) override {
    into_plugin(name_, "enqueue()", [&] { filter_->enqueue(stage); });
  }
  std::string describe() const override {
    return into_plugin(name_, "describe()", [&] { return filter_->describe(); });
  }

 private:
  Library library_;
  std::unique_ptr<Filter> filter_;
  std::string name_;
};

// A plugin's factory as the registry hands it out: same contract, every call through into_plugin,
// and the filters it creates wrapped so they keep the library loaded.
class PluginFactory final : public FilterFactory {
 public:
  PluginFactory(Library library, std::shared_ptr<FilterFactory> factory, std::string name)
      : library_(std::move(library)), factory_(std::move(factory)), name_(std::move(name)) {}
  ~PluginFactory() override { factory_.reset(); }

  std::string name() const override { return name_; }
  std::string summary() const override {
    return into_plugin(name_, "summary()", [&] { return factory_->summary(); });
  }
  std::vector<ParamSpec> params() const override {
    return into_plugin(name_, "params()", [&] { return factory_->params(); });
  }
  std::unique_ptr<Filter> create(const Params& params, Device& device) const override {
    auto filter = into_plugin(name_, "create()", [&] { return factory_->create(params, device); });
    if (!filter)
      throw Error(ErrorKind::plugin, name_ + ": the plugin's create() returned no filter");
    return std::make_unique<PluginFilter>(library_, std::move(filter), name_);
  }

 private:
  Library library_;
  std::shared_ptr<FilterFactory> factory_;
  std::string name_;
};
}  // namespace

int Registry::abi_version() { return plugin_abi_version; }

std::string Registry::default_plugin_dir() {
  // <libdir>/clfilter/plugins beside libclfilter: the install tree, and the build tree's mirror.
  const fs::path lib = boost::dll::this_line_location();
  return (lib.parent_path() / "clfilter" / "plugins").string();
}

Registry::Registry(const std::vector<std::string>& extra_dirs, bool default_dirs)
    : impl_(std::make_unique<Impl>()) {
  for (const auto& dir : extra_dirs) load_dir(dir);
  if (!default_dirs) return;
  const std::string builtin = default_plugin_dir();
  std::error_code ec;
  if (fs::is_directory(builtin, ec)) load_dir(builtin);
}

Registry::~Registry() = default;

int Registry::load_dir(const std::string& dir) {
  searched_.push_back(dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    issues_.push_back({dir, "plugin directory not found"});
    return 0;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec))
    if (entry.path().extension() == boost::dll::shared_library::suffix())
      files.push_back(entry.path());
  if (ec) issues_.push_back({dir, "cannot list directory: " + ec.message()});
  std::sort(files.begin(), files.end());  // deterministic order: the first provider of a name wins
  int added = 0;
  for (const auto& file : files) added += load_file(file.string());
  return added;
}

int Registry::load_file(const std::string& path_text) {
  std::error_code fs_ec;
  const fs::path canonical = fs::weakly_canonical(path_text, fs_ec);
  const std::string path = fs_ec ? path_text : canonical.string();
  if (std::find(impl_->loaded_files.begin(), impl_->loaded_files.end(), path) !=
      impl_->loaded_files.end())
    return 0;  // the same file reached through two search paths
  auto library = std::make_shared<boost::dll::shared_library>();
  boost::dll::fs::error_code ec;
  library->load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
  if (ec) {
    char magic[4] = {};
    std::ifstream(path, std::ios::binary).read(magic, 4);
    const bool elf = magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
    issues_.push_back({path, elf ? "cannot load shared library: " + ec.message()
                                 : std::string("not a shared library (no ELF header)")});
    return 0;
  }
  if (!library->has("clf_plugin_abi_version") || !library->has("clf_plugin_entry")) {
    issues_.push_back({path,
                       "not a clfilter plugin: no clf_plugin_abi_version / clf_plugin_entry "
                       "symbol (export one with CLF_PLUGIN)"});
    return 0;
  }
  // The ABI version and tag are plain C-typed functions: safe to call before trusting any C++ type.
  const int abi = library->get_alias<int()>("clf_plugin_abi_version")();
  if (abi != plugin_abi_version) {
    issues_.push_back({path, "ABI version " + std::to_string(abi) + ", this clfilter needs " +
                                 std::to_string(plugin_abi_version) + " (rebuild the plugin)"});
    return 0;
  }
  if (!library->has("clf_plugin_abi_tag")) {
    issues_.push_back({path,
                       "no clf_plugin_abi_tag symbol: built against other clfilter headers "
                       "(rebuild the plugin with CLF_PLUGIN)"});
    return 0;
  }
  const char* tag = library->get_alias<const char*()>("clf_plugin_abi_tag")();
  if (!tag || plugin_abi_tag() != tag) {
    issues_.push_back({path, "built for '" + std::string(tag ? tag : "(none)") +
                                 "', this clfilter is '" + plugin_abi_tag() +
                                 "' (rebuild the plugin with this clfilter's headers "
                                 "and compiler)"});
    return 0;
  }
  PluginManifest manifest;
  try {
    manifest = into_plugin("", "the plugin entry", [&] {
      return library->get_alias<PluginManifest()>("clf_plugin_entry")();
    });
  } catch (const Error& e) {
    issues_.push_back({path, e.what()});
    return 0;
  }
  impl_->loaded_files.push_back(path);
  int added = 0;
  for (auto& factory : manifest.factories) {
    if (!factory) continue;
    std::string name;
    try {
      name = into_plugin("", "name()", [&] { return factory->name(); });
    } catch (const Error& e) {
      issues_.push_back({path, e.what()});
      continue;
    }
    if (auto it = impl_->source_of.find(name); it != impl_->source_of.end()) {
      issues_.push_back(
          {path, "filter '" + name + "' already provided by " + it->second + "; skipped"});
      continue;
    }
    impl_->by_name[name] = std::make_shared<PluginFactory>(library, std::move(factory), name);
    impl_->source_of[name] = path;
    ++added;
  }
  return added;
}

std::shared_ptr<const FilterFactory> Registry::find(const std::string& name) const {
  auto it = impl_->by_name.find(name);
  return it == impl_->by_name.end() ? nullptr : it->second;
}

std::shared_ptr<const FilterFactory> Registry::get(const std::string& name) const {
  if (auto factory = find(name)) return factory;
  std::vector<std::string> names;
  for (const auto& [n, f] : impl_->by_name) names.push_back(n);
  const std::string known = detail::join(names);
  throw Error(ErrorKind::usage,
              "unknown filter '" + name + "'" + did_you_mean(name, names) +
                  " (available: " + (known.empty() ? "none; no plugins were found" : known) + ")");
}

std::vector<std::shared_ptr<const FilterFactory>> Registry::factories() const {
  std::vector<std::shared_ptr<const FilterFactory>> list;
  for (const auto& [name, factory] : impl_->by_name) list.push_back(factory);
  return list;
}

}  // namespace clf

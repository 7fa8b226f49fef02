// Finds and loads clf_io_module for clfilter (see io_module.hpp).
#define BOOST_DLL_USE_STD_FS
#include <boost/dll/shared_library.hpp>
#include <filesystem>
#include <memory>

#include "clf/error.hpp"
#include "clf/registry.hpp"
#include "io_module.hpp"

namespace clf {

// Never unloaded: OpenImageIO keeps threads and caches until the process ends. Held from a global
// of external linkage, so that the store is kept and the library object stays reachable
// (LeakSanitizer counts it as kept, not lost; a file-local global's store was optimised away).
boost::dll::shared_library* io_module_library = nullptr;

const IoModule& io_module() {
  static const IoModule* io = [] {
    // <libdir>/clfilter/plugins is the plugins' directory beside libclfilter; the module sits one
    // up.
    const std::filesystem::path path =
        std::filesystem::path(Registry::default_plugin_dir()).parent_path() /
        ("libclf_io_module" + boost::dll::shared_library::suffix().string());
    auto library = std::make_unique<boost::dll::shared_library>();
    boost::dll::fs::error_code ec;
    library->load(path, boost::dll::load_mode::rtld_lazy | boost::dll::load_mode::rtld_local, ec);
    if (ec || !library->has("clf_io_module"))
      throw Error(ErrorKind::io, "cannot load clfilter's image-file module '" + path.string() +
                                     "': " + (ec ? ec.message() : "no clf_io_module symbol") +
                                     " (reinstall clfilter)");
    const IoModule* table = library->get_alias<const IoModule*()>("clf_io_module")();
    io_module_library = library.release();
    return table;
  }();
  return *io;
}

}  // namespace clf

// The plugin entry: include this in the one source file of a plugin that says CLF_PLUGIN(entry).
// It brings Boost.DLL (for the exported aliases); nothing else of clfilter's does.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "clf/filter.hpp"

#define BOOST_DLL_USE_STD_FS
#include <boost/dll/alias.hpp>

namespace clf {

// Bumped whenever Filter, FilterFactory, Stage, Plane, Params, ParamSpec, Error or PluginManifest
// change layout or meaning. 2: the plugin boundary (Error's vtable in the core) and the ABI tag.
// 3: headers by concept, Stage's fields private, ParamSpec's open bounds, contract.h.
// 4: Stage::pixel_type() and image_rows(); BorderMode::ignore.
// 5: Filter::device_bytes_ahead(); Correlation's WindowReduce; Tuning::extremum_block_rows.
// 6: SeparableCorrelation's epilogue. 7: Stage records its commands through one trace; plugins
// read the tuning by name (Device::knob), so Tuning's layout is no longer part of the ABI.
constexpr int plugin_abi_version = 7;

struct PluginManifest {
  std::vector<std::shared_ptr<FilterFactory>> factories;
};

// What else must match between the core and a plugin for C++ objects to cross: the C++ ABI, the
// standard library and its string ABI, and the sizes of the types that cross. Each side computes
// it from its own headers and compiler; the registry refuses a plugin whose tag differs.
inline const std::string& plugin_abi_tag() {
  static const std::string tag = [] {
    std::string t = "abi " + std::to_string(plugin_abi_version);
#if defined(__GXX_ABI_VERSION)
    t += "; c++abi itanium";
#else
    t += "; c++abi other";
#endif
#if defined(_LIBCPP_VERSION)
    t += "; libc++ " + std::to_string(_LIBCPP_ABI_VERSION);
#elif defined(__GLIBCXX__)
    t += "; libstdc++ cxx11-abi " + std::to_string(_GLIBCXX_USE_CXX11_ABI);
#else
    t += "; stdlib unknown";
#endif
    t += "; sizes";
    for (size_t size : {sizeof(ParamSpec), sizeof(Params), sizeof(Matrix), sizeof(Plane),
                        sizeof(Stage), sizeof(Halo), sizeof(Border), sizeof(PluginManifest),
                        sizeof(DeviceInfo), sizeof(std::string), sizeof(std::shared_ptr<int>)})
      t += " " + std::to_string(size);
    return t;
  }();
  return tag;
}

}  // namespace clf

// In exactly one source file of a plugin: CLF_PLUGIN(function) where `function` returns a
// clf::PluginManifest. Exports, through Boost.DLL aliases, the ABI version and tag (checked before
// anything else is touched) and the entry that lists the plugin's factories.
#define CLF_PLUGIN(entry_function)                                                \
  namespace clf_plugin_exports {                                                  \
  static int abi_version_export() { return ::clf::plugin_abi_version; }           \
  static const char* abi_tag_export() { return ::clf::plugin_abi_tag().c_str(); } \
  static ::clf::PluginManifest entry_export() { return entry_function(); }        \
  }                                                                               \
  BOOST_DLL_ALIAS(clf_plugin_exports::abi_version_export, clf_plugin_abi_version) \
  BOOST_DLL_ALIAS(clf_plugin_exports::abi_tag_export, clf_plugin_abi_tag)         \
  BOOST_DLL_ALIAS(clf_plugin_exports::entry_export, clf_plugin_entry)

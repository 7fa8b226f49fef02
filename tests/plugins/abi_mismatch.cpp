// Test plugin: built for another plugin ABI; the registry must refuse it before calling its entry.
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

namespace {
int wrong_abi() { return clf::plugin_abi_version + 1000; }
clf::PluginManifest entry() { throw "must never be called"; }
}  // namespace

BOOST_DLL_ALIAS(wrong_abi, clf_plugin_abi_version)
BOOST_DLL_ALIAS(entry, clf_plugin_entry)

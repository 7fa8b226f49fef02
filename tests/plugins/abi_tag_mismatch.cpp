// Test plugin: the right ABI version but another ABI tag (another standard library or layout); the
// registry must refuse it, with both tags, before calling its entry.
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

namespace {
int abi() { return clf::plugin_abi_version; }
const char* tag() { return "abi 2; c++abi itanium; libc++ 1; sizes 1 2 3"; }
clf::PluginManifest entry() { throw "must never be called"; }
}  // namespace

BOOST_DLL_ALIAS(abi, clf_plugin_abi_version)
BOOST_DLL_ALIAS(tag, clf_plugin_abi_tag)
BOOST_DLL_ALIAS(entry, clf_plugin_entry)

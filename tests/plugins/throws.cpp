// Test plugin: its entry throws; the registry reports it and goes on.
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

#include <stdexcept>

namespace {
clf::PluginManifest manifest() { throw std::runtime_error("factory exploded on purpose"); }
}  // namespace

CLF_PLUGIN(manifest)

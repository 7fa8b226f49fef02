// Test plugin: test_raises, whose create() throws what a plugin may throw: a clf::Error, an
// exception type of the plugin's own (its vtable lives in this library), or something that is not
// a std::exception. The core must hand each to the caller intact, even once this library is gone.
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

namespace {
using namespace clf;

struct PluginOwnError : std::exception {
  const char* what() const noexcept override { return "an exception type of the plugin's own"; }
};

class RaisesFactory : public FilterFactory {
 public:
  std::string name() const override { return "test_raises"; }
  std::string summary() const override { return "create() throws (test plugin)"; }
  std::vector<ParamSpec> params() const override {
    ParamSpec kind{"kind", ParamType::enum_, "error", "what create() throws"};
    kind.choices = {"error", "own", "other"};
    return {kind};
  }
  std::unique_ptr<Filter> create(const Params& p, Device&) const override {
    const std::string kind = p.get_string("kind");
    if (kind == "error") throw Error(ErrorKind::usage, "test_raises: kind=error, raised on purpose");
    if (kind == "own") throw PluginOwnError();
    throw 42;
  }
};

PluginManifest manifest() { return {{std::make_shared<RaisesFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

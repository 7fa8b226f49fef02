// Test plugin: a well-formed plugin with one filter, test_scale (multiplies by `factor`). Its
// `halo` claims pixels it does not read, so that tests can give the planner any halo.
#include <clf/correlate.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

namespace {
using namespace clf;

class Scale : public Filter {
 public:
  Scale(Device& device, float factor, int halo)
      : halo_(halo), pass_(device, 0, 0, {factor}, 0.f, "test_scale") {}
  Halo halo() const override { return {halo_, halo_}; }
  Border border() const override { return {}; }
  void enqueue(Stage& stage) override { pass_.enqueue(stage, stage.input(), stage.output()); }
  std::string describe() const override { return "test_scale"; }

 private:
  int halo_;
  Correlation pass_;
};

class ScaleFactory : public FilterFactory {
 public:
  std::string name() const override { return "test_scale"; }
  std::string summary() const override { return "multiplies every pixel by factor (test plugin)"; }
  std::vector<ParamSpec> params() const override {
    return {{"factor", ParamType::float_, "2", "the multiplier", -100, 100},
            {"halo", ParamType::int_, "0", "pixels claimed on each side", 0, 1 << 21}};
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    return std::make_unique<Scale>(device, float(p.get_float("factor")), p.get_int("halo"));
  }
};

PluginManifest manifest() { return {{std::make_shared<ScaleFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

// emboss: a sample out-of-tree plugin. Reads top to bottom: parameters, validation, halo, enqueue.
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

#include "emboss_kernels.hpp"  // emboss_emboss_cl: emboss.cl, embedded by clfilter_add_plugin

namespace {
using namespace clf;

class Emboss : public Filter {
 public:
  Emboss(Device& device, float strength, Border border) : strength_(strength), border_(border) {
    // The tiled layout the core picks for this device, forced to tiled: this kernel stages its
    // window in local memory on every device.
    tiling_ = choose_tiling(device, 1, 1);
    if (tiling_.variant != Variant::tiled) tiling_ = Tiling{Variant::tiled, 64, 4, 64};
    kernel_ = device.kernel(
        device.build("emboss.cl", emboss_emboss_cl, tiling_.defines(), Helpers::stage), "emboss");
  }
  Halo halo() const override { return {1, 1}; }
  Border border() const override { return border_; }
  void enqueue(Stage& stage) override {
    KernelArgs(kernel_) << stage.input() << stage.output() << stage.width() << stage.rows()
                        << strength_;
    stage.launch(kernel_, tiling_.global(stage.width(), stage.rows(), stage.channels()),
                 tiling_.local(), "emboss");
  }
  std::string describe() const override {
    return "emboss strength " + std::to_string(strength_) + ", " + tiling_.describe();
  }

 private:
  float strength_;
  Border border_;
  Tiling tiling_;
  cl::Kernel kernel_;
};

class EmbossFactory : public FilterFactory {
 public:
  std::string name() const override { return "emboss"; }
  std::string summary() const override {
    return "relief lit from the top left (sample out-of-tree plugin)";
  }
  std::vector<ParamSpec> params() const override {
    return with_border_params({ParamSpec::number("strength", "how strong the relief is")
                                   .fallback("1")
                                   .at_least(0)
                                   .at_most(100)});
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    return std::make_unique<Emboss>(device, float(p.get_float("strength")), border_from_params(p));
  }
};

PluginManifest manifest() { return {{std::make_shared<EmbossFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

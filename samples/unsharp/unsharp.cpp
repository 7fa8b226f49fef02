// unsharp: out = in + amount * (in - gaussian(in)), an unsharp mask composed from the core's
// Gaussian (clf::gaussian_taps and its radius rule) and a kernel of its own.
#include <clf/correlate.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

#include "unsharp_kernels.hpp"  // unsharp_unsharp_cl

namespace {
using namespace clf;

class Unsharp : public Filter {
 public:
  Unsharp(Device& device, double sigma, float amount, Border border)
      : blur_(device, gaussian_taps(sigma, gaussian_radius(sigma)),
              gaussian_taps(sigma, gaussian_radius(sigma)), 0.f, "unsharp_blur"),
        amount_(amount),
        border_(border),
        kernel_(device.kernel(device.build("unsharp.cl", unsharp_unsharp_cl, "", Helpers::stage),
                              "unsharp_combine")) {}
  Halo halo() const override { return blur_.halo(); }
  Border border() const override { return border_; }
  // The blur's own temp planes first (its row pass), then one for the blurred image.
  int temp_planes() const override { return blur_.temp_planes() + 1; }
  void enqueue(Stage& stage) override {
    const Plane& blurred = stage.temp(blur_.temp_planes());
    blur_.enqueue(stage, stage.input(), blurred);
    KernelArgs(kernel_) << stage.input() << blurred << stage.output() << stage.width()
                        << stage.rows() << amount_;
    stage.launch(kernel_,
                 cl::NDRange((size_t(stage.width()) + 63) / 64 * 64, size_t(stage.rows()),
                             size_t(stage.channels())),
                 cl::NDRange(64, 1, 1), "unsharp_combine");
  }
  std::string describe() const override { return "unsharp mask, blur " + blur_.describe(); }

 private:
  SeparableCorrelation blur_;
  float amount_;
  Border border_;
  cl::Kernel kernel_;
};

class UnsharpFactory : public FilterFactory {
 public:
  std::string name() const override { return "unsharp"; }
  std::string summary() const override { return "unsharp mask: in + amount (in - gaussian(in))"; }
  std::vector<ParamSpec> params() const override {
    return with_border_params({
        ParamSpec::number("sigma", "the blur's standard deviation")
            .fallback("2")
            .above(0)
            .at_most(64),
        ParamSpec::number("amount", "how much of the detail is added back")
            .fallback("1")
            .at_least(0),
    });
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    return std::make_unique<Unsharp>(device, p.get_float("sigma"), float(p.get_float("amount")),
                                     border_from_params(p));
  }
};

PluginManifest manifest() { return {{std::make_shared<UnsharpFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

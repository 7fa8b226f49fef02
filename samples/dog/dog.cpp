// dog: the difference of two Gaussians, gaussian(in, sigma) - gaussian(in, k sigma), a band-pass
// (edge and blob detection), composed from the core's Gaussian (clf::gaussian_taps and its radius
// rule) run twice into temp planes, and a kernel of its own that subtracts.
#include <algorithm>
#include <clf/correlate.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

#include "dog_kernels.hpp"  // dog_dog_cl

namespace {
using namespace clf;

SeparableCorrelation gaussian(Device& device, double sigma, const char* name) {
  const std::vector<float> taps = gaussian_taps(sigma, gaussian_radius(sigma));
  return SeparableCorrelation(device, taps, taps, 0.f, name);
}

class DifferenceOfGaussians : public Filter {
 public:
  DifferenceOfGaussians(Device& device, double sigma, double ratio, Border border)
      : narrow_(gaussian(device, sigma, "dog_narrow")),
        wide_(gaussian(device, sigma * ratio, "dog_wide")),
        border_(border),
        kernel_(device.kernel(device.build("dog.cl", dog_dog_cl, "", Helpers::stage),
                              "dog_subtract")) {}
  // The wide blur has the larger window; the narrow one reads a part of the same halo.
  Halo halo() const override { return wide_.halo(); }
  Border border() const override { return border_; }
  // The blurs' own temp plane first (their row pass, when they take two), then one for each blur.
  int temp_planes() const override { return blur_temps() + 2; }
  void enqueue(Stage& stage) override {
    const Plane &narrow = stage.temp(blur_temps()), &wide = stage.temp(blur_temps() + 1);
    narrow_.enqueue(stage, stage.input(), narrow);
    wide_.enqueue(stage, stage.input(), wide);
    KernelArgs(kernel_) << narrow << wide << stage.output() << stage.width() << stage.rows();
    stage.launch(kernel_,
                 cl::NDRange((size_t(stage.width()) + 63) / 64 * 64, size_t(stage.rows()),
                             size_t(stage.channels())),
                 cl::NDRange(64, 1, 1), "dog_subtract");
  }
  std::string describe() const override {
    return "difference of Gaussians, " + narrow_.describe() + " minus " + wide_.describe();
  }

 private:
  SeparableCorrelation narrow_, wide_;
  Border border_;
  cl::Kernel kernel_;
  int blur_temps() const { return std::max(narrow_.temp_planes(), wide_.temp_planes()); }
};

class DogFactory : public FilterFactory {
 public:
  std::string name() const override { return "dog"; }
  std::string summary() const override {
    return "difference of Gaussians: gaussian(in, sigma) - gaussian(in, ratio sigma)";
  }
  std::vector<ParamSpec> params() const override {
    return with_border_params({
        ParamSpec::number("sigma", "the narrow blur's standard deviation")
            .fallback("1")
            .above(0)
            .at_most(32),
        ParamSpec::number("ratio", "the wide blur's sigma over the narrow one's")
            .fallback("1.6")
            .above(1)
            .at_most(4),
    });
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    return std::make_unique<DifferenceOfGaussians>(device, p.get_float("sigma"),
                                                   p.get_float("ratio"), border_from_params(p));
  }
};

PluginManifest manifest() { return {{std::make_shared<DogFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

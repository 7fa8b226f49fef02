// unsharp: out = in + amount * (in - gaussian(in, sigma)), the difference left out where it is
// under `threshold` (OpenImageIO's unsharp_mask rule), built on the core's Gaussian
// (clf::gaussian_taps, clf::gaussian_radius). Where the blur runs as one pass, the rule is its
// epilogue (SeparableCorrelation's): each output leaves the blur's kernel sharpened, and the image
// is read and written once. Elsewhere (two passes, small windows), as a plugin author would compose
// it: the blur into a temp plane, then a kernel of its own (samples/dog is the out-of-tree
// version of that pattern).
#include <clf/correlate.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cstring>

#include "unsharp_kernels.hpp"  // unsharp_unsharp_cl

namespace {
using namespace clf;

// A float as an OpenCL C expression of exactly its bits.
std::string float_bits(float v) {
  uint32_t bits = 0;
  std::memcpy(&bits, &v, sizeof bits);
  return "as_float(" + std::to_string(bits) + "u)";
}

// The rule as the blur's epilogue: `center` is the input pixel, `sum` the blurred one.
std::string epilogue(float amount, float threshold) {
  return "float4 clf_epilogue(float4 sum, float4 center) {\n"
         "  const float4 d = center - sum;\n"
         "  return select(center + " +
         float_bits(amount) + " * d, center, isless(fabs(d), (float4)(" + float_bits(threshold) +
         ")));\n}\n";
}

class Unsharp : public Filter {
 public:
  Unsharp(Device& device, double sigma, float amount, float threshold, Border border)
      : blur_(device, gaussian_taps(sigma, gaussian_radius(sigma)),
              gaussian_taps(sigma, gaussian_radius(sigma)), 0.f, "unsharp_blur",
              epilogue(amount, threshold)),
        amount_(amount),
        threshold_(threshold),
        border_(border),
        kernel_(device.kernel(device.build("unsharp.cl", unsharp_unsharp_cl, "", Helpers::stage),
                              "unsharp_combine")) {}
  Halo halo() const override { return blur_.halo(); }
  Border border() const override { return border_; }
  // Composed: the blur's own temp planes first (its row pass), then one for the blurred image.
  int temp_planes() const override { return blur_.temp_planes() + (blur_.fused() ? 0 : 1); }
  void enqueue(Stage& stage) override {
    if (blur_.fused()) return blur_.enqueue(stage, stage.input(), stage.output());
    const Plane& blurred = stage.temp(blur_.temp_planes());
    blur_.enqueue(stage, stage.input(), blurred);
    KernelArgs(kernel_) << stage.input() << blurred << stage.output() << stage.width()
                        << stage.rows() << amount_ << threshold_;
    stage.launch(kernel_,
                 cl::NDRange((size_t(stage.width()) + 63) / 64 * 64, size_t(stage.rows()),
                             size_t(stage.channels())),
                 cl::NDRange(64, 1, 1), "unsharp_combine");
  }
  std::string describe() const override {
    return std::string("unsharp mask") + (blur_.fused() ? " in the blur's pass" : "") + ", blur " +
           blur_.describe();
  }

 private:
  SeparableCorrelation blur_;
  float amount_, threshold_;
  Border border_;
  cl::Kernel kernel_;
};

class UnsharpFactory : public FilterFactory {
 public:
  std::string name() const override { return "unsharp"; }
  std::string summary() const override {
    return "unsharp mask: in + amount (in - gaussian(in, sigma)) where that difference reaches "
           "threshold";
  }
  std::vector<ParamSpec> params() const override {
    return with_border_params({
        ParamSpec::number("sigma", "the blur's standard deviation (OpenCV's Gaussian taps)")
            .fallback("1")
            .above(0)
            .at_most(64),
        ParamSpec::number("amount", "how much of the difference is added back")
            .fallback("1")
            .at_least(0)
            .at_most(100),
        ParamSpec::number("threshold",
                          "differences smaller than this (in pixel values: 0..255 for u8) are "
                          "left out, so flat noise is not sharpened")
            .fallback("0")
            .at_least(0),
    });
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const float amount = float(p.get_float("amount"));
    // |out| <= |in| + amount (|in| + |blurred|): the gain a correlation would have.
    check_correlation_range("unsharp", 1.0 + 2.0 * amount, 0.f);
    return std::make_unique<Unsharp>(device, p.get_float("sigma"), amount,
                                     float(p.get_float("threshold")), border_from_params(p));
  }
};

PluginManifest manifest() { return {{std::make_shared<UnsharpFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

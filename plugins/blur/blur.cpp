// blur: Gaussian and box blurs (OpenCV GaussianBlur / boxFilter semantics), both separable
// correlations on the shared kernels (clf::SeparableFilter). One plugin, two filters.
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>

namespace {
using namespace clf;

constexpr int max_radius = 512;

// ---- gaussian
// ------------------------------------------------------------------------------------
std::vector<ParamSpec> gaussian_params() {
  return with_border_params({
      ParamSpec::number("sigma", "standard deviation in pixels, both axes")
          .fallback("1")
          .above(0)
          .at_most(128),
      ParamSpec::number("sigma_x", "standard deviation along x (overrides sigma)")
          .above(0)
          .at_most(128),
      ParamSpec::number("sigma_y", "standard deviation along y (overrides sigma)")
          .above(0)
          .at_most(128),
      ParamSpec::integer(
          "radius",
          "kernel radius, both axes (default from sigma as OpenCV does for float images: "
          "ksize = round(8 sigma + 1) | 1, radius = ksize / 2)")
          .at_least(0)
          .at_most(max_radius),
  });
}

int radius_from_sigma(double sigma) { return std::min(gaussian_radius(sigma), max_radius); }

class GaussianFactory : public FilterFactory {
 public:
  std::string name() const override { return "gaussian"; }
  std::string summary() const override { return "Gaussian blur (OpenCV GaussianBlur), separable"; }
  std::vector<ParamSpec> params() const override { return gaussian_params(); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const double sx = p.has("sigma_x") ? p.get_float("sigma_x") : p.get_float("sigma");
    const double sy = p.has("sigma_y") ? p.get_float("sigma_y") : sx;
    const int rx = p.has("radius") ? p.get_int("radius") : radius_from_sigma(sx);
    const int ry = p.has("radius") ? p.get_int("radius") : radius_from_sigma(sy);
    char what[128];
    std::snprintf(what, sizeof what, "gaussian sigma %gx%g radius %dx%d", sx, sy, rx, ry);
    return std::make_unique<SeparableFilter>(device, gaussian_taps(sx, rx), gaussian_taps(sy, ry),
                                             0.f, border_from_params(p), "gaussian", what);
  }
};

// ---- box
// -----------------------------------------------------------------------------------------
std::vector<ParamSpec> box_params() {
  return with_border_params({
      ParamSpec::integer("radius", "half the window: the window is (2 radius + 1) pixels square")
          .fallback("1")
          .at_least(0)
          .at_most(max_radius),
      ParamSpec::integer("size", "window size in pixels, odd (alternative to radius)")
          .at_least(1)
          .at_most(2 * max_radius + 1),
      ParamSpec::flag("normalize", "average (true) or plain sum (false) of the window")
          .fallback("true"),
  });
}

class BoxFactory : public FilterFactory {
 public:
  std::string name() const override { return "box"; }
  std::string summary() const override {
    return "box blur: mean (or sum) of a square window (OpenCV boxFilter)";
  }
  std::vector<ParamSpec> params() const override { return box_params(); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    int radius = p.get_int("radius");
    if (p.has("size")) {
      if (p.given("radius")) throw Error(ErrorKind::usage, "box: give radius or size, not both");
      const int size = p.get_int("size");
      if (size % 2 == 0)
        throw Error(ErrorKind::usage, "box: size must be odd (got " + std::to_string(size) + ")");
      radius = size / 2;
    }
    const int n = 2 * radius + 1;
    const bool normalize = p.get_bool("normalize");
    const std::vector<float> taps(size_t(n), normalize ? 1.f / float(n) : 1.f);
    const std::string what =
        "box " + std::to_string(n) + "x" + std::to_string(n) + (normalize ? " mean" : " sum");
    return std::make_unique<SeparableFilter>(device, taps, taps, 0.f, border_from_params(p), "box",
                                             what);
  }
};

PluginManifest manifest() {
  return {{std::make_shared<GaussianFactory>(), std::make_shared<BoxFactory>()}};
}
}  // namespace

CLF_PLUGIN(manifest)

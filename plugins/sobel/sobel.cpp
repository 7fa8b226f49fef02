// sobel: image derivatives with OpenCV's Sobel/Scharr kernels: one derivative (mode=x|y|xy) as a
// separable correlation, or the gradient magnitude sqrt(Gx^2 + Gy^2) in one fused pass.
#include <algorithm>
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>

#include "sobel_kernels.hpp"  // sobel_sobel_cl

namespace {
using namespace clf;

std::vector<ParamSpec> sobel_params() {
  return with_border_params({
      ParamSpec::one_of("mode", {"magnitude", "x", "y", "xy"},
                        "magnitude = sqrt(Gx^2 + Gy^2); x = d^dx/dx^dx; y = d^dy/dy^dy; xy = mixed "
                        "d^(dx+dy)/dx^dx dy^dy (OpenCV's Sobel(dx, dy))")
          .fallback("magnitude"),
      ParamSpec::integer("dx", "derivative order along x").fallback("1").at_least(0).at_most(6),
      ParamSpec::integer("dy", "derivative order along y").fallback("1").at_least(0).at_most(6),
      ParamSpec::one_of("ksize", {"1", "3", "5", "7"},
                        "kernel size; 1 = [-1 0 1] with no smoothing")
          .fallback("3"),
      ParamSpec::flag("scharr",
                      "use the 3x3 Scharr kernel (more rotation-invariant); first derivatives only")
          .fallback("false"),
      ParamSpec::number("scale", "multiplies the result").fallback("1"),
      ParamSpec::number("delta", "added to the result after scaling").fallback("0"),
  });
}

// OpenCV's 1-D derivative kernel: a binomial smoothing of ksize - order taps convolved `order`
// times with [-1, 1]. ksize 1 means no smoothing (3 taps for a derivative, [1] otherwise).
std::vector<float> deriv_kernel(int order, int ksize, bool scharr) {
  if (scharr) return order == 0 ? std::vector<float>{3, 10, 3} : std::vector<float>{-1, 0, 1};
  if (ksize == 1) {
    if (order == 0) return {1};
    ksize = 3;
  }
  std::vector<double> k{1};
  for (int i = 0; i < ksize - order - 1; ++i) {  // binomial: convolve with [1, 1]
    std::vector<double> next(k.size() + 1, 0);
    for (size_t j = 0; j < k.size(); ++j) {
      next[j] += k[j];
      next[j + 1] += k[j];
    }
    k = next;
  }
  for (int i = 0; i < order; ++i) {  // difference: convolve with [-1, 1]
    std::vector<double> next(k.size() + 1, 0);
    for (size_t j = 0; j < k.size(); ++j) {
      next[j] -= k[j];
      next[j + 1] += k[j];
    }
    k = next;
  }
  return std::vector<float>(k.begin(), k.end());
}

// Outer product ky x kx zero-padded to (2r+1)^2, row-major.
std::vector<float> padded_outer(const std::vector<float>& kx, const std::vector<float>& ky, int r) {
  const int n = 2 * r + 1, ox = r - int(kx.size() / 2), oy = r - int(ky.size() / 2);
  std::vector<float> w(size_t(n) * n, 0.f);
  for (size_t j = 0; j < ky.size(); ++j)
    for (size_t i = 0; i < kx.size(); ++i) w[(oy + j) * n + ox + i] = ky[j] * kx[i];
  return w;
}

// Two windows read in one pass and combined: the gradient magnitude, or (sum) the Laplacian.
class SobelMagnitude : public Filter {
 public:
  SobelMagnitude(Device& device, const std::vector<float>& wx, const std::vector<float>& wy, int r,
                 float scale, float delta, Border border, std::string what, bool sum = false)
      : sum_(sum),
        radius_(r),
        scale_(scale),
        delta_(delta),
        border_(border),
        what_(std::move(what)),
        tiling_(choose_tiling(device, r, r)) {
    const std::string options = "-D RX=" + std::to_string(r) + " -D RY=" + std::to_string(r) +
                                tiling_.defines() + (sum ? " -D SOBEL_SUM" : "");
    // sobel.cl's kernels are built on the blocked helpers of kernels/correlate/ (and their
    // -D RX/RY macros).
    cl::Program program = device.build("sobel.cl", sobel_sobel_cl, options, Helpers::correlate);
    kernel_ = device.kernel(program, ("sobel_magnitude" + tiling_.suffix()).c_str());
    wx_ = device.upload(wx.data(), wx.size() * sizeof(float), "sobel x weights");
    wy_ = device.upload(wy.data(), wy.size() * sizeof(float), "sobel y weights");
  }
  Halo halo() const override { return {radius_, radius_}; }
  Border border() const override { return border_; }
  void enqueue(Stage& stage) override {
    tiling_.check_input(stage.input(), radius_, "sobel_magnitude");
    KernelArgs(kernel_) << stage.input() << stage.output() << stage.width() << stage.rows()
                        << wx_.get() << wy_.get() << scale_ << delta_;
    stage.launch(kernel_, tiling_.global(stage.width(), stage.rows(), stage.channels()),
                 tiling_.local(), "sobel_magnitude");
  }
  std::string describe() const override {
    return what_ + (sum_ ? ", fused sum, " : ", fused magnitude, ") + tiling_.describe();
  }

 private:
  bool sum_;
  int radius_;
  float scale_, delta_;
  Border border_;
  std::string what_;
  Tiling tiling_;
  cl::Kernel kernel_;
  DeviceBuffer wx_, wy_;
};

class SobelFactory : public FilterFactory {
 public:
  std::string name() const override { return "sobel"; }
  std::string summary() const override {
    return "image derivatives (OpenCV Sobel/Scharr); default: gradient magnitude of a 3x3 Sobel";
  }
  std::vector<ParamSpec> params() const override { return sobel_params(); }

  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const std::string mode = p.get_string("mode");
    const bool scharr = p.get_bool("scharr");
    const int ksize = p.get_int("ksize");
    int dx = p.get_int("dx"), dy = p.get_int("dy");
    if (mode == "x") dy = 0;
    if (mode == "y") dx = 0;
    if (scharr && p.given("ksize") && ksize != 3)
      throw Error(ErrorKind::usage,
                  "sobel: scharr is 3x3 only (got ksize=" + std::to_string(ksize) + ")");
    const int max_order = scharr ? 1 : std::max(ksize, 3) - 1;
    auto check_order = [&](const char* name, int order, bool needed) {
      if (needed && order < 1)
        throw Error(ErrorKind::usage,
                    std::string("sobel: ") + name + " must be >= 1 for mode=" + mode);
      if (order > max_order)
        throw Error(ErrorKind::usage, std::string("sobel: ") + name + "=" + std::to_string(order) +
                                          " is too high for " +
                                          (scharr ? "scharr" : "ksize=" + std::to_string(ksize)) +
                                          " (at most " + std::to_string(max_order) + ")");
    };
    check_order("dx", dx, mode == "x" || mode == "magnitude");
    check_order("dy", dy, mode == "y" || mode == "magnitude");
    if (mode == "xy" && dx + dy == 0)
      throw Error(ErrorKind::usage, "sobel: mode=xy needs dx + dy >= 1");
    if (scharr && mode == "xy" && dx + dy != 1)
      throw Error(ErrorKind::usage,
                  "sobel: scharr computes first derivatives only (dx + dy must be 1 for mode=xy)");

    const float scale = float(p.get_float("scale")), delta = float(p.get_float("delta"));
    const Border border = border_from_params(p);
    const std::string what =
        std::string(scharr ? "scharr" : "sobel ksize " + std::to_string(ksize)) + " mode " + mode +
        " dx " + std::to_string(dx) + " dy " + std::to_string(dy);
    if (mode == "magnitude") {
      const auto gx_x = deriv_kernel(dx, ksize, scharr), gx_y = deriv_kernel(0, ksize, scharr);
      const auto gy_x = deriv_kernel(0, ksize, scharr), gy_y = deriv_kernel(dy, ksize, scharr);
      const int r = int(std::max({gx_x.size(), gx_y.size(), gy_x.size(), gy_y.size()}) / 2);
      // |scale| hypot(gx, gy), where each derivative is at most its gain times the input
      const double gain_x = weights_l1(gx_x) * weights_l1(gx_y),
                   gain_y = weights_l1(gy_x) * weights_l1(gy_y);
      check_correlation_range("sobel", std::abs(double(scale)) * std::hypot(gain_x, gain_y), delta);
      return std::make_unique<SobelMagnitude>(device, padded_outer(gx_x, gx_y, r),
                                              padded_outer(gy_x, gy_y, r), r, scale, delta, border,
                                              what);
    }
    std::vector<float> kx = deriv_kernel(dx, ksize, scharr), ky = deriv_kernel(dy, ksize, scharr);
    for (float& v : kx) v *= scale;
    return std::make_unique<SeparableFilter>(device, kx, ky, delta, border, "sobel", what);
  }
};

// cv2.Laplacian(ddepth=-1): d^2/dx^2 + d^2/dy^2 with the Sobel kernels of ksize (ksize 1: the
// 3x3 [0 1 0; 1 -4 1; 0 1 0]), both windows in one pass.
class LaplacianFactory : public FilterFactory {
 public:
  std::string name() const override { return "laplacian"; }
  std::string summary() const override {
    return "Laplacian d2/dx2 + d2/dy2 (cv2.Laplacian), the Sobel kernels' second derivatives";
  }
  std::vector<ParamSpec> params() const override {
    return with_border_params({
        ParamSpec::one_of("ksize", {"1", "3", "5", "7"},
                          "aperture: 1 = [0 1 0; 1 -4 1; 0 1 0]; 3, 5, 7 = the Sobel kernels "
                          "(3: [2 0 2; 0 -8 0; 2 0 2])")
            .fallback("1"),
        ParamSpec::number("scale", "multiplies the result").fallback("1"),
        ParamSpec::number("delta", "added to the result after scaling").fallback("0"),
    });
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const int ksize = p.get_int("ksize");
    const float scale = float(p.get_float("scale")), delta = float(p.get_float("delta"));
    // ksize 1: the second difference [1 -2 1] along one axis, no smoothing along the other.
    const std::vector<float> d2 = deriv_kernel(2, std::max(ksize, 3), false),
                             smooth = ksize == 1 ? std::vector<float>{0, 1, 0}
                                                 : deriv_kernel(0, ksize, false);
    const int r = int(std::max(d2.size(), smooth.size()) / 2);
    check_correlation_range(
        "laplacian", std::abs(double(scale)) * 2 * weights_l1(d2) * weights_l1(smooth), delta);
    return std::make_unique<SobelMagnitude>(
        device, padded_outer(d2, smooth, r), padded_outer(smooth, d2, r), r, scale, delta,
        border_from_params(p), "laplacian ksize " + std::to_string(ksize), true);
  }
};

PluginManifest manifest() {
  return {{std::make_shared<SobelFactory>(), std::make_shared<LaplacianFactory>()}};
}
}  // namespace

CLF_PLUGIN(manifest)

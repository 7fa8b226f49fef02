// blur: Gaussian and box blurs (OpenCV GaussianBlur / boxFilter semantics), both separable
// correlations on the shared kernels (clf::SeparableFilter); the Gaussian's method=fast is a
// multirate blur (multirate.cl). One plugin, two filters.
#include <algorithm>
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>
#include <cstdio>

#include "blur_kernels.hpp"  // blur_multirate_cl

namespace {
using namespace clf;

constexpr int max_radius = 512;

// ---- gaussian
// ------------------------------------------------------------------------------------
std::vector<ParamSpec> gaussian_params() {
  return with_border_params({
      ParamSpec::number("sigma",
                        "standard deviation in pixels, both axes (every pixel type follows "
                        "OpenCV's float rule: its u8 path, a 6-sigma fixed-point kernel, is at "
                        "most a level apart)")
          .fallback("1")
          .above(0)
          .at_most(128),
      ParamSpec::number("sigma_x",
                        "standard deviation along x (overrides sigma; without sigma, sigma_y "
                        "alone sets both axes, as OpenCV's sigmaY = 0 takes sigmaX)")
          .above(0)
          .at_most(128),
      ParamSpec::number("sigma_y",
                        "standard deviation along y (overrides sigma; without sigma, sigma_x "
                        "alone sets both axes)")
          .above(0)
          .at_most(128),
      ParamSpec::integer(
          "radius",
          "kernel radius, both axes (default from sigma as OpenCV does for float images: "
          "ksize = round(8 sigma + 1) | 1, radius = ksize / 2)")
          .at_least(0)
          .at_most(max_radius),
      ParamSpec::one_of(
          "method", {"auto", "exact", "fast"},
          "exact: OpenCV's kernel, radius from sigma. fast: a multirate blur (a Gaussian of D "
          "sampled every D pixels, the rest of sigma on that grid, a Gaussian of D back; D up to "
          "sigma / 2), the same cost at any sigma; for sigma >= 5, on GPUs 9 (below, exact); the "
          "output differs from exact by at most 0.025% of the image's value range (a bound over "
          "every image). auto: exact")
          .fallback("auto"),
  });
}

// ---- method=fast: a multirate Gaussian (multirate.cl) ------------------------------------
// Per axis: a prefilter of sigma D sampled every D pixels, an exact Gaussian on that coarse grid,
// and a Gaussian of sigma D back to every pixel. D is the largest power of two up to sigma / 2
// (at most 16: the prefilter's 8D + 1 taps pass by value), so the coarse blur's sigma,
// sqrt(sigma^2 - 2 D^2) / D, lies in [1.41, 4) coarse pixels below sigma 64: about 8 prefilter
// taps and 10 up taps per pixel and axis whatever sigma is.
constexpr int up_taps_each_side = 4;  // T: a Gaussian of D reaches 4 coarse samples
// Coarse rows per work-item of the prefilter down the columns: 4 was the fastest of 1, 4 and 8
// on the H100.
constexpr int down_rows_per_item = 4;
// Coarse columns per work-item of the prefilter along the rows (from float4 loads): on the H100
// about twice as fast as one column each from scalar loads.
constexpr int down_columns_per_item = 4;

struct MultirateAxis {
  int d = 1;          // decimation
  int r2 = 0;         // coarse blur radius, coarse samples
  double sigma2 = 0;  // coarse blur sigma, coarse samples
  explicit MultirateAxis(double sigma) {
    while (d < 16 && 2 * (2 * d) <= sigma) d *= 2;
    sigma2 = std::sqrt(std::max(0.0, sigma * sigma - 2.0 * d * d)) / d;
    r2 = int(std::ceil(4 * sigma2));
  }
  int r1() const { return 4 * d; }
  // Pixels of input an output reads on each side: through the up taps (T + 1 coarse samples), the
  // coarse blur (r2) and the prefilter (4D).
  int halo() const { return d * (up_taps_each_side + 1 + r2) + r1(); }
  // The up taps: phase p (output D b + p) weighs samples b - T .. b + T + 1 by a Gaussian of D at
  // p - D t, normalised per phase.
  std::vector<float> up_weights() const {
    std::vector<float> w;
    for (int p = 0; p < d; ++p) {
      std::vector<double> phase;
      double total = 0;
      for (int t = -up_taps_each_side; t <= up_taps_each_side + 1; ++t)
        total += phase.emplace_back(std::exp(-0.5 * (p - d * t) * (p - d * t) / (double(d) * d)));
      for (double v : phase) w.push_back(float(v / total));
    }
    return w;
  }
};

int floor_div(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

class MultirateGaussian : public Filter {
 public:
  MultirateGaussian(Device& device, double sx, double sy, Border border, std::string what)
      : x_(sx), y_(sy), border_(border), what_(std::move(what)) {
    for (const MultirateAxis* a : {&x_, &y_}) {
      Kernels& k = a == &x_ ? kx_ : ky_;
      const cl::Program program = device.build(
          "multirate.cl", blur_multirate_cl,
          " -D MR_D=" + std::to_string(a->d) + " -D MR_T=" + std::to_string(up_taps_each_side) +
              " -D MR_NB=" + std::to_string(down_rows_per_item) + " -D MR_NH=" +
              std::to_string(down_columns_per_item) + (device.info().is_cpu ? " -D MR_PLAIN" : ""),
          Helpers::stage);
      k.down_v = cl::Kernel(program, "mr_down_v");
      k.down_h = cl::Kernel(program, "mr_down_h");
      k.blur = cl::Kernel(program, "mr_blur");
      k.up_v = cl::Kernel(program, "mr_up_v");
      k.up_h = cl::Kernel(program, "mr_up_h");
      // The prefilter's and the up taps pass by value; the coarse blur's, whose radius is an
      // argument, from a buffer.
      k.prefilter = KernelWeights(device, gaussian_taps(a->d, a->r1()), true, "");
      k.up = KernelWeights(device, a->up_weights(), true, "");
      k.coarse =
          KernelWeights(device, gaussian_taps(a->sigma2, a->r2), false, "gaussian coarse taps");
    }
    char text[160];
    std::snprintf(text, sizeof text,
                  ", fast: multirate, every %dx%d pixels, coarse sigma %.2fx%.2f, halo %dx%d", x_.d,
                  y_.d, x_.sigma2, y_.sigma2, x_.halo(), y_.halo());
    what_ += text;
  }
  Halo halo() const override { return {x_.halo(), y_.halo()}; }
  Border border() const override { return border_; }
  int temp_planes() const override { return 2; }
  std::string describe() const override { return what_; }
  void enqueue(Stage& stage) override {
    const int width = stage.width(), rows = stage.rows(), y0 = stage.first_row();
    const int t = up_taps_each_side, dx = x_.d, dy = y_.d;
    // Coarse samples the up taps read (rows j3 .., columns i3 .., the grid anchored at pixel 0),
    // and those the coarse blur reads (r2 more on each side).
    const int j3 = floor_div(y0, dy) - t, nj3 = floor_div(y0 + rows - 1, dy) + t + 1 - j3 + 1;
    const int i3 = -t, ni3 = floor_div(width - 1, dx) + t + 1 - i3 + 1;
    const int nj = nj3 + 2 * y_.r2, ni = ni3 + 2 * x_.r2;
    const int j_lo = j3 - y_.r2, i_lo = i3 - x_.r2;
    // Fine columns the prefilter along the rows reads: from D i_lo - 4D.
    const int x_lo = dx * i_lo - x_.r1(), nx = dx * (ni - 1) + 2 * x_.r1() + 1;
    const Plane down = sub_plane(stage, 0, nx, nj), coarse = sub_plane(stage, 1, ni, nj);
    ky_.prefilter.pass(KernelArgs(ky_.down_v)
                       << stage.input() << down << dy * j_lo - y0 << x_lo << nx << nj);
    launch(stage, ky_.down_v, nx, (nj + down_rows_per_item - 1) / down_rows_per_item, "mr_down_v");
    kx_.prefilter.pass(KernelArgs(kx_.down_h) << down << coarse << ni << nj);
    launch(stage, kx_.down_h, (ni + down_columns_per_item - 1) / down_columns_per_item, nj,
           "mr_down_h");
    const Plane blurred_v = sub_plane(stage, 0, ni, nj3);
    ky_.coarse.pass(KernelArgs(ky_.blur) << coarse << blurred_v << ni << nj3 << y_.r2 << 1);
    launch(stage, ky_.blur, ni, nj3, "mr_blur");
    const Plane blurred = sub_plane(stage, 1, ni3, nj3);
    kx_.coarse.pass(KernelArgs(kx_.blur) << blurred_v << blurred << ni3 << nj3 << x_.r2 << 0);
    launch(stage, kx_.blur, ni3, nj3, "mr_blur");
    // Up the columns into every output row, then along the rows into every output column.
    const Plane up = sub_plane(stage, 0, ni3, rows);
    const int y_first = dy * (j3 + t) - y0;  // output row of the first work-item's phase 0
    ky_.up.pass(KernelArgs(ky_.up_v) << blurred << up << ni3 << rows << y_first);
    launch(stage, ky_.up_v, ni3, nj3 - 2 * t - 1, "mr_up_v");
    kx_.up.pass(KernelArgs(kx_.up_h) << up << stage.output() << width << rows);
    launch(stage, kx_.up_h, (width + dx - 1) / dx, rows, "mr_up_h");
  }

 private:
  struct Kernels {
    cl::Kernel down_v, down_h, blur, up_v, up_h;
    KernelWeights prefilter, up, coarse;
  };
  // A cols x rows plane at the start of temp `index` (each channel at the temp's stride, a
  // multiple of 4 floats as the pitch is: mr_down_h reads its rows as float4s).
  static Plane sub_plane(const Stage& stage, int index, int cols, int rows) {
    Plane p = stage.temp(index);
    p.origin = 0;
    p.pitch = (cols + 3) / 4 * 4;
    p.width = cols;
    p.rows = rows;
    if (int64_t(p.pitch) * rows > p.plane_stride)
      throw Error(ErrorKind::device, "gaussian method=fast: a temp plane is too small for a " +
                                         std::to_string(cols) + "x" + std::to_string(rows) +
                                         " plane");
    return p;
  }
  // Groups of 64 work-items along a row (mr_up_h's exchange through __local relies on it).
  static void launch(const Stage& stage, const cl::Kernel& kernel, int cols, int rows,
                     const char* name) {
    stage.launch(kernel,
                 cl::NDRange(size_t(cols + 63) / 64 * 64, size_t(std::max(rows, 1)),
                             size_t(stage.channels())),
                 cl::NDRange(64, 1, 1), name);
  }
  MultirateAxis x_, y_;
  Border border_;
  std::string what_;
  Kernels kx_, ky_;
};

int radius_from_sigma(double sigma) { return std::min(gaussian_radius(sigma), max_radius); }

// An axis's sigma: its own, else sigma when given, else the other axis's own, else sigma's default.
double axis_sigma(const Params& p, const char* own, const char* other) {
  for (const char* name : {own, "sigma", other})
    if (p.given(name)) return p.get_float(name);
  return p.get_float("sigma");
}

class GaussianFactory : public FilterFactory {
 public:
  std::string name() const override { return "gaussian"; }
  std::string summary() const override { return "Gaussian blur (OpenCV GaussianBlur), separable"; }
  std::vector<ParamSpec> params() const override { return gaussian_params(); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const double sx = axis_sigma(p, "sigma_x", "sigma_y");
    const double sy = axis_sigma(p, "sigma_y", "sigma_x");
    const bool fast = p.get_string("method") == "fast";
    if (fast && p.has("radius"))
      throw Error(ErrorKind::usage,
                  "gaussian: radius sets the exact kernel's extent; method=fast takes none");
    // The exact kernel below this sigma: as fast or faster there, and exact (the tuning database
    // sets the knob per device).
    const double fast_from = device.knob_number("gaussian.fast_min_sigma", 5);
    if (fast && std::min(sx, sy) >= fast_from) {
      char what[96];
      std::snprintf(what, sizeof what, "gaussian sigma %gx%g", sx, sy);
      return std::make_unique<MultirateGaussian>(device, sx, sy, border_from_params(p), what);
    }
    const int rx = p.has("radius") ? p.get_int("radius") : radius_from_sigma(sx);
    const int ry = p.has("radius") ? p.get_int("radius") : radius_from_sigma(sy);
    char what[200];
    char why[120] = "";
    if (fast)
      std::snprintf(why, sizeof why,
                    " (method=fast is exact below sigma %g on this device: as fast or faster "
                    "there)",
                    fast_from);
    std::snprintf(what, sizeof what, "gaussian sigma %gx%g radius %dx%d%s", sx, sy, rx, ry, why);
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

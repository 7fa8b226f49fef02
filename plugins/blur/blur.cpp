// blur: Gaussian and box blurs (OpenCV GaussianBlur / boxFilter semantics), both separable
// correlations on the shared kernels (clf::SeparableFilter); the Gaussian's method=fast stacks
// box passes computed with running sums (box_passes.cl). One plugin, two filters.
#include <algorithm>
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>
#include <cstdio>

#include "blur_kernels.hpp"  // blur_box_passes_cl

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
      ParamSpec::one_of(
          "method", {"auto", "exact", "fast"},
          "exact: OpenCV's kernel, radius from sigma. fast: 4 stacked box passes per axis with "
          "running sums, the same cost at any sigma; sigma matched to within 3%; for sigma >= 5 "
          "(below, exact; on GPUs below 24, where the exact kernel is faster); the output differs "
          "from exact by at most 8.4% of the image's value "
          "range (a bound over every image; on photographs at sigma 8 and 20, at most 0.3% RMS and "
          "2% at any pixel). auto: exact")
          .fallback("auto"),
  });
}

// ---- method=fast: stacked box passes ---------------------------------------------------------
constexpr int box_passes = 4;

// Radii of box_passes boxes whose stacked variance is closest to sigma^2 with odd widths: m boxes
// of width wl and the others wl + 2 (a box of width w adds (w^2 - 1) / 12).
std::vector<int> box_radii(double sigma) {
  int wl = int(std::floor(std::sqrt(12 * sigma * sigma / box_passes + 1)));
  wl = std::max(1, wl % 2 ? wl : wl - 1);
  const int wu = wl + 2;
  const double excess = box_passes * (wu * wu - 1) - 12 * sigma * sigma;
  const int m = std::clamp(int(std::lround(excess / (4.0 * wl + 4))), 0, box_passes);
  std::vector<int> radii;
  for (int i = 0; i < box_passes; ++i) radii.push_back(((i < m ? wl : wu) - 1) / 2);
  return radii;
}

// The sigma a stack of boxes has: sqrt(sum of (w^2 - 1) / 12).
double stacked_sigma(const std::vector<int>& radii) {
  double variance = 0;
  for (int r : radii) variance += ((2.0 * r + 1) * (2.0 * r + 1) - 1) / 12;
  return std::sqrt(variance);
}

int sum(const std::vector<int>& v) {
  int total = 0;
  for (int x : v) total += x;
  return total;
}

// A Gaussian as box_passes box passes down the columns, then box_passes along the rows, over the
// border-extended input: the same semantics as the exact kernel (extend, then filter), with a
// kernel that is a piecewise cubic instead of exp(). The column passes run over every halo column
// (the row passes read them), each pass's rows shrinking by its radius, alternating between the
// stage's two temp planes. The row passes run as column passes too, over the result transposed
// into those planes (coalesced reads and writes on GPUs, vector loads on CPUs); the last is
// transposed back into the output.
class FastGaussian : public Filter {
 public:
  FastGaussian(Device& device, double sx, double sy, Border border, std::string what)
      : rx_(box_radii(sx)), ry_(box_radii(sy)), border_(border), what_(std::move(what)) {
    for (int n : {2, 4, 8, 16})
      if (device.tuning().vector_width == n) vw_ = n;
    const cl::Program program = device.build("box_passes.cl", blur_box_passes_cl,
                                             " -D VW=" + std::to_string(vw_), Helpers::stage);
    pass_ = cl::Kernel(program, "box_pass");
    stack_ = cl::Kernel(program, "box_stack");
    compute_units_ = uint64_t(std::max(1, device.info().compute_units));
    // One launch per axis where the rings of 64 columns fit local memory (1 KiB left for the
    // runtime): H100 (48 KiB), one launch / one per box, sigma 26 2.37 / 2.79 ms, sigma 30 (41
    // KiB) 2.73 / 2.97. Groups of fewer columns were far slower: sigma 60 in 32 columns 7.56 /
    // 3.33 ms (docs/PERFORMANCE.md).
    fused_ =
        device.tuning().fused_box_passes &&
        64 * std::max(ring_bytes(rx_), ring_bytes(ry_)) + 1024 <= device.info().local_mem_bytes;
    plain_ = device.info().is_cpu;
    transpose_ = cl::Kernel(program, plain_ ? "box_transpose_plain" : "box_transpose");
    char text[200];
    std::snprintf(text, sizeof text,
                  ", fast: %d box passes per axis%s (sigma %.2fx%.2f), halo %dx%d", box_passes,
                  fused_ ? " (one launch each where strips allow)" : "", stacked_sigma(rx_),
                  stacked_sigma(ry_), sum(rx_), sum(ry_));
    what_ += text;
  }
  Halo halo() const override { return {sum(rx_), sum(ry_)}; }
  Border border() const override { return border_; }
  int temp_planes() const override { return 2; }
  std::string describe() const override { return what_; }
  void enqueue(Stage& stage) override {
    const int hx = sum(rx_), width = stage.width(), rows = stage.rows();
    // Columns over every halo column (the row passes read them), then rows as columns of the
    // transposed temps. Each axis takes one launch (box_stack) where that has the work-items to
    // run well, else one launch per box, its rows shrinking by the box's radius each time.
    const Plane* src = &stage.input();
    int t = 0;
    if (const int seg = stack_segment(width + 2 * hx, rows, ry_)) {
      stack(stage, *src, stage.temp(0), -hx, width + 2 * hx, rows, ry_, seg);
      src = &stage.temp(0);
      t = 1;
    } else {
      int left = sum(ry_);
      for (int r : ry_) {
        left -= r;
        pass(stage, *src, stage.temp(t), -hx, -left, width + 2 * hx, rows + 2 * left, r);
        src = &stage.temp(t);
        t ^= 1;
      }
    }
    // Transposed: row x holds column x, for x in [-hx, width + hx).
    const Plane flipped[2] = {transposed(stage, 0), transposed(stage, 1)};
    transpose(stage, *src, flipped[t], -hx, 0, width + 2 * hx, rows);
    if (const int seg = stack_segment(rows, width, rx_)) {
      stack(stage, flipped[t], flipped[t ^ 1], 0, rows, width, rx_, seg);
      t ^= 1;
    } else {
      int left = hx;
      for (int r : rx_) {
        left -= r;
        pass(stage, flipped[t], flipped[t ^ 1], 0, -left, rows, width + 2 * left, r);
        t ^= 1;
      }
    }
    transpose(stage, flipped[t], stage.output(), 0, 0, rows, width);
  }

 private:
  // Temp plane `i` seen transposed: (width + 2 hx) rows of `rows` samples, row 0 after hx rows.
  static Plane transposed(const Stage& stage, int i) {
    Plane p = stage.temp(i);
    const int hx = p.origin % p.pitch;  // the temp's left margin, >= the halo
    p.pitch = (stage.rows() + 3) / 4 * 4;
    p.origin = hx * p.pitch;
    p.width = stage.rows();
    p.rows = stage.width();
    if (int64_t(p.pitch) * (stage.width() + 2 * hx) > p.plane_stride)
      throw Error(ErrorKind::device,
                  "gaussian method=fast: a temp plane is too small to hold "
                  "the strip transposed");
    return p;
  }
  // One column pass over [x0, x0 + w) x [y0, y0 + h); each work-item computes `seg` outputs down
  // a column (seg >= 2r + 1: the first window costs at most one more read per output).
  void pass(const Stage& stage, const Plane& src, const Plane& dst, int x0, int y0, int w, int h,
            int r) {
    const int seg = std::max(32, 2 * r + 1);
    KernelArgs(pass_) << src << dst << x0 << y0 << w << h << r << seg;
    stage.launch(pass_,
                 cl::NDRange(size_t((w + vw_ - 1) / vw_ + 63) / 64 * 64,
                             size_t((h + seg - 1) / seg), size_t(stage.channels())),
                 cl::NDRange(64, 1, 1), "box_pass");
  }
  static_assert(box_passes == 4, "box_stack takes 4 radii");
  // The segment box_stack would run an axis in, over w columns of h outputs, or 0 where one
  // launch per box is the better choice. Segments of 8 R rows (R the radii's sum) repeat at most
  // 1/4 of the work for the 2R window rows each reads first; shorter ones, down to 2R, give the
  // device more work-items. A launch with fewer than 160 work-items per compute unit is
  // latency-bound. On the H100, sigma 8's streamed strips (about 25 thousand work-items by this
  // arithmetic) ran faster in one launch, and sigma 20's (about 17 thousand) slower
  // (docs/PERFORMANCE.md).
  int stack_segment(int w, int h, const std::vector<int>& radii) const {
    if (!fused_) return 0;
    const int total = sum(radii);
    int seg = std::max(64, 8 * total);
    auto items = [&] { return uint64_t(w) * uint64_t((h + seg - 1) / seg); };
    while (seg > std::max(32, 2 * total) && items() < 512 * compute_units_) seg /= 2;
    return items() >= 160 * compute_units_ ? seg : 0;
  }
  // All boxes of one axis in one launch (box_stack) over columns [x0, x0 + w) x rows [0, h), in
  // groups of 64 columns (the constructor checked that their rings fit local memory).
  void stack(const Stage& stage, const Plane& src, const Plane& dst, int x0, int w, int h,
             const std::vector<int>& radii, int seg) {
    const size_t group = 64;
    KernelArgs(stack_) << src << dst << x0 << 0 << w << h
                       << cl_int4{{radii[0], radii[1], radii[2], radii[3]}} << seg
                       << cl::Local(group * ring_bytes(radii));
    stage.launch(stack_,
                 cl::NDRange((size_t(w) + group - 1) / group * group, size_t((h + seg - 1) / seg),
                             size_t(stage.channels())),
                 cl::NDRange(group, 1, 1), "box_stack");
  }
  // box_stack's rings for one column: the last 2 r + 1 inputs of each box after the first.
  static uint64_t ring_bytes(const std::vector<int>& radii) {
    return uint64_t(2 * (sum(radii) - radii[0]) + 3) * sizeof(float);
  }
  void transpose(const Stage& stage, const Plane& src, const Plane& dst, int x0, int y0, int w,
                 int h) {
    KernelArgs(transpose_) << src << dst << x0 << y0 << w << h;
    if (plain_)
      return stage.launch(transpose_, cl::NDRange(size_t(h), size_t(w), size_t(stage.channels())),
                          cl::NullRange, "box_transpose");
    stage.launch(
        transpose_,
        cl::NDRange(size_t(w + 31) / 32 * 32, size_t(h + 31) / 32 * 8, size_t(stage.channels())),
        cl::NDRange(32, 8, 1), "box_transpose");
  }
  std::vector<int> rx_, ry_;
  Border border_;
  std::string what_;
  cl::Kernel pass_, stack_, transpose_;
  bool fused_ = false;  // Tuning::fused_box_passes, where 64 columns' rings fit
  uint64_t compute_units_ = 1;
  int vw_ = 1;          // columns per work-item in a pass
  bool plain_ = false;  // transposes without local memory (CPUs)
};

int radius_from_sigma(double sigma) { return std::min(gaussian_radius(sigma), max_radius); }

class GaussianFactory : public FilterFactory {
 public:
  std::string name() const override { return "gaussian"; }
  std::string summary() const override { return "Gaussian blur (OpenCV GaussianBlur), separable"; }
  std::vector<ParamSpec> params() const override { return gaussian_params(); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const double sx = p.has("sigma_x") ? p.get_float("sigma_x") : p.get_float("sigma");
    const double sy = p.has("sigma_y") ? p.get_float("sigma_y") : sx;
    const bool fast = p.get_string("method") == "fast";
    if (fast && p.has("radius"))
      throw Error(ErrorKind::usage,
                  "gaussian: radius sets the exact kernel's extent; method=fast takes none");
    const double fast_from = device.tuning().fast_gaussian_min_sigma;
    if (fast && std::min(sx, sy) >= fast_from) {
      char what[96];
      std::snprintf(what, sizeof what, "gaussian sigma %gx%g", sx, sy);
      return std::make_unique<FastGaussian>(device, sx, sy, border_from_params(p), what);
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

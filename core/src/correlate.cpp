// The shared correlation helper: picks the variant and tile for the device (the one place that
// chooses work-group sizes), fits the staged window into local memory, and enqueues the pass.
#include "clf/correlate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "clf/error.hpp"
#include "util.hpp"

namespace clf {
using detail::round_up;
namespace {
// Below this many taps a single 2-D pass beats two full-image passes (each pass is a full read and
// write of the strip; the extra taps hit local memory or cache).
constexpr size_t max_taps_single_pass = 49;
}  // namespace

std::string Tiling::suffix() const {
  if (variant == Variant::tiled) return "_tiled";
  return blocked() ? "_blocked" : vector_width > 1 ? "_vector" : "_direct";
}

std::string Tiling::defines() const {
  if (variant == Variant::tiled)
    return " -D TW=" + std::to_string(tile_width) + " -D TH=" + std::to_string(tile_height) +
           " -D WG=" + std::to_string(group_width);
  if (blocked()) return " -D TH=" + std::to_string(tile_height);
  if (vector_width > 1 && vectors > 1)
    return " -D VW=" + std::to_string(vector_width) + " -D NV=" + std::to_string(vectors);
  return vector_width > 1 ? " -D VW=" + std::to_string(vector_width) : "";
}

cl::NDRange Tiling::global(int width, int rows, int channels) const {
  if (variant == Variant::tiled) {
    const size_t groups_x = size_t((width + tile_width - 1) / tile_width);
    const int group_height = tile_height * group_rows;
    const size_t groups_y = size_t((rows + group_height - 1) / group_height);
    return cl::NDRange(groups_x * group_width, groups_y * group_rows, size_t(channels));
  }
  const int per_item = vector_width * (blocked() ? 1 : vectors);
  const int items = (width + per_item - 1) / per_item;
  const int item_rows = blocked() ? (rows + tile_height - 1) / tile_height : rows;
  return cl::NDRange(size_t(round_up(items, group_width)), size_t(item_rows), size_t(channels));
}

std::string Tiling::describe() const {
  if (variant == Variant::tiled)
    return "tiled " + std::to_string(tile_width) + "x" + std::to_string(tile_height * group_rows) +
           "/" + std::to_string(group_width * group_rows);
  if (blocked())
    return "direct 4x" + std::to_string(tile_height) + "/" + std::to_string(group_width);
  if (vector_width > 1 && vectors > 1)
    return "direct " + std::to_string(vectors) + " vectors of " + std::to_string(vector_width);
  return vector_width > 1 ? "direct x" + std::to_string(vector_width) : "direct";
}

void Tiling::check_input(const Plane& input, int rx, const std::string& name) const {
  if (variant != Variant::tiled && !blocked()) return;
  const int margin = plane_margin(rx);
  if (input.origin % 4 != 0 || input.pitch % 4 != 0 || input.plane_stride % 4 != 0 ||
      input.origin % input.pitch < margin)
    throw Error(ErrorKind::usage, name + ": input plane not float4-aligned with a " +
                                      std::to_string(margin) + "-column left margin (origin " +
                                      std::to_string(input.origin) + ", pitch " +
                                      std::to_string(input.pitch) + ")");
}

Tiling choose_tiling(const Device& device, int rx, int ry, int rows) {
  const DeviceInfo& info = device.info();
  const Tuning& tuning = device.tuning();
  Tiling t{tuning.variant, tuning.tile_width / 4 * 4, tuning.tile_height,
           std::min<int>(tuning.group_width, int(info.max_work_group_size)), tuning.vector_width};
  // The 4-wide blocked kernels unroll the whole window: up to Tuning::blocked_max_radius; wider
  // windows take the one-output-per-work-item kernel.
  const bool blockable = std::max(rx, ry) <= tuning.blocked_max_radius;
  if ((t.variant == Variant::tiled || t.blocked()) && !blockable) {
    t.variant = Variant::direct;
    t.vector_width = 1;
  }
  // Tall windows: more output rows per window row read, so each row read feeds more outputs
  // (measured on the H100: Tuning::block_rows).
  int block_rows = tuning.tile_height;
  for (const Tuning::BlockRows& b : tuning.block_rows)
    if (ry >= b.min_radius) block_rows = std::max(1, b.rows);
  if (rows > 0) block_rows = rows;
  if (t.variant == Variant::tiled || t.blocked()) t.tile_height = block_rows;
  if (t.variant == Variant::tiled) {
    // Shrink the tile until its staged window fits local memory (1 KiB left for the runtime); a
    // window that never fits takes the blocked direct path, which needs no local memory.
    t.tile_width = std::max(4, t.tile_width);
    auto window_bytes = [&] {
      return uint64_t(t.tile_height + 2 * ry) * uint64_t(t.tile_width + 2 * plane_margin(rx)) *
             sizeof(float);
    };
    const uint64_t room = info.local_mem_bytes > 1024 ? info.local_mem_bytes - 1024 : 0;
    while (window_bytes() > room && t.tile_height > 1) t.tile_height /= 2;
    while (window_bytes() > room && t.tile_width > 32) t.tile_width = t.tile_width / 8 * 4;
    if (window_bytes() > room) {
      t.variant = Variant::direct;
      t.vector_width = 4;
      t.tile_height = block_rows;
    }
  }
  return t;
}

Tiling fit_separable_tiling(const Tuning& tuning, uint64_t local_bytes, size_t max_items, int ry) {
  const int th = std::max(1, tuning.separable_block_rows);
  const int lx0 = std::max(1, tuning.separable_tile_width / 4);
  const int rows0 = std::max(th, tuning.separable_tile_rows);
  const uint64_t room = local_bytes > 1024 ? local_bytes - 1024 : 0;  // 1 KiB for the runtime
  const int items = int(std::max<size_t>(1, max_items));
  // A tile repeats the row pass of its 2 ry halo rows: (rows + 2 ry) / rows of the row work.
  // Halving the width (down to separable_min_tile_width) leaves room for tiles twice as tall:
  // keep the widest tile that at most doubles the row work, else the one that repeats least.
  Tiling best;
  double best_repeat = 0;
  const int min_lx = std::min(lx0, std::max(1, tuning.separable_min_tile_width / 4));
  for (int lx = lx0; lx >= min_lx; lx /= 2) {
    const uint64_t fit_rows = room / (uint64_t(lx) * 16);  // float4 row results per tile column
    if (fit_rows < uint64_t(2 * ry + th)) continue;
    const int ly = int(std::min<uint64_t>(
        {(fit_rows - 2 * ry) / th, uint64_t(rows0) * lx0 / lx / th, uint64_t(items / lx)}));
    if (ly < 1) continue;
    const double repeat = double(th * ly + 2 * ry) / (th * ly);
    if (best.variant == Variant::tiled && (best_repeat <= 2 || repeat >= best_repeat)) continue;
    best = Tiling{Variant::tiled, 4 * lx, th, lx, 4, ly};
    best_repeat = repeat;
  }
  return best;
}

KernelWeights::KernelWeights(Device& device, const std::vector<float>& weights, bool by_value,
                             const std::string& what) {
  if (by_value)
    values_ = weights;
  else
    buffer_ = device.upload(weights.data(), weights.size() * sizeof(float), what.c_str());
}

void KernelWeights::pass(KernelArgs& args) const {
  if (by_value())
    args.bytes(values_.data(), values_.size() * sizeof(float));
  else
    args << buffer_.get();
}

namespace {
// True when the taps have both signs (a derivative), so partial sums along them cancel.
bool cancels(const std::vector<float>& taps) {
  bool positive = false, negative = false;
  for (float t : taps) positive |= t > 0, negative |= t < 0;
  return positive && negative;
}

}  // namespace

double weights_l1(const std::vector<float>& weights) {
  double sum = 0;
  for (float w : weights) sum += std::abs(double(w));
  return sum;
}

void check_correlation_range(const std::string& name, double gain, float delta) {
  if (!std::isfinite(gain))
    throw Error(ErrorKind::usage, name +
                                      ": kernel weights are not finite 32-bit floats after "
                                      "scaling (lower the scale or the kernel's values)");
  const double largest = gain * correlation_input_bound + std::abs(double(delta));
  if (largest <= double(std::numeric_limits<float>::max())) return;
  char text[320];
  std::snprintf(text, sizeof text,
                "%s: the kernel's absolute weights sum to %.3g, so an input of %g could give "
                "%.3g, past a 32-bit float's largest value (%.3g); lower the kernel's values, "
                "the scale or the delta",
                name.c_str(), gain, correlation_input_bound, largest,
                double(std::numeric_limits<float>::max()));
  throw Error(ErrorKind::usage, text);
}

namespace {
// " -D CLF_ROW_HALF=w_0,.." where every row of the window's nonzero taps is one segment centred
// on the output (-w_j..w_j; kernels/correlate/blocked.clh takes a row's extrema over widening
// segments once), else "".
std::string row_halves(const std::vector<float>& weights, int rx, int ry) {
  const int kw = 2 * rx + 1;
  std::string halves;
  for (int j = 0; j <= 2 * ry; ++j) {
    int half = -1;
    while (half < rx && weights[size_t(j) * size_t(kw) + size_t(rx + half + 1)] != 0.f) ++half;
    for (int i = 0; i < kw; ++i)
      if ((weights[size_t(j) * size_t(kw) + size_t(i)] != 0.f) != (std::abs(i - rx) <= half))
        return "";
    if (half < 0) return "";
    halves += (j ? "," : "") + std::to_string(half);
  }
  return " -D CLF_ROW_HALF=" + halves;
}
}  // namespace

Correlation::Correlation(Device& device, int rx, int ry, const std::vector<float>& weights,
                         float delta, const std::string& name, WindowReduce reduce)
    : delta_(delta), rx_(rx), ry_(ry), name_(name), tiling_(choose_tiling(device, rx, ry)) {
  const Tuning& tuning = device.tuning();
  if (rx < 0 || ry < 0 || weights.size() != size_t(2 * rx + 1) * size_t(2 * ry + 1))
    throw Error(ErrorKind::usage, name + ": correlation weights do not match radius " +
                                      std::to_string(rx) + "x" + std::to_string(ry));
  // A max or min over centred segments costs one comparison a window row and output row: taller
  // blocks share each row's extrema among more outputs.
  const std::string halves = reduce == WindowReduce::sum ? "" : row_halves(weights, rx, ry);
  if (!halves.empty() && tuning.extremum_block_rows > 0)
    tiling_ = choose_tiling(device, rx, ry, tuning.extremum_block_rows);
  // The one-row vector kernel takes several vectors per work-item for wide windows, where each
  // weight read then feeds them all (the plugins' own vector kernels take one).
  if (tiling_.variant == Variant::direct && tiling_.vector_width > 1 && !tiling_.blocked() &&
      (2 * rx + 1) * (2 * ry + 1) >= tuning.vectors_min_taps)
    tiling_.vectors = std::max(1, tuning.vectors);
  // Parameters are checked to fit a float one by one; products of them (a scale times a tap,
  // a normalisation) can still overflow, and an inf weight makes inf and NaN pixels.
  for (size_t i = 0; i < weights.size(); ++i)
    if (!std::isfinite(weights[i]))
      throw Error(ErrorKind::usage,
                  name + ": kernel weight " + std::to_string(i) +
                      " is not a finite 32-bit float after scaling (lower the scale "
                      "or the kernel's values)");
  if (!std::isfinite(delta))
    throw Error(ErrorKind::usage, name + ": delta is not a finite 32-bit float");
  check_correlation_range(name, weights_l1(weights), delta);
  // The vector kernel can take the radii as arguments: then one program serves every window.
  // A max or min needs its element's taps in the program: literal radii.
  any_radius_ = reduce == WindowReduce::sum && tiling_.suffix() == "_vector" &&
                tuning.radius_arg_above >= 0 && std::max(rx, ry) > tuning.radius_arg_above;
  std::string options = any_radius_
                            ? "-D CLF_ANY_RADIUS"
                            : "-D RX=" + std::to_string(rx) + " -D RY=" + std::to_string(ry);
  if (reduce != WindowReduce::sum)
    options += std::string(" -D CLF_EXTREMUM=") + (reduce == WindowReduce::max ? "1" : "-1");
  const uint64_t weight_bytes = weights.size() * sizeof(float);
  if (weight_bytes > device.device().getInfo<CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE>())
    options += " -D CLF_WEIGHTS=__global";
  // Taps of weight 0 left out (kernels/correlate/common.clh, CLF_ROW_TAPS), for windows up to 64
  // wide: a program per pattern of zeros, as there is one per radius.
  const int kw = 2 * rx + 1;
  zero_taps_ = int(std::count(weights.begin(), weights.end(), 0.f));
  if (reduce != WindowReduce::sum && zero_taps_ > 0 && kw > 64)
    throw Error(ErrorKind::usage, name + ": an element past 64 columns must be whole (got " +
                                      std::to_string(kw) + " columns with taps left out)");
  if (any_radius_ || kw > 64) zero_taps_ = 0;
  options += halves;
  if (zero_taps_ > 0) {
    std::string masks;
    for (int j = 0; j < 2 * ry + 1; ++j) {
      uint64_t mask = 0;
      for (int i = 0; i < kw; ++i)
        if (weights[size_t(j) * size_t(kw) + size_t(i)] != 0.f) mask |= uint64_t(1) << i;
      char text[24];
      std::snprintf(text, sizeof text, "%s0x%llxUL", j ? "," : "", (unsigned long long)mask);
      masks += text;
    }
    options += " -D CLF_ROW_TAPS=" + masks;
  }
  // The blocked and tiled kernels take windows past 5x5 by value where they fit the 1 KiB of
  // arguments every OpenCL device takes (the other arguments need under 128 bytes): up to 13x13.
  // The 5x5 runs at copy speed either way.
  const bool by_value = tuning.taps_by_value && !any_radius_ &&
                        (tiling_.blocked() || tiling_.variant == Variant::tiled) &&
                        weights.size() > 25 && KernelWeights::fit_by_value(weights.size());
  if (by_value) options += " -D CLF_TAPS_BY_VALUE";
  cl::Program program =
      device.build("clf_correlate", "", options + tiling_.defines(), Helpers::correlate);
  kernel_ = device.kernel(
      program, any_radius_ ? "clf_correlate_any" : ("clf_correlate" + tiling_.suffix()).c_str());
  weights_ = KernelWeights(device, weights, by_value, name + " weights");
}

void Correlation::enqueue(const Stage& stage, const Plane& src, const Plane& dst) const {
  tiling_.check_input(src, rx_, name_);
  cl::Kernel kernel = kernel_;  // copies share one kernel object: arguments are set per launch
  KernelArgs args(kernel);
  args << src << dst << dst.width << dst.rows;
  weights_.pass(args);
  args << delta_;
  if (any_radius_) args << rx_ << ry_;
  stage.launch(kernel, tiling_.global(dst.width, dst.rows, stage.channels()), tiling_.local(),
               name_.c_str());
}

std::string Correlation::describe() const {
  return tiling_.describe() + (any_radius_ ? ", radii as arguments" : "") +
         (weights_.by_value() ? ", weights by value" : "") +
         (zero_taps_ > 0 ? ", " + std::to_string(zero_taps_) + " zero taps left out" : "");
}

SeparableCorrelation::SeparableCorrelation(Device& device, const std::vector<float>& kx,
                                           const std::vector<float>& ky, float delta,
                                           const std::string& name)
    : SeparableCorrelation(device, kx, ky, delta, name, "") {}

SeparableCorrelation::SeparableCorrelation(Device& device, const std::vector<float>& kx,
                                           const std::vector<float>& ky, float delta,
                                           const std::string& name, const std::string& epilogue)
    : two_pass_(kx.size() * ky.size() > max_taps_single_pass),
      rx_(int(kx.size() / 2)),
      ry_(int(ky.size() / 2)) {
  if (kx.size() % 2 == 0 || ky.size() % 2 == 0)
    throw Error(ErrorKind::usage, name + ": separable kernels must have odd sizes");
  check_correlation_range(name, weights_l1(kx) * weights_l1(ky), delta);
  delta_ = delta;
  name_ = name;
  forced_steps_ = device.tuning().separable_steps;
  min_groups_ = 4 * std::max(1, device.info().compute_units);
  // The paths, first that applies: one pass columns first, one tiled or blocked pass, then the
  // two passes (or, for a kernel small enough, one 2-D pass over the outer product).
  const Tuning fit = plan_single_pass(device);
  const Taps taps{kx, ky, epilogue};
  if (take_columns(device, taps) || take_single_pass(device, taps, fit)) return;
  make_passes(device, kx, ky);
}

// Which single pass a kernel too large for one 2-D pass may take (one_pass_tiling_; none when it
// is small enough, or the tuning wants two passes), and the tuning the tiled pass is fitted with.
Tuning SeparableCorrelation::plan_single_pass(const Device& device) {
  const Tuning& tuning = device.tuning();
  Tuning fit = tuning;  // the tiled pass's fit, with the tile rows for its radii
  const Tiling blocked = choose_tiling(device, rx_, ry_);
  if (two_pass_ && blocked.blocked() && tuning.separable_rows > 0 &&
      std::max(rx_, ry_) <= std::min(tuning.separable_max_radius, 12)) {
    one_pass_tiling_ = blocked;
    one_pass_tiling_.tile_height = tuning.separable_rows;
  } else if (two_pass_ && tuning.separable_variant == Variant::tiled) {
    // Radii as arguments: one program per tile shape, its rows of work-items a multiple of 4
    // (or 1 or 2) so that the shapes are few.
    any_radius_ = tuning.radius_arg_above >= 0 && std::max(rx_, ry_) > tuning.radius_arg_above;
    if (!any_radius_ && tuning.separable_literal_tile_rows > 0)
      fit.separable_tile_rows = tuning.separable_literal_tile_rows;
    if (any_radius_ && tuning.separable_arg_block_rows > 0)
      fit.separable_block_rows = tuning.separable_arg_block_rows;
    one_pass_tiling_ = fit_separable_tiling(fit, device.info().local_mem_bytes,
                                            device.info().max_work_group_size, ry_);
  }
  return fit;
}

std::string SeparableCorrelation::radii_options(const Taps& taps) const {
  return (any_radius_ ? "-D RX=rx -D RY=ry -D CLF_SEPARABLE_ANY"
                      : "-D RX=" + std::to_string(rx_) + " -D RY=" + std::to_string(ry_)) +
         (taps.epilogue.empty() ? "" : " -D CLF_EPILOGUE");
}

// Weights by value where the literal radii size their structs and both fit the arguments.
bool SeparableCorrelation::literal_by_value(const Device& device, const Taps& taps) const {
  return device.tuning().taps_by_value && !any_radius_ &&
         KernelWeights::fit_by_value(taps.kx.size() + taps.ky.size());
}

void SeparableCorrelation::take(Device& device, cl::Kernel kernel, const Taps& taps,
                                bool by_value) {
  one_pass_ = std::move(kernel);
  one_pass_wx_ = KernelWeights(device, taps.kx, by_value, name_ + " row weights");
  one_pass_wy_ = KernelWeights(device, taps.ky, by_value, name_ + " column weights");
  two_pass_ = false;
  fused_ = !taps.epilogue.empty();
}

bool SeparableCorrelation::take_columns(Device& device, const Taps& taps) {
  if (one_pass_tiling_.variant != Variant::tiled || any_radius_) return false;
  const ColumnsTiling columns = ColumnsTiling::choose(device, rx_, ry_, !taps.epilogue.empty());
  if (!columns) return false;
  const bool by_value = literal_by_value(device, taps);
  const std::string options = radii_options(taps) + " -D CLF_SEPARABLE" + columns.defines() +
                              (by_value ? " -D CLF_TAPS_BY_VALUE" : "");
  cl::Kernel kernel =
      device.kernel(device.build("clf_correlate", taps.epilogue, options, Helpers::correlate),
                    "clf_separable_columns");
  // More work-items than its registers allow: rows first.
  if (kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device()) < columns.items())
    return false;
  columns_ = columns;
  take(device, kernel, taps, by_value);
  return true;
}

bool SeparableCorrelation::take_single_pass(Device& device, const Taps& taps, const Tuning& fit) {
  // A tile's work-items must fit one group: registers can lower a kernel's limit below the
  // device's, and then the tile is fitted again under the kernel's own limit.
  for (int attempt = 0; attempt < 2; ++attempt) {
    const Tiling& t = one_pass_tiling_;
    const bool tiled = t.variant == Variant::tiled;
    if (!tiled && !t.blocked()) return false;
    if (tiled && any_radius_) {
      int& rows = one_pass_tiling_.group_rows;
      rows = rows >= 4 ? rows / 4 * 4 : std::min(rows, 2);
    }
    const bool by_value = literal_by_value(device, taps);
    const std::string options = radii_options(taps) + " -D CLF_SEPARABLE" +
                                (tiled ? " -D LX=" + std::to_string(t.group_width) +
                                             " -D LY=" + std::to_string(t.group_rows) +
                                             " -D TH=" + std::to_string(t.tile_height)
                                       : t.defines()) +
                                (by_value ? " -D CLF_TAPS_BY_VALUE" : "");
    cl::Kernel kernel =
        device.kernel(device.build("clf_correlate", taps.epilogue, options, Helpers::correlate),
                      tiled ? "clf_separable_tiled" : "clf_separable_blocked");
    const size_t limit = kernel.getWorkGroupInfo<CL_KERNEL_WORK_GROUP_SIZE>(device.device());
    if (limit >= size_t(t.group_width) * size_t(t.group_rows)) {
      take(device, kernel, taps, by_value);
      return true;
    }
    one_pass_tiling_ =
        tiled ? fit_separable_tiling(fit, device.info().local_mem_bytes, limit, ry_) : Tiling{};
  }
  return false;
}

void SeparableCorrelation::make_passes(Device& device, const std::vector<float>& kx,
                                       const std::vector<float>& ky) {
  if (two_pass_) {
    passes_.emplace_back(device, rx_, 0, kx, 0.f, name_ + "_row");
    passes_.emplace_back(device, 0, ry_, ky, delta_, name_ + "_col");
  } else if (cancels(ky) && !cancels(kx)) {
    // A derivative along y (Sobel dy): the outer product, summed a row at a time, adds a row's
    // same-signed products past 2^24 before the opposite rows cancel them (u16, 7x7: 12 levels
    // off). The column pass first keeps every partial sum as small as dx's are along x.
    columns_first_ = true;
    passes_.emplace_back(device, 0, ry_, ky, 0.f, name_ + "_col");
    passes_.emplace_back(device, rx_, 0, kx, delta_, name_ + "_row");
  } else {
    std::vector<float> outer;
    for (float y : ky)
      for (float x : kx) outer.push_back(y * x);
    passes_.emplace_back(device, rx_, ry_, outer, delta_, name_);
  }
}

ColumnsTiling ColumnsTiling::choose(const Device& device, int rx, int ry, bool centres) {
  const Tuning& tuning = device.tuning();
  const Tuning::SeparableColumns* pick = nullptr;
  for (const Tuning::SeparableColumns& entry : tuning.separable_columns)
    if (std::max(rx, ry) >= entry.min_radius) pick = &entry;
  if (!pick) return {};
  // The width a power of 2 from 8 to 256 float4s, 2 work-items each, with at least one pair of
  // output columns past its halo; whole batches of `rows` a group; the two batch buffers within
  // local memory (1 KiB left for the runtime), twice over with the centres, in batches cut to
  // the most rows that fit.
  const int width = pick->width / 4, out = width - plane_margin(rx) / 2;
  if (width < 8 || width > 256 || (width & (width - 1)) != 0 || out < 2) return {};
  const uint64_t local = device.info().local_mem_bytes, room = local > 1024 ? local - 1024 : 0;
  const uint64_t row_bytes = (centres ? 2 : 1) * 2 * uint64_t(width + 4) * 16;
  int rows = std::max(1, pick->rows);
  if (centres) rows = int(std::clamp<uint64_t>(room / row_bytes, 1, uint64_t(rows)));
  if (uint64_t(rows) * row_bytes > room || size_t(2 * width) > device.info().max_work_group_size)
    return {};
  // The tile the whole batches nearest the tuning's rows.
  const int batches = std::max(1, (tuning.separable_columns_tile_rows + rows / 2) / rows);
  return {width, rows, batches * rows, out};
}

std::string ColumnsTiling::defines() const {
  return " -D TH=" + std::to_string(rows) + " -D CLF_CW=" + std::to_string(width) +
         " -D CLF_CTH=" + std::to_string(tile_rows);
}

// out float4 columns of outputs a group, tile_rows rows.
cl::NDRange ColumnsTiling::global(int plane_width, int plane_rows, int channels) const {
  const size_t groups_x = size_t(((plane_width + 3) / 4 + out - 1) / out);
  const size_t groups_y = size_t((plane_rows + tile_rows - 1) / tile_rows);
  return cl::NDRange(groups_x * items(), groups_y, size_t(channels));
}

std::string ColumnsTiling::describe() const {
  return "columns first " + std::to_string(4 * out) + "x" + std::to_string(tile_rows) + "/" +
         std::to_string(items());
}

void SeparableCorrelation::enqueue(const Stage& stage, const Plane& src, const Plane& dst) const {
  if (one_pass_()) {
    const Tiling& t = one_pass_tiling_;
    t.check_input(src, rx_, name_);
    cl::Kernel kernel = one_pass_;
    KernelArgs args(kernel);
    args << src << dst << dst.width << dst.rows;
    one_pass_wx_.pass(args);
    one_pass_wy_.pass(args);
    args << delta_;
    if (columns_) {
      stage.launch(kernel, columns_.global(dst.width, dst.rows, stage.channels()), columns_.local(),
                   name_.c_str());
      return;
    }
    cl::NDRange global = t.global(dst.width, dst.rows, stage.channels());
    if (t.variant == Variant::tiled) {  // groups march down `steps` tiles each
      const int tile_rows = t.tile_height * t.group_rows;
      const int tiles = (dst.rows + tile_rows - 1) / tile_rows;
      const int steps = marching_steps(dst.width, tiles);
      args << steps;
      if (any_radius_)
        args << rx_ << ry_
             << cl::Local(size_t(t.tile_height * t.group_rows + 2 * ry_) * t.group_width * 16);
      global = cl::NDRange(global[0], size_t((tiles + steps - 1) / steps) * size_t(t.group_rows),
                           global[2]);
    }
    stage.launch(kernel, global, t.local(), name_.c_str());
    return;
  }
  if (columns_first_) {  // the column pass over the columns the row pass reads, then the row pass
    const int wide = plane_margin(rx_);  // a float4 multiple: vector loads keep their alignment
    Plane src_cols = src, temp_cols = stage.temp(0);
    for (Plane* p : {&src_cols, &temp_cols}) {
      p->origin -= wide;
      p->width = dst.width + 2 * wide;
      p->rows = dst.rows;
    }
    passes_[0].enqueue(stage, src_cols, temp_cols);
    passes_[1].enqueue(stage, plane_rows(stage.temp(0), 0, dst.rows), dst);
    return;
  }
  if (!two_pass_) {
    passes_[0].enqueue(stage, src, dst);
    return;
  }
  // Row pass over the output rows plus the vertical halo, then the column pass.
  const Plane& temp = stage.temp(0);
  passes_[0].enqueue(stage, plane_rows(src, -ry_, dst.rows + 2 * ry_),
                     plane_rows(temp, -ry_, dst.rows + 2 * ry_));
  passes_[1].enqueue(stage, plane_rows(temp, 0, dst.rows), dst);
}

// OpenCV's getGaussianKernel for float images: exp(-x^2 / (2 sigma^2)) at integers, summing to 1.
std::vector<float> gaussian_taps(double sigma, int radius) {
  std::vector<double> taps(size_t(2 * radius + 1));
  double sum = 0;
  for (int i = -radius; i <= radius; ++i)
    sum += taps[size_t(i + radius)] = std::exp(-0.5 * i * i / (sigma * sigma));
  std::vector<float> out;
  for (double t : taps) out.push_back(float(t / sum));
  return out;
}

int gaussian_radius(double sigma) { return (int(std::lrint(sigma * 8 + 1)) | 1) / 2; }

int SeparableCorrelation::marching_steps(int width, int tiles) const {
  if (forced_steps_ > 0) return std::clamp(tiles, 1, forced_steps_);
  // Enough tiles that the 2 ry rows a group computes twice are at most 1/8 of its rows, as long
  // as the launch keeps 4 groups per compute unit.
  const Tiling& t = one_pass_tiling_;
  const int tile_rows = t.tile_height * t.group_rows;
  const int groups_x = (width + t.tile_width - 1) / t.tile_width;
  int steps = std::clamp((16 * ry_ + tile_rows - 1) / tile_rows, 1, std::max(1, tiles));
  while (steps > 1 && groups_x * ((tiles + steps - 1) / steps) < min_groups_) --steps;
  return steps;
}

std::string SeparableCorrelation::describe() const {
  if (one_pass_() && columns_)
    return "separable single pass, " + columns_.describe() +
           (one_pass_wx_.by_value() ? ", weights by value" : "");
  if (one_pass_())
    return "separable single pass, " + one_pass_tiling_.describe() +
           (any_radius_ ? ", radii as arguments" : "") +
           (one_pass_wx_.by_value() ? ", weights by value" : "");
  if (columns_first_) return "separable 2-pass, columns first, " + passes_[0].describe();
  return (two_pass_ ? "separable 2-pass, " : "single pass, ") + passes_[0].describe();
}

SeparableFilter::SeparableFilter(Device& device, const std::vector<float>& kx,
                                 const std::vector<float>& ky, float delta, Border border,
                                 const std::string& name, std::string what)
    : halo_{int(kx.size() / 2), int(ky.size() / 2)},
      border_(border),
      what_(std::move(what)),
      pass_(device, kx, ky, delta, name) {}

CorrelationFilter::CorrelationFilter(Device& device, int rx, int ry,
                                     const std::vector<float>& weights, float delta, Border border,
                                     const std::string& name, std::string what, Method method)
    : halo_{rx, ry}, border_(border), what_(std::move(what)) {
  if (method == Method::fft || (method == Method::automatic && fft_pays(device.tuning(), rx, ry)))
    fft_ = std::make_unique<FftCorrelation>(device, rx, ry, weights, delta, name);
  else
    pass_ = std::make_unique<Correlation>(device, rx, ry, weights, delta, name);
}

void CorrelationFilter::enqueue(Stage& stage) {
  if (fft_)
    fft_->enqueue(stage, stage.input(), stage.output());
  else
    pass_->enqueue(stage, stage.input(), stage.output());
}

std::string CorrelationFilter::describe() const {
  return what_ + ", " + (fft_ ? fft_->describe() : pass_->describe());
}

}  // namespace clf

// The correlation kernels every plugin shares: out(x, y) = delta + sum w(i, j) * in(x + i - rx, y +
// j - ry) (OpenCV filter2D semantics: no kernel flip), tiled through local memory with the halo
// staged by async_work_group_copy, or with direct global reads; the variant and tile come from the
// device.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "clf/filter.hpp"

namespace clf {

// The largest input magnitude a correlation is held to finite output for: every u8 and u16 value,
// and float images in any usual range.
constexpr double correlation_input_bound = 65535;
// Throws Error(usage) naming `name` when an input of magnitude correlation_input_bound could
// correlate past a 32-bit float: `gain` (the sum of the absolute weights, the product of both
// axes' for a separable kernel) times the bound, plus |delta|. Every correlation checks this, so
// a filter never writes inf or NaN from finite parameters.
void check_correlation_range(const std::string& name, double gain, float delta);
// The sum of |w| over `weights`: a correlation's gain, in double.
double weights_l1(const std::vector<float>& weights);

// How a kernel with a (2rx+1) x (2ry+1) window is laid out on a device: the device's tuning,
// adjusted to the window (taller blocks for tall windows, the tile shrunk until its staged window
// fits local memory). The one place that picks work-group sizes; plugin kernels built on the
// shared helpers (kernels/correlate/, kernels/stage.clh) use it too. Kernel shapes:
//   direct, vector_width 1:  one output per work-item (any window size)
//   direct, vector_width 4:  "blocked": 4 x tile_height outputs per work-item from aligned float4
//                            reads, group_width work-items per group (GPUs)
//   direct, vector_width 8/16: that many outputs of one row per work-item (CPUs), or `vectors`
//                            times that many
//   tiled:                   tile_width x tile_height outputs per group of group_width work-items,
//                            the window staged with async_work_group_copy, then blocked as above;
//                            the tiled single-pass separable kernel's tiles are tile_width x
//                            tile_height group_rows outputs per group_width x group_rows
//                            work-items, each 4 x tile_height of them
struct Tiling {
  Variant variant = Variant::direct;
  int tile_width = 0, tile_height = 0, group_width = 0;
  int vector_width = 1;
  int group_rows = 1;
  int vectors = 1;  // direct, vector_width 8/16: vectors of outputs per work-item (-D NV)
  bool blocked() const { return variant == Variant::direct && vector_width == 4; }
  // Kernel name suffix: "_direct", "_vector", "_blocked" or "_tiled".
  std::string suffix() const;
  // Build options: " -D VW=..", " -D TH=..", " -D TW=.. -D TH=.. -D WG=.." or "".
  std::string defines() const;
  // Launch geometry over width x rows x channels.
  cl::NDRange global(int width, int rows, int channels) const;
  cl::NDRange local() const { return cl::NDRange(size_t(group_width), size_t(group_rows), 1); }
  // "tiled 248x4/64", "direct 4x4/64", "direct x16", "direct 4 vectors of 16" or "direct"
  std::string describe() const;
  // The blocked and tiled kernels read aligned float4s from CLF_HALO4(rx) columns left of the
  // plane: throws Error(usage) naming `name` when `input` is not laid out so.
  void check_input(const Plane& input, int rx, const std::string& name) const;
};
// block_rows > 0: that many output rows a work-item on the blocked and tiled layouts, in place of
// the tuning's block_rows.
Tiling choose_tiling(const Device& device, int rx, int ry, int block_rows = 0);
// The tiled single-pass separable kernel's layout for a column radius ry (the separable_* tuning,
// fitted to local_bytes and max_items work-items), or variant direct where no tile fits; the row
// pass reads its horizontal halo from global memory, so rx does not matter.
Tiling fit_separable_tiling(const Tuning& tuning, uint64_t local_bytes, size_t max_items, int ry);

// The columns-first single pass's layout (Tuning::separable_columns, clf_separable_columns): a
// group of 2 width work-items sums `width` float4 columns, `out` of them outputs past the halo,
// walking down tile_rows rows in batches of `rows`.
struct ColumnsTiling {
  int width = 0, rows = 0, tile_rows = 0, out = 0;  // width 0: none
  // The tuning's entry for radii rx, ry where it fits the device (a power of 2 from 8 to 256
  // float4s with a pair of output columns past the halo, its two batch buffers in local memory);
  // width 0 where none applies. With `centres` (an epilogue) the batches also keep the input at
  // their outputs' places, in batches of the most rows (to the entry's) that both fit.
  static ColumnsTiling choose(const Device& device, int rx, int ry, bool centres = false);
  explicit operator bool() const { return width > 0; }
  size_t items() const { return 2 * size_t(width); }  // work-items of a group
  std::string defines() const;                        // " -D TH=.. -D CLF_CW=.. -D CLF_CTH=.."
  cl::NDRange global(int width, int rows, int channels) const;
  cl::NDRange local() const { return cl::NDRange(items(), 1, 1); }
  std::string describe() const;  // "columns first 48x6/32"
};

// OpenCV's Gaussian taps (getGaussianKernel for float images): 2 radius + 1 samples of
// exp(-x^2 / (2 sigma^2)), summing to 1. The blur plugin's, for composite filters (unsharp mask,
// difference of Gaussians) to share.
std::vector<float> gaussian_taps(double sigma, int radius);
// OpenCV's radius for a sigma: ksize = round(8 sigma + 1) | 1, radius = ksize / 2.
int gaussian_radius(double sigma);

// A kernel's weights: in a __constant buffer, or kept here and passed by value, as a struct the
// kernel declares (-D CLF_TAPS_BY_VALUE, Tuning::taps_by_value).
class KernelWeights {
 public:
  // Whether n weights fit the 1 KiB of arguments every OpenCL device takes, beside the other
  // arguments of the correlation kernels (under 128 bytes).
  static bool fit_by_value(size_t n) { return n * sizeof(float) <= 1024 - 128; }
  KernelWeights() = default;
  KernelWeights(Device& device, const std::vector<float>& weights, bool by_value,
                const std::string& what);
  bool by_value() const { return !values_.empty(); }
  void pass(KernelArgs& args) const;  // the next argument of the kernel

 private:
  DeviceBuffer buffer_;
  std::vector<float> values_;
};

// What a 2-D correlation takes over its window: the weighted sum, or the largest or smallest value
// under the taps whose weight is not 0 (morphology's dilate and erode over an element; a NaN never
// wins), on the same kernels and layouts.
enum class WindowReduce { sum, max, min };

class Correlation {
 public:
  // weights: (2*ry + 1) rows x (2*rx + 1) columns, row-major. `name` appears in errors and traces.
  // Taps of weight 0 are left out of the sums, as OpenCV's filter2D leaves them out (an inf or NaN
  // under them does not reach the output), where the radii are literals and the window at most 64
  // wide: the program is then built for that pattern of zeros. With `reduce` max or min the taps
  // of weight 0 are always left out (the window must then be at most 64 wide).
  Correlation(Device& device, int rx, int ry, const std::vector<float>& weights, float delta,
              const std::string& name, WindowReduce reduce = WindowReduce::sum);
  // dst(x, y) for x in [0, dst.width), y in [0, dst.rows); src must be valid over the halo.
  void enqueue(const Stage& stage, const Plane& src, const Plane& dst) const;
  Halo halo() const { return {rx_, ry_}; }
  std::string describe() const;  // "tiled 248x4/64" / "direct x16"

 private:
  cl::Kernel kernel_;
  KernelWeights weights_;
  float delta_;
  int rx_, ry_;
  std::string name_;
  Tiling tiling_;
  bool any_radius_ = false;  // clf_correlate_any: the radii are kernel arguments
  int zero_taps_ = 0;        // taps of weight 0 the program leaves out (CLF_ROW_TAPS)
};

// A separable correlation kx (along x) then ky (along y): one 2-D pass when the outer product is
// small (a full-image pass costs more than the extra taps), else a row pass into the stage's
// temp(0) and a column pass. Filters using it report temp_planes() from it.
class SeparableCorrelation {
 public:
  SeparableCorrelation(Device& device, const std::vector<float>& kx, const std::vector<float>& ky,
                       float delta, const std::string& name);
  // With an epilogue: OpenCL C that defines float4 clf_epilogue(float4 sum, float4 center), which
  // a single pass applies to each 4 outputs, with the input's pixels at their places, before it
  // stores them (the unsharp mask: one pass over the image instead of a blur and a combine).
  // fused() says whether it was taken: the two-pass and the small 2-D paths leave the sums as
  // they are, and the caller then applies its step itself.
  SeparableCorrelation(Device& device, const std::vector<float>& kx, const std::vector<float>& ky,
                       float delta, const std::string& name, const std::string& epilogue);
  bool fused() const { return fused_; }
  void enqueue(const Stage& stage) const { enqueue(stage, stage.input(), stage.output()); }
  // Into any plane of dst.width x dst.rows (a temp plane of the stage, say): src valid over
  // halo(); uses the stage's temp(0) when two_pass (never src or dst, which must differ).
  void enqueue(const Stage& stage, const Plane& src, const Plane& dst) const;
  Halo halo() const { return {rx_, ry_}; }
  int temp_planes() const { return two_pass_ || columns_first_ ? 1 : 0; }
  std::string describe() const;

 private:
  bool two_pass_;
  bool columns_first_ = false;  // a small kernel with a derivative along y: column pass, then row
  int rx_, ry_;
  std::vector<Correlation> passes_;
  // Single pass over a two-pass-sized kernel (Tuning::separable_rows, or separable_variant
  // tiled): its kernel, weights and layout.
  cl::Kernel one_pass_;
  KernelWeights one_pass_wx_, one_pass_wy_;
  Tiling one_pass_tiling_;
  // The tiled single pass: tiles each group marches down, for a launch of `tiles` tiles a column.
  int marching_steps(int width, int tiles) const;
  int forced_steps_ = 0, min_groups_ = 1;
  bool any_radius_ = false;  // the tiled kernel takes the radii as arguments (-D CLF_SEPARABLE_ANY)
  ColumnsTiling columns_;    // the columns-first single pass, where taken
  // The constructor's steps: the paths in the order they are tried (correlate.cpp).
  struct Taps {
    const std::vector<float>&kx, &ky;
    const std::string& epilogue;
  };
  Tuning plan_single_pass(const Device& device);
  std::string radii_options(const Taps& taps) const;
  bool literal_by_value(const Device& device, const Taps& taps) const;
  void take(Device& device, cl::Kernel kernel, const Taps& taps, bool by_value);
  bool take_columns(Device& device, const Taps& taps);
  bool take_single_pass(Device& device, const Taps& taps, const Tuning& fit);
  void make_passes(Device& device, const std::vector<float>& kx, const std::vector<float>& ky);
  float delta_ = 0.f;
  std::string name_;
  bool fused_ = false;
};

// Large 2-D windows by FFT, overlap-save: the input cut into blocks of fft_block_side(rx) x
// fft_block_side(ry) floats overlapping by the window, each transformed (VkFFT), multiplied by the
// window's spectrum and transformed back, its middle kept. Results match the direct correlation
// within float rounding (tests: 1e-5 of the window's L1 norm), not bit for bit.
class FftCorrelation {
 public:
  FftCorrelation(Device& device, int rx, int ry, const std::vector<float>& weights, float delta,
                 const std::string& name);
  ~FftCorrelation();
  FftCorrelation(const FftCorrelation&) = delete;
  FftCorrelation& operator=(const FftCorrelation&) = delete;
  // Plans the transform on its first call for an image width (VkFFT compiles its kernels then):
  // one launch transforms a row of blocks, at most 32 MiB of them, plus one block for the
  // window's spectrum. These buffers are the filter's own; the streamer counts them against its
  // budget through device_bytes_ahead().
  void enqueue(const Stage& stage, const Plane& src, const Plane& dst);
  // What planning for this width will allocate beyond the buffers held now.
  uint64_t device_bytes_ahead(int width) const;
  Halo halo() const;
  // Output rows of a block: strips that are multiples of it give the same blocks, and so the same
  // bits, as one strip over the whole image.
  int block_rows() const;
  std::string describe() const;  // "FFT, 512x512 blocks (482x482 outputs each)"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
// The block side for a window radius: the smallest power of two at least 32 radius and 128, so
// at least 15/16 of a block's outputs are kept, up to fft_max_block (radii up to fft_max_radius
// keep at least half). Powers of two are the cheapest transform sizes per pixel (measured on
// PoCL against sizes with factors of 3 and 5).
constexpr int fft_max_block = 4096, fft_max_radius = fft_max_block / 4;
int fft_block_side(int radius);
// The cost model. FFT work per output pixel: a block's pixels per output kept, times log2 of a
// block's pixels; Tuning::fft_tap_cost says how many direct taps one unit of it costs on the
// device. The FFT pays where that is less than the window's taps.
double fft_cost(int rx, int ry);
bool fft_pays(const Tuning& tuning, int rx, int ry);

// How a 2-D window is computed: the cost model's choice, or forced.
enum class Method { automatic, direct, fft };

// Whole filters made of one correlation and a border: what the blurs, Sobel's single derivatives
// and user kernels are. `what` is the describe() prefix ("gaussian sigma 2x2 radius 8x8").
class SeparableFilter : public Filter {
 public:
  SeparableFilter(Device& device, const std::vector<float>& kx, const std::vector<float>& ky,
                  float delta, Border border, const std::string& name, std::string what);
  Halo halo() const override { return halo_; }
  Border border() const override { return border_; }
  int temp_planes() const override { return pass_.temp_planes(); }
  void enqueue(Stage& stage) override { pass_.enqueue(stage); }
  std::string describe() const override { return what_ + ", " + pass_.describe(); }

 private:
  Halo halo_;
  Border border_;
  std::string what_;
  SeparableCorrelation pass_;
};

class CorrelationFilter : public Filter {
 public:
  // weights: (2*ry + 1) x (2*rx + 1), row-major. method: direct or FFT, or the cost model's pick
  // (fft_pays).
  CorrelationFilter(Device& device, int rx, int ry, const std::vector<float>& weights, float delta,
                    Border border, const std::string& name, std::string what,
                    Method method = Method::automatic);
  Halo halo() const override { return halo_; }
  Border border() const override { return border_; }
  int strip_rows_multiple() const override { return fft_ ? fft_->block_rows() : 0; }
  uint64_t device_bytes_ahead(int width) const override {
    return fft_ ? fft_->device_bytes_ahead(width) : 0;
  }
  void enqueue(Stage& stage) override;
  std::string describe() const override;

 private:
  Halo halo_;
  Border border_;
  std::string what_;
  std::unique_ptr<Correlation> pass_;
  std::unique_ptr<FftCorrelation> fft_;
};

}  // namespace clf

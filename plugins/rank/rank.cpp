// rank: median and rank filters (cv2.medianBlur, scipy.ndimage.percentile_filter): the Q-th
// smallest value of each K x K window. rank.cl holds the ways: a pruned sorting network for K <= 9,
// sliding histograms for u8 levels (one) and for u16 levels and half values (two), and a bisection
// of the keys 8 bits a step for the rest. The way is chosen per image at enqueue, when the stage
// says the pixel type (Stage::pixel_type). The network computes rank.tile_width x rank.tile_height
// outputs a work-item where the tuning says so (GPUs), sharing their windows' sorts
// (selection.hpp). The example of a non-linear filter for plugin authors: a window staged in
// __local, launch sizes, a type-dependent path (docs/PLUGINS.md).
#include <algorithm>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <map>
#include <optional>
#include <set>

#include "../common/levels.hpp"
#include "../common/local_memory.hpp"
#include "../common/window.hpp"
#include "rank_kernels.hpp"  // rank_rank_cl
#include "selection.hpp"

namespace {
using namespace clf;

constexpr int max_radius = 127;       // ksize 255
constexpr int network_max_ksize = 9;  // 81 values in registers
constexpr int network_tile_w = 32, network_tile_h = 8;
// Work-items a group of the kernels with __local counts (fewer where the device's local memory
// says so), and the bytes of counts each owns; rows a histogram's work-item walks.
constexpr int histogram_most = 64, histogram16_most = 32, bisect_most = 64;
constexpr size_t histogram_bytes = 272 * 2, histogram16_bytes = 544 * 2, bisect_bytes = 272 * 2;
constexpr int histogram_run = 32;

// Batcher's odd-even merge sort over the next power of two, its comparators past n dropped (the
// padding would be +inf, which never moves), then pruned backwards to those that reach position q.
std::string pruned_network(int n, int q) {
  int p2 = 1;
  while (p2 < n) p2 *= 2;
  std::vector<std::pair<int, int>> all;
  for (int p = 1; p < p2; p *= 2)
    for (int k = p; k >= 1; k /= 2)
      for (int j = k % p; j + k < p2; j += 2 * k)
        for (int i = 0; i < std::min(k, p2 - j - k); ++i)
          if ((i + j) / (2 * p) == (i + j + k) / (2 * p) && i + j + k < n)
            all.emplace_back(i + j, i + j + k);
  std::set<int> needed{q};
  std::vector<std::pair<int, int>> kept;
  for (auto it = all.rbegin(); it != all.rend(); ++it)
    if (needed.count(it->first) || needed.count(it->second)) {
      kept.push_back(*it);
      needed.insert(it->first);
      needed.insert(it->second);
    }
  std::string text;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it)
    text += "CX(" + std::to_string(it->first) + "," + std::to_string(it->second) + ")";
  return text;
}

enum class Way { network, histogram, histogram_u16, histogram_half, bisect };
const char* way_name(Way way) {
  switch (way) {
    case Way::network:
      return "network";
    case Way::histogram:
      return "histogram";
    case Way::histogram_u16:
      return "two-level histogram of u16 levels";
    case Way::histogram_half:
      return "two-level histogram of half values";
    case Way::bisect:
      break;
  }
  return "bisect";
}

class RankFilter : public Filter {
 public:
  RankFilter(Device& device, std::string name, int radius, int q, Border border,
             const std::string& method)
      : device_(device),
        name_(std::move(name)),
        radius_(radius),
        q_(q),
        border_(border),
        method_(method) {
    const int k = 2 * radius + 1;
    if (method == "network" && k > network_max_ksize)
      throw Error(ErrorKind::usage, name_ + ": method=network takes ksize up to " +
                                        std::to_string(network_max_ksize) +
                                        " (got ksize=" + std::to_string(k) + ")");
    if (!tiled_ && k <= network_max_ksize) {
      tile_w_ = std::clamp(int(device_.knob_number("rank.tile_width", 1)), 1, k);
      tile_h_ = std::clamp(int(device_.knob_number("rank.tile_height", 1)), 1, k);
    }
    median3_ = !tiled_ && vector_ > 1 && k == 3 && q_ == 4 && tile_w_ * tile_h_ == 1 &&
               device_.knob_number("rank.median3_rows", 0) == 2;
  }
  Halo halo() const override { return {radius_, radius_}; }
  Border border() const override { return border_; }
  void enqueue(Stage& stage) override {
    const Way way = choose(stage.pixel_type());
    cl::Kernel& kernel = kernel_for(way, way == Way::network && tile_fits(stage));
    last_way_ = way;
    KernelArgs args(kernel);
    args << stage.input() << stage.output() << stage.width() << stage.rows();
    const size_t w = size_t(stage.width()), h = size_t(stage.rows()), c = size_t(stage.channels());
    auto up = [](size_t v, size_t m) { return (v + m - 1) / m * m; };
    if (way == Way::network) {
      if (tile_fits(stage))
        stage.launch_items(kernel,
                           cl::NDRange((w + tile_w_ - 1) / tile_w_, (h + tile_h_ - 1) / tile_h_, c),
                           "rank_tile");
      else if (tiled_)
        stage.launch(kernel, cl::NDRange(up(w, network_tile_w), up(h, network_tile_h), c),
                     cl::NDRange(network_tile_w, network_tile_h, 1), "rank_network_tiled");
      else if (median3_)
        stage.launch_items(kernel, cl::NDRange((w + vector_ - 1) / vector_, (h + 1) / 2, c),
                           "rank_median3_vector");
      else if (vector_ > 1)
        stage.launch_items(kernel, cl::NDRange((w + vector_ - 1) / vector_, h, c),
                           "rank_network_vector",  // its window, K x K vectors
                           size_t((2 * radius_ + 1) * (2 * radius_ + 1) * vector_) * sizeof(float));
      else
        stage.launch_items(kernel, cl::NDRange(w, h, c), "rank_network_direct");
      return;
    }
    // A work-item a column: the histograms walk down histogram_run rows, the bisection one.
    args << radius_ << q_;
    const size_t group = size_t(group_of(way));
    const size_t rows = way == Way::bisect ? h : (h + histogram_run - 1) / histogram_run;
    stage.launch(kernel, cl::NDRange(up(w, group), rows, c), cl::NDRange(group, 1, 1),
                 way == Way::histogram ? "rank_histogram"
                 : way == Way::bisect  ? "rank_bisect"
                                       : "rank_histogram16");
  }
  std::string describe() const override {
    const int k = 2 * radius_ + 1;
    std::string way;
    if (last_way_)
      way = way_name(*last_way_);
    else if (method_ != "auto")
      way = method_;
    else
      way = k > network_max_ksize ? "histogram on u8, u16 and half images, bisect on others"
            : k > u8_network_max_ksize_
                ? "histogram on u8 images, network" + layout() + " on others"
                : "network";
    if (way == "network") way += layout();
    return name_ + " " + std::to_string(k) + "x" + std::to_string(k) + " rank " +
           std::to_string(q_) + " of " + std::to_string(k * k) + ", " + way;
  }

 private:
  Device& device_;
  std::string name_;
  int radius_, q_;
  Border border_;
  std::string method_;
  bool tiled_ = device_.knob("variant") == "tiled";
  // Direct: the tuning's vector of outputs a work-item (GPUs 4), at most 8 (CPUs: 16 spill
  // the network's registers).
  int vector_ = !tiled_ && device_.knob_number("vector_width", 1) >= 4
                    ? std::min(int(device_.knob_number("vector_width", 1)), 8)
                    : 1;
  // Direct: rank.tile_width x rank.tile_height outputs a work-item, sharing their windows' sorts
  // (1 x 1: none). Planes smaller than a tile (1-row strips) take the one-output kernels.
  int tile_w_ = 1, tile_h_ = 1;
  // u8 levels past it count in a histogram (method=auto), which on CPUs runs as fast as the network
  // at 9x9 and compiles once for every window and rank.
  int u8_network_max_ksize_ =
      int(device_.knob_number("rank.u8_network_max_ksize", network_max_ksize));
  // Direct in vectors, the 3x3 median from sorted columns, 2 rows a work-item (rank.median3_rows).
  bool median3_ = false;
  std::map<std::string, cl::Kernel> kernels_;
  // The work-items a group of a way with __local counts.
  int group_of(Way way) const {
    const uint64_t local = device_.info().local_mem_bytes;
    if (way == Way::histogram)
      return clf_plugins::halved_to_fit(histogram_bytes, local, histogram_most);
    if (way == Way::bisect) return clf_plugins::halved_to_fit(bisect_bytes, local, bisect_most);
    return clf_plugins::halved_to_fit(histogram16_bytes, local, histogram16_most);
  }
  bool tile_fits(const Stage& stage) const {
    return tile_w_ * tile_h_ > 1 && stage.width() >= tile_w_ && stage.rows() >= tile_h_;
  }
  std::string layout() const {
    const std::string tile = std::to_string(tile_w_) + "x" + std::to_string(tile_h_);
    return tiled_
               ? " tiled " + std::to_string(network_tile_w) + "x" + std::to_string(network_tile_h)
           : tile_w_ * tile_h_ > 1 ? " direct, " + tile + " outputs a work-item"
           : median3_    ? " direct x" + std::to_string(vector_) + ", 2 rows from sorted columns"
           : vector_ > 1 ? " direct x" + std::to_string(vector_)
                         : " direct";
  }
  std::optional<Way> last_way_;

  // The histograms count u8 levels, or 16-bit keys: u16 levels, half values.
  std::optional<Way> histogram_for(PixelType type) const {
    if (clf_plugins::u8_levels(type, border_)) return Way::histogram;
    if (!clf_plugins::sixteen_bit_keys(type, border_)) return std::nullopt;
    return type == PixelType::u16 ? Way::histogram_u16 : Way::histogram_half;
  }
  Way choose(PixelType type) const {
    const int k = 2 * radius_ + 1;
    if (method_ == "network") return Way::network;
    if (method_ == "bisect") return Way::bisect;
    const std::optional<Way> histogram = histogram_for(type);
    if (method_ == "histogram") {
      if (!histogram)
        throw Error(
            ErrorKind::usage,
            name_ + ": method=histogram counts u8 or u16 levels or half values; its input is " +
                pixel_type_name(type) +
                (type == PixelType::f32
                     ? " (an f32 image, or the results of the filters before it in the chain)"
                     : " with a border_value that is not one of them"));
      return *histogram;
    }
    const bool u8_histogram = histogram == Way::histogram && k > u8_network_max_ksize_;
    if (k <= network_max_ksize && !u8_histogram) return Way::network;
    return histogram ? *histogram : Way::bisect;
  }
  cl::Kernel& kernel_for(Way way, bool tile) {
    const std::string key = std::string(way_name(way)) + (tile ? " tile" : "");
    auto found = kernels_.find(key);
    if (found != kernels_.end()) return found->second;
    const int k = 2 * radius_ + 1;
    std::string options, source = rank_rank_cl, name = "rank_bisect";
    if (way == Way::network) {
      options = " -D R=" + std::to_string(radius_);
      if (tile) {
        options += " -D MX=" + std::to_string(tile_w_) + " -D MY=" + std::to_string(tile_h_);
        source = "#define CLF_RANK_TILE " +
                 clf_rank::selection_network(k, q_, tile_w_, tile_h_).source() + "\n" + source;
        name = "rank_tile";
      } else {
        options += " -D K=" + std::to_string(k) + " -D N=" + std::to_string(k * k) +
                   " -D Q=" + std::to_string(q_);
        if (tiled_) {
          options += " -D TW=" + std::to_string(network_tile_w) +
                     " -D TH=" + std::to_string(network_tile_h);
          if (device_.knob_number("stage_with_loads", 0)) options += " -D CLF_STAGE_LOADS";
        }
        source = "#define CLF_RANK_NETWORK " + pruned_network(k * k, q_) + "\n" + source;
        if (vector_ > 1) options += " -D VW=" + std::to_string(vector_);
        name = tiled_        ? "rank_network_tiled"
               : median3_    ? "rank_median3_vector"
               : vector_ > 1 ? "rank_network_vector"
                             : "rank_network_direct";
      }
    } else if (way == Way::histogram) {
      options =
          " -D HG=" + std::to_string(group_of(way)) + " -D RUN=" + std::to_string(histogram_run);
      name = "rank_histogram";
    } else if (way != Way::bisect) {
      options = " -D HG16=" + std::to_string(group_of(way)) +
                " -D RUN=" + std::to_string(histogram_run) +
                (way == Way::histogram_half ? " -D CLF_HALF_KEYS" : "");
      name = "rank_histogram16";
    } else {
      options = " -D BG=" + std::to_string(group_of(way));
    }
    cl::Program program =
        device_.build("rank.cl", source, options, Helpers::border | Helpers::stage);
    return kernels_[key] = device_.kernel(program, name.c_str());
  }
};

std::vector<ParamSpec> rank_params(bool median) {
  std::vector<ParamSpec> specs = clf_plugins::window_params(3, max_radius);
  if (!median)
    specs.push_back(ParamSpec::number("percentile",
                                      "which value of the sorted window: 0 = min, 50 = median, "
                                      "100 = max (scipy's rank rule: int(n percentile / 100))")
                        .fallback("50")
                        .at_least(0)
                        .at_most(100));
  specs.push_back(
      ParamSpec::one_of("method", {"auto", "network", "histogram", "bisect"},
                        "network: a sorting network in registers (ksize <= 9); histogram: a "
                        "sliding 256-bin histogram on u8 images, two levels of them on u16 and "
                        "half images; bisect: any data, the key 8 bits a step, 4 counts over the "
                        "window; auto: network to ksize 9 (u8 on CPUs: 7), then histogram "
                        "where it applies, else bisect")
          .fallback("auto"));
  // cv2.medianBlur replicates; scipy's percentile_filter reflects (OpenCV's reflect).
  return with_border_params(specs, median ? "replicate" : "reflect");
}

class RankFactory : public FilterFactory {
 public:
  explicit RankFactory(bool median) : median_(median) {}
  std::string name() const override { return median_ ? "median" : "rank"; }
  std::string summary() const override {
    return median_ ? "median of each ksize x ksize window (cv2.medianBlur); exact for every type"
                   : "percentile of each ksize x ksize window (scipy.ndimage.percentile_filter): "
                     "0 = min, 50 = median, 100 = max";
  }
  std::vector<ParamSpec> params() const override { return rank_params(median_); }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const int radius = clf_plugins::window_radius(p, name());
    const int n = (2 * radius + 1) * (2 * radius + 1);
    int q = n / 2;
    if (!median_) {
      const double percentile = p.get_float("percentile");
      q = percentile == 100 ? n - 1 : int(double(n) * percentile / 100.0);
    }
    return std::make_unique<RankFilter>(device, name(), radius, q, border_from_params(p),
                                        p.get_string("method"));
  }

 private:
  bool median_;
};

PluginManifest manifest() {
  return {{std::make_shared<RankFactory>(true), std::make_shared<RankFactory>(false)}};
}
}  // namespace

CLF_PLUGIN(manifest)

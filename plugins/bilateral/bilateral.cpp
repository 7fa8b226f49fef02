// bilateral: edge-preserving smoothing (cv2.bilateralFilter). Every channel of a pixel in one
// work-item, since the colour distance sums over them all: the pattern for filters that need the
// channels together (Stage planes carry them, plane_stride floats apart). The kernel is built per
// channel count, when the first strip says it (Stage::channels), and for the rows layout (GPUs':
// bilateral.outputs in the tuning) per pixel type too: there u8 levels take their colour weights
// from a table of the integral distances (Stage::pixel_type) in __local.
#include <algorithm>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "../common/groups.hpp"
#include "../common/levels.hpp"
#include "../common/local_memory.hpp"
#include "bilateral_kernels.hpp"  // bilateral_bilateral_cl

namespace {
using namespace clf;

constexpr int max_radius = 64;
constexpr int tile_w = 32, tile_h = 8;
constexpr int tiled_max_channels = 4;
// The rows layout's groups: work-items, and the most rows each walks down (fewer in a strip of few
// rows: group_rows). With a table per lane (32 copies of one u8 channel's: 32 KiB), larger groups
// (the tuning's bilateral.table_group, or with more channels bilateral.packed_group) down more
// rows, so that filling the table costs little beside the taps it serves.
constexpr int rows_group = 64, lane_tables_group = 256, lane_tables_rows = 16, lanes = 32;
// The pairs layout's groups and rows: each work-item starts its walk radius rows above its outputs.
constexpr int pairs_group = 128, pairs_rows = 64;

// The floats of a window row, per channel, that the rows layout loads (bilateral.cl's BL_W): whole
// float4s from CLF_HALO4(radius) columns left of a work-item's first output to its last output's
// window.
int rows_floats(int radius, int outputs) {
  return 4 * ((CLF_HALO4(radius) + outputs + radius + 3) / 4);
}

// OpenCV's taps: the disc sqrt(dx^2 + dy^2) <= radius.
bool in_disc(int dx, int dy, int radius) {
  return std::sqrt(double(dx) * dx + double(dy) * dy) <= radius;
}

// A tap's space weight, exp(-r^2 / 2 sigma_space^2).
float space_weight(double sigma_space, int dx, int dy) {
  const double r2 = double(dx) * dx + double(dy) * dy;
  return float(std::exp(-0.5 * r2 / (sigma_space * sigma_space)));
}

// The rows layout's taps (bilateral.cl, BL_TAPS): for dy = 0..radius, BL_ROWS(dy), then
// BL_GROUP(dx, dy, space) for every dx >= 0 with (dx, dy) in the disc, the space weight a float
// literal that reads back as space_weight's.
std::string rows_taps(int radius, double sigma_space) {
  std::string text = "#define BL_TAPS";
  char group[96];
  for (int dy = 0; dy <= radius; ++dy) {
    text += " \\\n  BL_ROWS(" + std::to_string(dy) + ")";
    for (int dx = 0; in_disc(dx, dy, radius); ++dx) {
      std::snprintf(group, sizeof group, " BL_GROUP(%d, %d, %.9ef)", dx, dy,
                    double(space_weight(sigma_space, dx, dy)));
      text += group;
    }
  }
  return text + "\n";
}

// Whether the disc's offset i (in pair_offsets' order) takes exp in place of the table:
// bilateral.pair_exp's share of them, spread evenly.
bool exp_offset(int i, double share) { return std::floor((i + 1) * share) > std::floor(i * share); }

// The offsets (dx, dy) of the disc's pixel pairs, in the pairs layout's order: dy = 0 to radius,
// dx from 1 on row 0 and from -radius below; whether each one's pairs take exp (exp_offset).
struct PairOffset {
  int dx, dy;
  bool by_exp;
};
std::vector<PairOffset> pair_offsets(int radius, double exp_share) {
  std::vector<PairOffset> offsets;
  for (int dy = 0; dy <= radius; ++dy)
    for (int dx = dy == 0 ? 1 : -radius; dx <= radius; ++dx)
      if (in_disc(dx, dy, radius))
        offsets.push_back({dx, dy, exp_offset(int(offsets.size()), exp_share)});
  return offsets;
}

// A pair's weight as the kernels take it: the space weight, or for exp its log2 (a space weight
// below float's least, from a tiny sigma_space, is 0: 2^-1000).
double pair_weight(const PairOffset& offset, double sigma_space) {
  const double weight = double(space_weight(sigma_space, offset.dx, offset.dy));
  return offset.by_exp ? std::max(std::log2(weight), -1000.0) : weight;
}

// The pairs layout's pairs (bilateral.cl, BL_PAIR_TAPS) for `outputs` outputs of a row at window
// columns CLF_HALO4(radius) on, of `floats` a row: those of a pixel of row y and one of row y + dy
// at each of `offsets` (BL_NEXT(dy) first loads row y + dy), each pair once where either pixel is
// an output whose disc holds the other. BL_PAIR(dy, p's column, q's column, space, p's output,
// q's): an output's index, or -1 where that pixel is none; BL_PAIR_EXP for the offsets by exp.
std::string pair_taps(const std::vector<PairOffset>& offsets, int radius, int outputs, int floats,
                      double sigma_space) {
  const int first = CLF_HALO4(radius);
  auto output = [&](int k) { return k >= first && k < first + outputs ? k - first : -1; };
  std::string text = "#define BL_PAIR_TAPS";
  char pair[112];
  for (size_t i = 0; i < offsets.size(); ++i) {
    const PairOffset& at = offsets[i];
    if (at.dy > 0 && (i == 0 || offsets[i - 1].dy != at.dy))
      text += " \\\n  BL_NEXT(" + std::to_string(at.dy) + ")";
    for (int kp = std::max(0, -at.dx); kp < floats && kp + at.dx < floats; ++kp) {
      const int op = output(kp), oq = output(kp + at.dx);
      if (op < 0 && oq < 0) continue;
      std::snprintf(pair, sizeof pair, " \\\n  BL_PAIR%s(%d, %d, %d, %.9ef, %d, %d)",
                    at.by_exp ? "_EXP" : "", at.dy, kp, kp + at.dx, pair_weight(at, sigma_space),
                    op, oq);
      text += pair;
    }
  }
  return text + "\n";
}

// The rows layout's taps in the pairs layout's order (bilateral.cl, BL_OTAP), as BL_TAPS: each
// output from its centre (BL_OCENTRE), then its taps where the pairs walk adds them: the rows
// above from the top (BL_OROW(dy)), each from its right (they are the q of pairs at (-dx, -dy));
// on row 0 -dx then dx for dx = 1 to radius; the rows below from their left. Each weighted as its
// pair at `offsets`.
std::string ordered_taps(const std::vector<PairOffset>& offsets, int radius, double sigma_space) {
  std::string text = "#define BL_TAPS BL_OCENTRE";
  char tap[80];
  auto add = [&](int tx, int ty) {  // the tap at (tx, ty) from the output: pair offset (dx, dy)
    const int dx = ty < 0 ? -tx : ty == 0 ? std::abs(tx) : tx, dy = std::abs(ty);
    const auto at = std::find_if(offsets.begin(), offsets.end(),
                                 [&](const PairOffset& o) { return o.dx == dx && o.dy == dy; });
    std::snprintf(tap, sizeof tap, " BL_OTAP%s(%s, %d, %.9ef)", at->by_exp ? "_EXP" : "",
                  ty == 0 ? "a" : "b", tx, pair_weight(*at, sigma_space));
    text += tap;
  };
  for (int ty = -radius; ty <= radius; ++ty) {
    text += ty == 0 ? std::string(" \\\n ") : " \\\n  BL_OROW(" + std::to_string(ty) + ")";
    if (ty == 0)
      for (int dx = 1; in_disc(dx, 0, radius); ++dx) add(-dx, 0), add(dx, 0);
    for (int k = -radius; k <= radius && ty != 0; ++k) {
      const int tx = ty < 0 ? -k : k;
      if (in_disc(tx, ty, radius)) add(tx, ty);
    }
  }
  return text + "\n";
}

// A kernel of the bilateral and how it launches, per channel count and colour table.
struct Layout {
  int outputs = 0;  // the rows layout: outputs a work-item (0: another layout)
  int group = rows_group, group_rows = 1, table_copies = 1;  // the rows layout's
  bool tiled = false;
  int vector = 1;
  cl::Kernel kernel;
  bool local_table = false;  // the rows layout's colour table, in __local
  bool pairs = false;        // the rows layout as pairs (bilateral_pairs)
  // With pairs: the rows layout with its taps in their order (bilateral_rows, the rows layout's
  // outputs and groups), for launches whose groups would walk down fewer than min_rows rows; its
  // kernel built at the first.
  std::shared_ptr<Layout> ordered;
  size_t min_rows = 1;
  int exp_offsets = 0;  // of the disc's (taps - 1) / 2 offsets, those whose pairs take exp
  std::string name(int taps) const {
    return outputs > 0 && exp_offsets > 0
               ? "pairs x" + std::to_string(outputs) + " (exp for " + std::to_string(exp_offsets) +
                     " of " + std::to_string((taps - 1) / 2) + " offsets)"
           : outputs > 0 ? (pairs ? "pairs x" : "rows x") + std::to_string(outputs)
           : tiled       ? "tiled " + std::to_string(tile_w) + "x" + std::to_string(tile_h)
           : vector > 1  ? "direct x" + std::to_string(vector)
                         : std::string("direct");
  }
};

// The options every bilateral program takes: the channel count, and the colour weights' exp (GPUs'
// native exp; CPUs' a polynomial in SIMD lanes: bilateral.cl).
std::string exp_option(const DeviceInfo& info, int channels) {
  return " -D CH=" + std::to_string(channels) +
         (info.is_gpu ? " -D BILATERAL_EXP=native_exp" : " -D BILATERAL_POLY");
}

// The rows (or pairs) layout's options.
std::string rows_options(const DeviceInfo& info, int channels, int radius, const Layout& layout) {
  std::string options = exp_option(info, channels) + " -D BL_R=" + std::to_string(radius) +
                        " -D BL_N=" + std::to_string(layout.outputs) +
                        " -D BL_W=" + std::to_string(rows_floats(radius, layout.outputs)) +
                        " -D BL_WG=" + std::to_string(layout.group);
  if (layout.local_table)
    options += " -D BL_LUT=" + std::to_string(255 * channels + 1) +
               " -D BL_COPIES=" + std::to_string(layout.table_copies);
  // NVIDIA's compiler takes PTX inline: a key's differences in one instruction.
  if (layout.local_table && info.is_gpu && info.vendor.find("NVIDIA") != std::string::npos)
    options += " -D BL_PTX";
  return options;
}

cl::Program build(Device& device, const std::string& source, const std::string& options) {
  return device.build("bilateral.cl", source, options, Helpers::border | Helpers::stage);
}

// The pairs layout's outputs a work-item and the fewest rows a group walks for a channel count:
// bilateral.pair_outputs + suffix (a multiple of 4, at least 4) and pair_min_rows + suffix; where
// those are unset, the unsuffixed knobs; where those are unset too, 4 and `rows`.
struct PairKnobs {
  int outputs;
  size_t min_rows;
};
PairKnobs pair_knobs(const Device& device, const std::string& suffix, double rows) {
  const double outputs = device.knob_number("bilateral.pair_outputs", 4);
  rows = device.knob_number("bilateral.pair_min_rows", rows);
  return {std::max(4, int(device.knob_number("bilateral.pair_outputs" + suffix, outputs)) / 4 * 4),
          size_t(std::max(1.0, device.knob_number("bilateral.pair_min_rows" + suffix, rows)))};
}

// The rows and pairs layouts' loads: float4s from plane_margin(radius) columns left of a row.
void check_aligned(const Plane& input, int radius) {
  if (input.origin % 4 != 0 || input.pitch % 4 != 0 || input.plane_stride % 4 != 0 ||
      input.origin % input.pitch < plane_margin(radius))
    throw Error(ErrorKind::usage, "bilateral: input plane not float4-aligned with a " +
                                      std::to_string(plane_margin(radius)) + "-column left margin");
}

class Bilateral : public Filter {
 public:
  Bilateral(Device& device, int radius, double sigma_color, double sigma_space, Border border)
      : device_(device),
        radius_(radius),
        sigma_color_(sigma_color),
        sigma_space_(sigma_space),
        border_(border),
        color_coeff_(float(-0.5 / (sigma_color * sigma_color))),
        rows_outputs_(radius <= int(device.knob_number("bilateral.rows_max_radius", 0))
                          ? int(device.knob_number("bilateral.outputs", 0)) / 4 * 4
                          : 0),
        pair_channels_(rows_outputs_ > 0 ? int(device.knob_number("bilateral.pair_channels", 0))
                                         : 0),
        pairs_1ch_(rows_outputs_ > 0 &&
                   device.knob_number("bilateral.pairs_1ch", pair_channels_ == 1) != 0),
        pairs_{pair_knobs(device, "", 2.0 * radius), pair_knobs(device, "_1ch", 8.0 * radius)},
        min_groups_(clf_plugins::min_groups(device, 8)),
        pair_min_groups_(
            clf_plugins::min_groups(device, device.knob_number("bilateral.pair_groups", 2))),
        pair_exp_(std::clamp(device.knob_number("bilateral.pair_exp", 0), 0.0, 1.0)) {
    // Space weights exp(-r^2 / 2 ss^2) over the disc, in OpenCV's order.
    std::vector<cl_int2> offsets;
    std::vector<float> space;
    for (int dy = -radius; dy <= radius; ++dy)
      for (int dx = -radius; dx <= radius; ++dx)
        if (in_disc(dx, dy, radius)) {
          offsets.push_back(cl_int2{{dx, dy}});
          space.push_back(space_weight(sigma_space, dx, dy));
        }
    taps_ = int(space.size());
    offsets_ = device.upload(offsets.data(), offsets.size() * sizeof(cl_int2), "bilateral taps");
    space_ = device.upload(space.data(), space.size() * sizeof(float), "bilateral weights");
  }
  // The rows layout loads a row's rows_floats from CLF_HALO4(radius) columns left of a
  // work-item's first output, none tested: the last work-item's (its first output the row's last
  // column) reach rows_floats - CLF_HALO4(radius) - 1 columns past the row's end, for the outputs
  // there that it computes and does not store. The border fills them, as it fills the window's
  // (the plane's margin past them holds what it held before, and a colour table looked up with it
  // reads outside the table).
  Halo halo() const override {
    if (rows_outputs_ == 0) return {radius_, radius_};
    const int outputs = std::max({rows_outputs_, pair_channels_ > 0 ? pairs_[0].outputs : 0,
                                  pairs_1ch_ ? pairs_[1].outputs : 0});
    return {rows_floats(radius_, outputs) - CLF_HALO4(radius_) - 1, radius_};
  }
  Border border() const override { return border_; }
  void enqueue(Stage& stage) override {
    const Layout& layout =
        layout_for(stage.channels(), clf_plugins::u8_levels(stage.pixel_type(), border_));
    const size_t w = size_t(stage.width()), h = size_t(stage.rows());
    if (layout.outputs > 0) {
      check_aligned(stage.input(), radius_);
      // Pairs whose groups would walk too few rows past the radius above them give way to the
      // rows layout in their order (their bits).
      const Layout* run = &layout;
      size_t rows = rows_a_group(layout, w, h);
      if (layout.pairs && rows < layout.min_rows) {
        Layout& ordered = *layout.ordered;
        if (!ordered.kernel()) ordered.kernel = rows_kernel(stage.channels(), ordered, true);
        run = &ordered;
        rows = rows_a_group(*run, w, h);
      }
      const size_t n = size_t(run->outputs), group = size_t(run->group);
      cl::Kernel kernel = run->kernel;
      bind(kernel, stage) << int(rows);
      stage.launch(kernel, cl::NDRange(up((w + n - 1) / n, group), (h + rows - 1) / rows),
                   cl::NDRange(group, 1), run->pairs ? "bilateral_pairs" : "bilateral_rows");
      return;
    }
    cl::Kernel kernel = layout.kernel;
    bind(kernel, stage);
    if (layout.tiled) {
      stage.launch(kernel, cl::NDRange(up(w, tile_w), up(h, tile_h), 1),
                   cl::NDRange(tile_w, tile_h, 1), "bilateral_tiled");
    } else {
      stage.launch_items(kernel,
                         cl::NDRange((w + size_t(layout.vector) - 1) / size_t(layout.vector), h),
                         layout.vector > 1 ? "bilateral_vector" : "bilateral_direct");
    }
  }
  std::string describe() const override {
    char text[120];
    std::snprintf(text, sizeof text, "bilateral d %d (%d taps), sigma_color %g, sigma_space %g, ",
                  2 * radius_ + 1, taps_, sigma_color_, sigma_space_);
    std::string layouts;
    for (const auto& [key, layout] : kernels_)
      layouts += (layouts.empty() ? "" : ", ") + std::to_string(key.first) + " channels " +
                 layout.name(taps_) +
                 (!layout.local_table ? ""
                  : layout.table_copies > 1
                      ? " with " + std::to_string(layout.table_copies) + " copies of a colour table"
                      : std::string(" with a colour table in __local"));
    return text + (layouts.empty() ? std::string("layout chosen per channel count") : layouts);
  }

 private:
  Device& device_;
  int radius_;
  double sigma_color_, sigma_space_;
  Border border_;
  float color_coeff_;
  int taps_ = 0;
  int rows_outputs_;  // the rows layout's outputs a work-item, from the tuning (0: not taken)
  // The rows layout as pairs from pair_channels_ channels (0: never); one channel's where
  // pairs_1ch_ (bilateral.pairs_1ch; where unset, pair_channels_ 1).
  int pair_channels_;
  bool pairs_1ch_;
  // The pairs' outputs a work-item and the fewest rows a group walks down past its radius rows
  // above (bilateral.pair_outputs, pair_min_rows: 4 and 2 radius by default): launches that would
  // give fewer take the rows layout in the pairs' order. [0] for channels past one, [1] for one
  // (bilateral.pair_outputs_1ch, pair_min_rows_1ch; the others' where set, else 4 outputs and 8
  // radius: one channel's pairs gain less over its rows layout, and only long walks pay for them).
  PairKnobs pairs_[2];
  // Groups a launch of the rows layout keeps in flight at least: 8 a compute unit.
  size_t min_groups_;
  // The pairs layout's (bilateral.pair_groups a compute unit): fewer, since its groups start their
  // walks radius rows above the rows they store.
  size_t pair_min_groups_;
  // The share of the disc's offsets whose pairs take their weights from exp2 where the pairs
  // layout keys a table with packed bytes (bilateral.pair_exp, 0 to 1): the table's loads and the
  // device's exp unit at work side by side.
  double pair_exp_;
  DeviceBuffer offsets_, space_;
  std::map<std::pair<int, bool>, Layout> kernels_;  // by channel count and colour table

  static size_t up(size_t v, size_t m) { return (v + m - 1) / m * m; }
  // The rows (or pairs) layout's rows a group on a w x h plane: its group_rows, fewer where a
  // strip's few rows would leave fewer than min_groups_ groups (each group's work-items, its
  // colour table, then too few; the pairs' pair_min_groups_).
  size_t rows_a_group(const Layout& layout, size_t w, size_t h) const {
    const size_t n = size_t(layout.outputs), group = size_t(layout.group);
    return clf_plugins::units_a_group(h, up((w + n - 1) / n, group) / group,
                                      size_t(layout.group_rows),
                                      layout.pairs ? pair_min_groups_ : min_groups_);
  }
  // The arguments every kernel takes first; more may follow.
  KernelArgs bind(cl::Kernel& kernel, const Stage& stage) const {
    KernelArgs args(kernel);
    args << stage.input() << stage.output() << stage.width() << stage.rows() << offsets_.get()
         << space_.get() << taps_ << color_coeff_;
    return args;
  }
  // Copies of a table of `entries` floats for the lanes of a warp: the most, a power of two to 32,
  // that fit the device's __local memory, the table being the kernel's only __local. A table of
  // packed bytes' distances takes at most bilateral.packed_copies: fewer copies leave the cache
  // more room (the lanes' loads conflict more).
  int table_copies(uint64_t entries, bool packed) const {
    const int most =
        packed ? std::clamp(int(device_.knob_number("bilateral.packed_copies", lanes)), 1, lanes)
               : lanes;
    return clf_plugins::halved_to_fit(entries * sizeof(float), device_.info().local_mem_bytes,
                                      most);
  }
  const Layout& layout_for(int channels, bool levels) {
    const int outputs = channels <= tiled_max_channels ? rows_outputs_ : 0;
    // u8 levels in the rows layout: the colour weights of the whole-number distances from a table
    // that its groups fill in __local, keyed by integers from each pixel's channels packed in a
    // word. Nothing else about the program depends on the pixel type.
    const bool local_table = levels && outputs > 0;
    const auto key = std::make_pair(channels, local_table);
    auto found = kernels_.find(key);
    if (found != kernels_.end()) return found->second;
    Layout layout = outputs > 0 ? rows_layout(channels, local_table) : simd_layout(channels);
    return kernels_.emplace(key, std::move(layout)).first->second;
  }
  // The one-output, SIMD or tiled layout (bilateral_direct, _vector, _tiled).
  Layout simd_layout(int channels) const {
    Layout layout;
    const uint64_t window_bytes = uint64_t(channels) * (tile_h + 2 * radius_) *
                                  ((plane_margin(radius_) + tile_w + radius_ + 3) / 4) * 16;
    layout.tiled = device_.knob("variant") == "tiled" && channels <= tiled_max_channels &&
                   window_bytes <= device_.info().local_mem_bytes;
    // SIMD vectors of the tuning's width: OpenCL's 4, 8 or 16 lanes, the widest it allows.
    const int vector_width = int(device_.knob_number("vector_width", 1));
    layout.vector = layout.tiled         ? 1
                    : vector_width >= 16 ? 16
                    : vector_width >= 8  ? 8
                    : vector_width >= 4  ? 4
                                         : 1;
    std::string options = exp_option(device_.info(), channels);
    if (layout.tiled) {
      options += " -D R=" + std::to_string(radius_) + " -D TW=" + std::to_string(tile_w) +
                 " -D TH=" + std::to_string(tile_h);
      if (device_.knob_number("stage_with_loads", 0)) options += " -D CLF_STAGE_LOADS";
    } else if (layout.vector > 1) {
      options += " -D VW=" + std::to_string(layout.vector);
    }
    layout.kernel = device_.kernel(build(device_, bilateral_bilateral_cl, options),
                                   layout.tiled        ? "bilateral_tiled"
                                   : layout.vector > 1 ? "bilateral_vector"
                                                       : "bilateral_direct");
    return layout;
  }
  // The rows layout (bilateral_rows), from pair_channels_ channels as pairs (bilateral_pairs)
  // with the rows layout in their order beside them.
  Layout rows_layout(int channels, bool local_table) const {
    Layout rows;
    rows.local_table = local_table;
    rows.outputs = rows_outputs_;
    if (local_table && device_.knob_number("bilateral.lane_tables", 0) != 0 &&
        size_t(lanes) <= device_.info().max_work_group_size) {
      rows.table_copies = table_copies(255 * uint64_t(channels) + 1, channels > 1);
      if (rows.table_copies > 1) {
        const double group = channels > 1
                                 ? device_.knob_number("bilateral.packed_group", lane_tables_group)
                                 : device_.knob_number("bilateral.table_group", lane_tables_group);
        rows.group = std::clamp(int(group), lanes, int(device_.info().max_work_group_size));
        rows.group_rows = lane_tables_rows;
      }
    }
    if (channels == 1 ? !pairs_1ch_ : pair_channels_ == 0 || channels < pair_channels_) {
      rows.kernel = rows_kernel(channels, rows, false);
      return rows;
    }
    Layout walk = rows;
    walk.pairs = true;
    walk.outputs = pairs_[channels == 1].outputs;
    walk.min_rows = pairs_[channels == 1].min_rows;
    walk.group = std::clamp(int(device_.knob_number("bilateral.pair_group", pairs_group)), 1,
                            int(device_.info().max_work_group_size));
    walk.group_rows = std::max(1, int(device_.knob_number("bilateral.pair_rows", pairs_rows)));
    const std::vector<PairOffset> offsets = pair_offsets_for(channels, local_table);
    walk.exp_offsets = int(std::count_if(offsets.begin(), offsets.end(),
                                         [](const PairOffset& o) { return o.by_exp; }));
    const std::string source = pair_taps(offsets, radius_, walk.outputs,
                                         rows_floats(radius_, walk.outputs), sigma_space_) +
                               "#define BL_PAIRS\n" + bilateral_bilateral_cl;
    walk.kernel = device_.kernel(
        build(device_, source, rows_options(device_.info(), channels, radius_, walk)),
        "bilateral_pairs");
    walk.ordered = std::make_shared<Layout>(std::move(rows));  // its kernel: at its first launch
    return walk;
  }
  // The rows layout's kernel: its taps grouped by space weight, or in the pairs' order.
  cl::Kernel rows_kernel(int channels, const Layout& rows, bool pairs_order) const {
    const std::string taps =
        pairs_order
            ? ordered_taps(pair_offsets_for(channels, rows.local_table), radius_, sigma_space_)
            : rows_taps(radius_, sigma_space_);
    return device_.kernel(build(device_, taps + bilateral_bilateral_cl,
                                rows_options(device_.info(), channels, radius_, rows)),
                          "bilateral_rows");
  }
  // The disc's pair offsets, bilateral.pair_exp's share of them by exp where packed keys key the
  // table.
  std::vector<PairOffset> pair_offsets_for(int channels, bool local_table) const {
    return pair_offsets(radius_, local_table && channels > 1 ? pair_exp_ : 0);
  }
};

class BilateralFactory : public FilterFactory {
 public:
  std::string name() const override { return "bilateral"; }
  std::string summary() const override {
    return "edge-preserving smoothing (cv2.bilateralFilter): neighbours weighted by distance and "
           "by colour difference";
  }
  std::vector<ParamSpec> params() const override {
    return with_border_params({
        ParamSpec::integer("d",
                           "diameter of the disc of neighbours; 0 = from sigma_space (radius "
                           "round(1.5 sigma_space)), as OpenCV")
            .fallback("0")
            .at_least(0)
            .at_most(2 * max_radius + 1),
        ParamSpec::number("sigma_color",
                          "colour sigma, in pixel values (0..255 for u8, 0..1 for usual float "
                          "images): larger mixes more different colours")
            .fallback("25")
            .above(0),
        ParamSpec::number("sigma_space", "spatial sigma in pixels (with d = 0, at most " +
                                             std::to_string(int(max_radius / 1.5)) +
                                             ": the disc's radius)")
            .fallback("3")
            .above(0),
    });
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const int d = p.get_int("d");
    const double sigma_space = p.get_float("sigma_space");
    // OpenCV: radius d / 2, or round(1.5 sigma_space) for d <= 0; at least 1.
    if (d == 0 && sigma_space * 1.5 > max_radius)
      throw Error(ErrorKind::usage, "bilateral: sigma_space=" + p.raw().at("sigma_space") +
                                        " with d=0 makes a disc of radius " +
                                        std::to_string(std::lrint(sigma_space * 1.5)) + ", past " +
                                        std::to_string(max_radius) + "; give d for a smaller disc");
    const int radius = std::max(1, d > 0 ? d / 2 : int(std::lrint(sigma_space * 1.5)));
    return std::make_unique<Bilateral>(device, radius, p.get_float("sigma_color"), sigma_space,
                                       border_from_params(p));
  }
};

PluginManifest manifest() { return {{std::make_shared<BilateralFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

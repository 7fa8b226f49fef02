// morphology: erode, dilate and their compositions (cv2.morphologyEx) with OpenCV's structuring
// elements (cv2.getStructuringElement: rect, ellipse, cross). Every operation is a list of passes
// (morphology.cl), each a min or max over horizontal segments: an ellipse or a cross as its rows
// (morph_pass, morph_pass_vector); a rect from 5x5 on as a row pass and a column pass (on GPUs
// from 9x9 at a constant cost, morph_line), or read from the input as one pass with van Herk down
// the columns (CPUs: morph_rect_vector; GPUs from 9x9 to 47x47: morph_rect_walk, the tuning's
// morphology.rect_walk). Passes after the first read temp planes and apply
// the border rule themselves, so open and close fuse on the device and give OpenCV's results at
// the edges, the border applied before every erode and dilate. An erode or dilate of one element
// up to 15x15 read from the input may instead run on the 2-D correlation's kernels with a min or
// max in place of the multiply-add (clf::Correlation, WindowReduce): on GPUs blocks of 4 x
// extremum_block_rows (the tuning) outputs a work-item from float4 reads, each window row's extrema
// over the element's centred segments taken once for all of them.
#include <algorithm>
#include <clf/correlate.hpp>
#include <clf/error.hpp>
#include <clf/filter.hpp>
#include <clf/plugin.hpp>
#include <cmath>
#include <map>

#include "../common/groups.hpp"
#include "../common/window.hpp"
#include "morphology_kernels.hpp"  // morphology_morphology_cl

namespace {
using namespace clf;

constexpr int max_radius = 255;
constexpr int separable_from_radius = 2;  // a rect from 5x5 on: a row pass and a column pass
constexpr int gpu_vector_max_taps = 9;
// Elements of more rows take their half-widths from a buffer: literal rows make a program's build
// time grow with the element, far past what a filter can wait for on PoCL.
constexpr size_t literal_max_rows = 31;
constexpr int rect_run = 4;              // blocks of 2 r + 1 output rows a morph_rect_vector item
constexpr int line_from_radius = 3;      // a rect from 7x7 on may take morph_line
constexpr int gpu_line_from_radius = 4;  // method=auto: lines on GPUs from 9x9
// morph_rect_vector's row extrema by doubling windows from 9x9 (morphology.row_doubling_min_radius)
constexpr int row_doubling_min_radius = 4;
// The column line walks down segments of whole blocks, morphology.line_walk_rows rows at least
// (its 2 r halo rows are read twice, by the segment above too; 0: one block a work-item, the
// suffixes through dst), in groups of morphology.line_walk_group columns (64; morphology.cl's
// LINE_GROUP), or 32 where only so a group's block takes at most half of local memory: larger
// blocks leave room for too few groups.
constexpr double line_walk_rows = 200;
// The columns of a walking column line's group for blocks of k rows: 0 where none fits.
size_t column_walk_group(const Device& device, size_t k) {
  const double most = device.knob_number("morphology.line_walk_group", 64);
  for (const size_t group : {64, 32})
    if (double(group) <= most && 2 * k * group * sizeof(float) <= device.info().local_mem_bytes)
      return group;
  return 0;
}
// The row line's layout for radius rx: from morphology.row_tile_min_radius, tiles of
// morphology.row_tile outputs a group of morphology.row_group work-items (fewer for a smaller
// tile), their blocks scanned in chunks (ROW_TILE), halved until its __local arrays fit half of
// local memory; else (a row_tile of 0) the widest group whose 2 rx + 1 outputs a work-item fit.
struct RowLine {
  size_t tile = 0, group = 64;  // outputs a group (0: 2 rx + 1 a work-item), its work-items
  std::string options;          // morphology.cl's
};
RowLine row_line(const Device& device, int rx) {
  const size_t k = size_t(2 * rx + 1), half = device.info().local_mem_bytes / 2;
  RowLine row;
  if (rx >= device.knob_number("morphology.row_tile_min_radius", 0))
    row.tile = size_t(std::clamp(device.knob_number("morphology.row_tile", 0), 0.0, 65536.0));
  const size_t chunk = size_t(std::sqrt(double(k))) | 1;  // odd: no bank conflicts
  auto local_bytes = [&](size_t tile) {  // morphology.cl's pre4, suf4, before and after
    const size_t span = tile + k - 1;
    return (2 * (span / 4 + 2) * 4 + 2 * (span + k - 1) / k * ((k + chunk - 1) / chunk)) *
           sizeof(float);
  };
  while (row.tile > 0 && local_bytes(row.tile) > half) row.tile /= 2;
  if (row.tile > 0) {
    const double most = double(std::max<size_t>(1, device.info().max_work_group_size));
    const double group = std::clamp(device.knob_number("morphology.row_group", 128), 1.0, most);
    row.group = std::min(row.tile, size_t(group));
    row.options = " -D LG=" + std::to_string(row.group) +
                  " -D ROW_TILE=" + std::to_string(row.tile) +
                  " -D ROW_CHUNK=" + std::to_string(chunk);
    return row;
  }
  while (row.group > 1 && (2 * row.group * k + k - 1) * sizeof(float) > half) row.group /= 2;
  row.options = " -D LG=" + std::to_string(row.group);
  return row;
}
constexpr int window_auto_max_radius = 7;  // method=auto on GPUs: erode and dilate to 15x15
constexpr int window_max_radius = 31;      // method=window: elements whose rows fit 64 taps
// morph_rect_walk (morphology.rect_walk, GPUs): rects to radius morphology.walk_max_radius (the
// tuning; 15 where it says nothing); groups of morphology.walk_group columns walk down
// morphology.walk_blocks blocks of 2 r + 1 rows, from morphology.walk_columns_min_radius columns
// first (morph_rect_walk_columns).
constexpr int walk_max_radius = 15;
// The largest radius the walk takes on `device`; columns first defaults to past it (never).
double walk_reach(const Device& device) {
  return device.knob_number("morphology.walk_max_radius", walk_max_radius);
}

// A structuring element as half-widths per row: row dy (of -r..r) covers dx in [-w, w].
using Segments = std::vector<int>;

// cv2.getStructuringElement's shapes, square of side 2r + 1 (anchor at the centre).
Segments element(const std::string& shape, int r) {
  Segments w(size_t(2 * r + 1), r);
  if (shape == "cross")
    for (int dy = -r; dy <= r; ++dy) w[size_t(dy + r)] = dy == 0 ? r : 0;
  if (shape == "ellipse" && r > 0)  // OpenCV: dx = round(c sqrt((r^2 - dy^2) / r^2)), c = r
    for (int dy = -r; dy <= r; ++dy)
      w[size_t(dy + r)] = int(std::lround(r * std::sqrt(double(r * r - dy * dy) / (r * r))));
  return w;
}

struct Pass {
  bool max = false;
  Segments rows;                // half-widths by dy, centred
  int src = -1;                 // -1: the stage input, else a temp plane
  int dst = -1;                 // -1: the output, else a temp plane
  int combine = 0, other = -1;  // see morphology.cl; other: -1 input, else a temp plane
  int ext_x = 0, ext_y = 0;     // how far past the strip this pass computes
  int vector = 1;               // outputs a work-item
  int line = 0;                 // a long line at constant cost (morph_line): 1 a column, 2 a row
  int line_walk = 0;            // blocks a work-item of a column line walks down (0: one each)
  size_t column_group = 0;      // columns a group of that walking column line
  bool rect = false;            // a whole rect from the input (morph_rect_vector where vectors)
  bool walk = false;            // that rect by groups walking down the columns (morph_rect_walk)
  bool window = false;          // the element on the correlation's kernels (from the input)
  bool doubling = false;        // morph_rect_vector's row extrema by doubling windows
  int taps() const {
    int n = 0;
    for (int w : rows) n += 2 * w + 1;
    return n;
  }
  int rx() const { return *std::max_element(rows.begin(), rows.end()); }
  int ry() const { return int(rows.size() / 2); }
};

// The program text of one element: ROW(dy, w) for each row.
std::string rows_text(const Segments& rows) {
  std::string text;
  const int r = int(rows.size() / 2);
  for (int dy = -r; dy <= r; ++dy)
    text += "ROW(" + std::to_string(dy) + "," + std::to_string(rows[size_t(dy + r)]) + ")";
  return text;
}

// Outputs a work-item of the passes read from global memory: the tuning's vector (GPUs 4, CPUs 16)
// where it has 4 or more, else one. The variant does not change them: it chooses between the
// correlation's kernels (the window), and morphology has no staged pass of its own.
int pass_vector(const Device& device) {
  const double width = device.knob_number("vector_width", 1);
  return width >= 4 ? int(width) : 1;
}

// With doubling windows, the vectors of morph_rect_vector's row: its span of vw + 2 rx inputs
// (morphology.cl's SPAN_V), and the vectors past it that its shifts may read (SPARE_V).
struct RowVectors {
  int span = 0, spare = 0;
};
RowVectors row_vectors(const Pass& p) {
  if (!p.doubling) return {};
  const int vw = p.vector, k = 2 * p.rx() + 1;
  return {(vw + k - 1 + vw - 1) / vw, k / vw + 2};
}

// The bytes a work-item of morph_rect_vector keeps: its rows' extrema (then suffixes), 2 ry + 1
// vectors, and with doubling windows its row's vectors.
size_t rect_vector_held(const Pass& p) {
  const RowVectors row = row_vectors(p);
  return size_t(2 * p.ry() + 1 + row.span + row.spare) * size_t(p.vector) * sizeof(float);
}

class Morphology : public Filter {
 public:
  Morphology(Device& device, std::vector<Pass> passes, int temps, Border border, std::string what,
             const std::string& method, bool rect_walk)
      : passes_(std::move(passes)),
        temps_(temps),
        border_(border),
        what_(std::move(what)),
        vector_(pass_vector(device)),
        min_groups_(
            clf_plugins::min_groups(device, device.knob_number("morphology.min_groups", 8))) {
    for (Pass& p : passes_) {
      // method=auto: lines on GPUs from 9x9 (rects the walk does not take, and passes after the
      // first), direct reads elsewhere.
      const bool lines = method == "line" || (method == "auto" && device.info().is_gpu &&
                                              std::max(p.rx(), p.ry()) >= gpu_line_from_radius);
      if (!lines) p.line = 0;
      // GPUs take vectors for small elements only: on the H200 they make the 3x3 faster and the
      // 31x31 rect and the 15x15 ellipse slower.
      p.vector = device.info().is_gpu && p.taps() > gpu_vector_max_taps ? 1 : vector_;
      halo_.x = std::max(halo_.x, p.ext_x + p.rx());
      halo_.y = std::max(halo_.y, p.ext_y + p.ry());
      windows_.push_back(p.window ? window(device, p) : nullptr);
      if (p.window) {
        kernels_.emplace_back();
        widths_.emplace_back();
        continue;
      }
      p.walk = p.rect && rect_walk;
      if (p.line || p.walk) p.vector = 1;
      // morph_rect_vector's rows by doubling windows (CPUs).
      p.doubling = p.rect && p.vector > 1 &&
                   p.rx() >= device.knob_number("morphology.row_doubling_min_radius",
                                                row_doubling_min_radius);
      if (p.walk) {
        walk_blocks_ = int(std::clamp(device.knob_number("morphology.walk_blocks", 8), 1.0, 64.0));
        walk_group_ = walk_group(device, p, false);
        walk_columns_ =
            std::max(p.rx(), p.ry()) >=
            device.knob_number("morphology.walk_columns_min_radius", walk_reach(device) + 1);
        // Columns first, a group must reach past its windows' 2 rx columns by 4 outputs.
        if (walk_columns_) {
          const size_t group = walk_group(device, p, true);
          walk_columns_ = group >= 2 * size_t(p.rx()) + 4;
          if (walk_columns_) walk_group_ = group;
        }
      }
      std::string line = p.line ? " -D LINE=" + std::to_string(p.line) +
                                      " -D LR=" + std::to_string(p.line == 1 ? p.ry() : p.rx())
                                : "";
      if (p.line == 1) {  // walking down the columns where a group's block fits local memory
        const size_t k = size_t(2 * p.ry() + 1);
        const double rows = device.knob_number("morphology.line_walk_rows", line_walk_rows);
        p.column_group = column_walk_group(device, k);
        if (rows > 0 && p.column_group > 0)
          p.line_walk = std::max(1, int(std::ceil(std::min(rows, 65536.0) / double(k))));
        if (p.line_walk) line += " -D LINE_WALK -D LINE_GROUP=" + std::to_string(p.column_group);
      }
      if (p.line == 2) {
        const RowLine row = row_line(device, p.rx());
        row_tile_ = row.tile;
        line_group_ = row.group;
        line += row.options;
      }
      const RowVectors row_v = row_vectors(p);
      const std::string options =
          line + " -D MAX=" + std::string(p.max ? "1" : "0") + " -D RX=" + std::to_string(p.rx()) +
          " -D RY=" + std::to_string(p.ry()) +
          (p.vector > 1 ? " -D VW=" + std::to_string(p.vector) : "") +
          (p.rect ? " -D RECT_RUN=" + std::to_string(rect_run) : "") +
          (p.doubling ? " -D ROW_DOUBLING -D SPAN_V=" + std::to_string(row_v.span) +
                            " -D SPARE_V=" + std::to_string(row_v.spare)
                      : "") +
          (p.walk ? walk_options(device, p) : "");
      const std::string source =
          (p.rows.size() <= literal_max_rows ? "#define MORPH_ROWS " + rows_text(p.rows) + "\n"
                                             : std::string()) +
          morphology_morphology_cl;
      widths_.push_back(
          device.upload(p.rows.data(), p.rows.size() * sizeof(int), "morphology element"));
      kernels_.push_back(device.kernel(
          device.build("morphology.cl", source, options, Helpers::border | Helpers::stage),
          p.line                   ? "morph_line"
          : p.walk                 ? walk_kernel()
          : p.rect && p.vector > 1 ? "morph_rect_vector"
          : p.vector > 1           ? "morph_pass_vector"
                                   : "morph_pass"));
    }
  }
  Halo halo() const override { return halo_; }
  Border border() const override { return border_; }
  int temp_planes() const override { return temps_; }
  void enqueue(Stage& stage) override {
    auto plane = [&](int index, bool is_output) -> const Plane& {
      return index >= 0 ? stage.temp(index) : is_output ? stage.output() : stage.input();
    };
    for (size_t i = 0; i < passes_.size(); ++i) {
      const Pass& p = passes_[i];
      if (p.window) {
        windows_[i]->enqueue(stage, stage.input(), stage.output());
        continue;
      }
      const int w = stage.width() + 2 * p.ext_x, h = stage.rows() + 2 * p.ext_y;
      KernelArgs args(kernels_[i]);
      args << plane(p.src, false) << plane(p.dst, true) << -p.ext_x << -p.ext_y << w << h
           << stage.width() << stage.first_row() << stage.image_rows() << int(border_.mode)
           << border_.value << int(p.src >= 0) << plane(p.other, false) << p.combine
           << widths_[i].get();
      const size_t c = size_t(stage.channels());
      if (p.line) {  // LK outputs a work-item along the line
        const size_t k = size_t(p.line == 1 ? 2 * p.ry() + 1 : 2 * p.rx() + 1);
        if (p.line_walk) {  // groups of 64 or 32 columns walking down segments of blocks of k rows
          const size_t group = p.column_group;
          const size_t groups = (size_t(w) + group - 1) / group;
          stage.launch(kernels_[i],
                       cl::NDRange(groups * group, line_segments(p, size_t(h), groups * c), c),
                       cl::NDRange(group, 1, 1), "morph_line");
        } else if (p.line == 1)
          stage.launch(kernels_[i],
                       cl::NDRange((size_t(w) + 63) / 64 * 64, (size_t(h) + k - 1) / k, c),
                       cl::NDRange(64, 1, 1), "morph_line");
        else if (row_tile_)  // a group a tile of row_tile_ outputs
          stage.launch(
              kernels_[i],
              cl::NDRange((size_t(w) + row_tile_ - 1) / row_tile_ * line_group_, size_t(h), c),
              cl::NDRange(line_group_, 1, 1), "morph_line");
        else  // groups of line_group work-items, line_group x k outputs each
          stage.launch(
              kernels_[i],
              cl::NDRange((size_t(w) + k * line_group_ - 1) / (k * line_group_) * line_group_,
                          size_t(h), c),
              cl::NDRange(line_group_, 1, 1), "morph_line");
        continue;
      }
      if (p.walk) {  // groups of walk_group_ columns walking down blocks of 2 ry + 1 rows
        // Columns first, a group's outputs are its columns less the 2 rx its windows reach past
        // them, in whole float4s.
        const size_t out = walk_columns_ ? (walk_group_ - 2 * size_t(p.rx())) / 4 * 4 : walk_group_;
        const size_t across = (size_t(w) + out - 1) / out;
        const size_t blocks = walk_blocks(p, size_t(h), across * c);
        const size_t rows = blocks * size_t(2 * p.ry() + 1);
        args << int(blocks);
        stage.launch(kernels_[i],
                     cl::NDRange(across * walk_group_, (size_t(h) + rows - 1) / rows, c),
                     cl::NDRange(walk_group_, 1, 1), walk_kernel());
        continue;
      }
      const size_t items = (size_t(w) + size_t(p.vector) - 1) / size_t(p.vector);
      if (p.rect && p.vector > 1) {  // rect_run blocks of 2 ry + 1 rows a work-item
        const size_t block = size_t(rect_run) * size_t(2 * p.ry() + 1);
        stage.launch_items(kernels_[i], cl::NDRange(items, (size_t(h) + block - 1) / block, c),
                           "morph_rect_vector", rect_vector_held(p));
        continue;
      }
      stage.launch(kernels_[i], cl::NDRange((items + 63) / 64 * 64, size_t(h), c),
                   cl::NDRange(64, 1, 1), "morph_pass");
    }
  }
  std::string describe() const override {
    const Pass& p = passes_[0];
    return what_ + ", " + std::to_string(passes_.size()) + " pass" +
           (passes_.size() == 1 ? "" : "es") + ", " +
           (p.window ? "the element in one window, " + windows_[0]->describe()
            : p.line ? std::string("lines at constant cost") +
                           (std::any_of(passes_.begin(), passes_.end(),
                                        [](const Pass& q) { return q.line_walk > 0; })
                                ? ", the columns walked down"
                                : "") +
                           (row_tile_ ? ", the rows in tiles of " + std::to_string(row_tile_) : "")
            : p.walk ? "groups of " + std::to_string(walk_group_) +
                           " columns walking down them (van Herk)" +
                           (walk_columns_ ? ", columns first" : "")
            : p.rect && p.vector > 1
                ? "van Herk down the columns, x" + std::to_string(p.vector) +
                      (p.doubling ? ", rows by doubling windows" : "")
                : "direct" + (p.vector > 1 ? " x" + std::to_string(p.vector) : ""));
  }

 private:
  std::vector<Pass> passes_;
  int temps_;
  Border border_;
  std::string what_;
  int vector_;
  // Groups a walking column line or rect walk keeps in flight at least: morphology.min_groups (8)
  // a compute unit.
  size_t min_groups_ = 8;
  size_t line_group_ = 64;     // work-items a group of the row line
  size_t row_tile_ = 0;        // its outputs a group, scanned in chunks (0: LK a work-item)
  size_t walk_group_ = 128;    // work-items a group of morph_rect_walk
  int walk_blocks_ = 8;        // blocks of 2 r + 1 rows a group of it walks down
  bool walk_columns_ = false;  // the walk columns first (morph_rect_walk_columns)

  // The segments a walking column line's h rows are shared out in: p.line_walk blocks each, but
  // enough of them for min_groups_ groups, or one block each, of a strip's few rows.
  size_t line_segments(const Pass& p, size_t h, size_t groups) const {
    const size_t k = size_t(2 * p.ry() + 1), blocks = (h + k - 1) / k;
    const size_t wanted = (blocks + size_t(p.line_walk) - 1) / size_t(p.line_walk);
    return std::min(blocks, std::max(wanted, (min_groups_ + groups - 1) / groups));
  }
  // The blocks a group of the rect walk goes down: walk_blocks_, fewer where a strip's few rows
  // would leave fewer than min_groups_ groups (each group's first batch, a block's top, is read
  // for no output of its own: fewer blocks a group read more rows twice).
  size_t walk_blocks(const Pass& p, size_t h, size_t groups) const {
    const size_t k = size_t(2 * p.ry() + 1);
    return clf_plugins::units_a_group((h + k - 1) / k, groups, size_t(walk_blocks_), min_groups_);
  }
  const char* walk_kernel() const {
    return walk_columns_ ? "morph_rect_walk_columns" : "morph_rect_walk";
  }

  // morph_rect_walk's defines: the group, and the next batch's loads issued early up to the
  // tuning's morphology.walk_prefetch_max_radius.
  std::string walk_options(const Device& device, const Pass& p) const {
    const bool prefetch =
        std::max(p.rx(), p.ry()) <= device.knob_number("morphology.walk_prefetch_max_radius", 8);
    return " -D WALK -D WG=" + std::to_string(walk_group_) + (prefetch ? " -D WALK_PREFETCH" : "");
  }
  // The widest group, morphology.walk_group columns at most (a power of 2), whose __local arrays
  // fit local memory: the staged rows and their extrema, or columns first, two batches of column
  // extrema.
  static size_t walk_group(const Device& device, const Pass& p, bool columns) {
    const size_t k = size_t(2 * p.ry() + 1);
    const double most = std::clamp(device.knob_number("morphology.walk_group", 128), 4.0, 1024.0);
    size_t group = 4;
    while (double(group * 2) <= most) group *= 2;
    auto floats = [&](size_t g) {
      return columns ? 2 * k * g : k * ((g + 2 * size_t(p.rx()) + 3) / 4 * 4 + g);
    };
    while (group > 4 && floats(group) * sizeof(float) > device.info().local_mem_bytes - 1024)
      group /= 2;
    return group;
  }
  Halo halo_;
  std::vector<cl::Kernel> kernels_;
  std::vector<DeviceBuffer> widths_;  // each pass's half-widths by row (morphology.cl's widths)
  std::vector<std::unique_ptr<Correlation>> windows_;  // the passes on the correlation's kernels

  // The element as a window of 1s (taps of 0 left out), its max or min on the correlation's
  // kernels.
  static std::unique_ptr<Correlation> window(Device& device, const Pass& p) {
    const int rx = p.rx(), ry = p.ry(), kw = 2 * rx + 1;
    std::vector<float> taps(size_t(kw) * size_t(2 * ry + 1), 0.f);
    for (int dy = -ry; dy <= ry; ++dy)
      for (int dx = -p.rows[size_t(dy + ry)]; dx <= p.rows[size_t(dy + ry)]; ++dx)
        taps[size_t(dy + ry) * size_t(kw) + size_t(dx + rx)] = 1.f;
    return std::make_unique<Correlation>(device, rx, ry, taps, 0.f, "morph_window",
                                         p.max ? WindowReduce::max : WindowReduce::min);
  }
};

// Builds the passes of an operation: chains of erodes (min) and dilates (max), each element one
// pass or, for a separable rect, two; temp planes handed out as they free up.
class Planner {
 public:
  // fuse_rect: a separable rect read from the input runs as one pass (morph_rect_vector).
  Planner(const std::string& shape, int r, int iterations, bool fuse_rect) {
    // OpenCV folds a rect's iterations into one larger rect; other shapes repeat.
    if (shape == "rect") {
      r *= iterations;
      iterations = 1;
    }
    iterations_ = iterations;
    if (shape == "rect" && r >= separable_from_radius) {
      elements_ = {Segments{r}, Segments(size_t(2 * r + 1), 0)};
      if (r >= line_from_radius) lines_ = {2, 1};
      if (fuse_rect) whole_ = Segments(size_t(2 * r + 1), r);
    } else {
      elements_ = {element(shape, r)};
    }
  }
  // `count` erodes (max = false) or dilates from `src`; returns the plane the last one wrote.
  int chain(bool max, int src, bool last_to_output) {
    const bool fused = src < 0 && !whole_.empty();  // rects fold their iterations: one element
    const size_t elements = fused ? 1 : elements_.size();
    for (int it = 0; it < iterations_; ++it)
      for (size_t e = 0; e < elements; ++e) {
        Pass p;
        p.max = max;
        p.rows = fused ? whole_ : elements_[e];
        p.rect = fused;
        p.line = fused || lines_.empty() ? 0 : lines_[e];
        p.src = src;
        const bool final = last_to_output && it + 1 == iterations_ && e + 1 == elements;
        p.dst = final ? -1 : take();
        if (src >= 0) release(src);
        src = p.dst;
        passes_.push_back(p);
      }
    return src;
  }
  void keep(int temp) { kept_.push_back(temp); }
  Pass& last() { return passes_.back(); }
  // Each pass computes past the strip as far as the passes after it reach; the chains of a
  // gradient end where they are combined, so its first chain needs no more than its second.
  std::vector<Pass> finish(int first_chain_end) {
    int ex = 0, ey = 0;
    for (size_t i = passes_.size(); i-- > 0;) {
      if (int(i) == first_chain_end) ex = ey = 0;
      passes_[i].ext_x = ex;
      passes_[i].ext_y = ey;
      ex += passes_[i].rx();
      ey += passes_[i].ry();
    }
    return passes_;
  }
  int temps() const { return int(busy_.size()); }
  int passes() const { return int(passes_.size()); }

 private:
  int iterations_;
  std::vector<Segments> elements_;
  Segments whole_;          // the rect as one element, where fused
  std::vector<int> lines_;  // per element: Pass::line
  std::vector<Pass> passes_;
  std::vector<bool> busy_;
  std::vector<int> kept_;
  int take() {
    for (size_t t = 0; t < busy_.size(); ++t)
      if (!busy_[t]) return busy_[t] = true, int(t);
    busy_.push_back(true);
    return int(busy_.size() - 1);
  }
  void release(int temp) {
    if (std::find(kept_.begin(), kept_.end(), temp) == kept_.end()) busy_[size_t(temp)] = false;
  }
};

class MorphologyFactory : public FilterFactory {
 public:
  std::string name() const override { return "morphology"; }
  std::string summary() const override {
    return "erode, dilate, open, close, gradient, tophat, blackhat (cv2.morphologyEx) with rect, "
           "ellipse or cross elements";
  }
  std::vector<ParamSpec> params() const override {
    std::vector<ParamSpec> specs{
        ParamSpec::one_of("op",
                          {"erode", "dilate", "open", "close", "gradient", "tophat", "blackhat"},
                          "erode = min, dilate = max over the element; open = dilate(erode); "
                          "close = erode(dilate); gradient = dilate - erode; tophat = in - open; "
                          "blackhat = close - in")
            .fallback("erode"),
        ParamSpec::one_of("shape", {"rect", "ellipse", "cross"},
                          "the structuring element, as cv2.getStructuringElement makes it")
            .fallback("rect")};
    for (auto& spec : clf_plugins::window_params(3, max_radius)) specs.push_back(spec);
    specs.push_back(
        ParamSpec::one_of("method", {"auto", "direct", "line", "window"},
                          "a rect from 5x5 on runs as a row pass and a column pass. direct: 2 "
                          "radius + 1 reads a pixel each; line (from 7x7): each at a constant "
                          "cost per pixel whatever its length (van Herk / Gil-Werman); window: "
                          "erode and dilate of one element up to 63x63 in one pass on the 2-D "
                          "correlation's kernels, a min or max for the multiply-add; auto: on "
                          "GPUs a rect from 9x9 to 47x47 read from the input in one pass of "
                          "groups walking down the columns, window for other erodes and dilates "
                          "up to 15x15, lines for larger rects and other operations from 9x9, "
                          "else direct (faster on CPUs, in SIMD vectors)")
            .fallback("auto"));
    specs.push_back(ParamSpec::integer("iterations",
                                       "erodes and dilates each applied this many times (a "
                                       "rect's fold into one larger rect, as OpenCV's do)")
                        .fallback("1")
                        .at_least(1)
                        .at_most(64));
    return with_border_params(specs, "ignore", true);
  }
  std::unique_ptr<Filter> create(const Params& p, Device& device) const override {
    const int r = clf_plugins::window_radius(p, name());
    const std::string op = p.get_string("op"), shape = p.get_string("shape");
    const int iterations = p.get_int("iterations");
    if (r * iterations > max_radius)
      throw Error(ErrorKind::usage, "morphology: radius x iterations must be at most " +
                                        std::to_string(max_radius) + " (got " + std::to_string(r) +
                                        " x " + std::to_string(iterations) + ")");
    // CPUs: a rect read from the input in one pass, van Herk down its columns (faster there than
    // the lines on PoCL).
    const std::string method = p.get_string("method");
    // One element read from the input on the correlation's kernels: erode and dilate, a rect's
    // iterations folded into it.
    const int element_radius = shape == "rect" ? r * iterations : r;
    const bool one_element =
        (op == "erode" || op == "dilate") && (shape == "rect" || iterations == 1);
    // morphology.rect_walk (GPUs): a rect from 9x9 read from the input, in one pass of groups
    // walking down the columns (before the window, which reads every tap).
    const bool rect_walk = device.knob_number("morphology.rect_walk", 0) != 0 && method == "auto" &&
                           shape == "rect" && element_radius >= gpu_line_from_radius &&
                           element_radius <= walk_reach(device);
    const bool window =
        one_element &&
        (method == "window" ? element_radius <= window_max_radius
                            : method == "auto" && device.info().is_gpu && !rect_walk &&
                                  element_radius <= window_auto_max_radius);
    if (method == "window" && !window)
      throw Error(ErrorKind::usage,
                  "morphology: method=window takes erode or dilate of one element up to " +
                      std::to_string(2 * window_max_radius + 1) + "x" +
                      std::to_string(2 * window_max_radius + 1) + " (got op=" + op + ", ksize " +
                      std::to_string(2 * r + 1) +
                      (iterations > 1 ? ", iterations " + std::to_string(iterations) : "") + ")");
    // CPUs fold a rect into one pass where it runs on vectors (morph_rect_vector); one output a
    // work-item would read its every tap, so the rect runs as a row and a column pass there.
    Planner plan(shape, r, iterations,
                 window || rect_walk ||
                     (!device.info().is_gpu && method != "line" && pass_vector(device) > 1));
    int first_chain_end = -1;
    if (op == "erode" || op == "dilate") {
      plan.chain(op == "dilate", -1, true);
      if (window) plan.last().window = true, plan.last().rect = false;
    } else if (op == "open" || op == "tophat") {
      plan.chain(true, plan.chain(false, -1, false), true);
      if (op == "tophat") plan.last().combine = 1;  // in - open
    } else if (op == "close" || op == "blackhat") {
      plan.chain(false, plan.chain(true, -1, false), true);
      if (op == "blackhat") plan.last().combine = 2;  // close - in
    } else {  // gradient: dilate into a temp kept, then erode, combined
      const int dilated = plan.chain(true, -1, false);
      plan.keep(dilated);
      first_chain_end = plan.passes() - 1;
      plan.chain(false, -1, true);
      plan.last().combine = 1;
      plan.last().other = dilated;
    }
    const int k = 2 * r + 1;
    const std::string what = "morphology " + op + " " + shape + " " + std::to_string(k) + "x" +
                             std::to_string(k) +
                             (iterations > 1 ? " x" + std::to_string(iterations) : "");
    return std::make_unique<Morphology>(device, plan.finish(first_chain_end), plan.temps(),
                                        border_from_params(p), what, method, rect_walk);
  }
};

PluginManifest manifest() { return {{std::make_shared<MorphologyFactory>()}}; }
}  // namespace

CLF_PLUGIN(manifest)

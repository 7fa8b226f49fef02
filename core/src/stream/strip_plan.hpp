// The strip plan: pure geometry of a streamed run, no device. For a chain of n stages (filters,
// 0-based) over an image cut into strips of output rows, it says which rows each stage computes,
// which rows cross the bus, how large every buffer must be, and which strip heights are possible.
//
// Rows: output strip [y0, y1) of a chain whose stages have vertical halos hy[0..n-1] needs, at the
// input of stage s, the rows [y0 - below(s), y1 + below(s)) clipped to the image, where below(s) =
// hy[s] + ... + hy[n-1] (stage_input_rows). Stage s computes stage_input_rows(s + 1) (for the last
// stage: the strip) from them, and its input also holds hy[s] rows either side, filled by the
// border rule from rows the previous stage computed in the same strip, exactly as a whole-image
// run would: streamed output is bit-identical to it.
//
// Cyclic plans (every stage with a vertical halo wraps): rows are not clipped to the image. Row r
// stands for row r mod height, so a stage's input never has a row outside what it was given and
// no border rows are filled: stage s's row r equals the whole-image run's row r mod height. The
// rows above and below the image come from the source's first and last rows (see cyclic_halo).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "clf/filter.hpp"
#include "clf/rows.hpp"
#include "util.hpp"

namespace clf::detail {

constexpr uint64_t max_buffer_floats = (uint64_t(1) << 31) - 1;  // kernels index with int

struct Range {
  int begin = 0, end = 0;
  int size() const { return end - begin; }
};

// What the plan needs of a filter.
struct StageShape {
  int hx = 0, hy = 0, temps = 0;
  Border border;
  int rows_multiple = 0;  // Filter::strip_rows_multiple
};
std::vector<StageShape> stage_shapes(const std::vector<Filter*>& chain);

// Rows above and below the image a cyclic plan reads (the chain's vertical halo), or 0 when the
// chain cannot run cyclically: some stage with a vertical halo has another border, no stage has
// one, or the image is shorter than twice the halo (then one strip holds it all anyway).
int cyclic_halo(const std::vector<StageShape>& stages, int height);

class StripPlan {
 public:
  // `in_place`: the host images are the upload and download buffers (none allocated).
  // `cyclic`: rows wrap (see above); only where cyclic_halo(stages, height) > 0.
  StripPlan(const std::vector<StageShape>& stages, const ImageShape& image, int strip_rows,
            bool in_place, bool cyclic = false);

  int stages() const { return int(stages_.size()); }
  const StageShape& stage(int s) const { return stages_[size_t(s)]; }
  const ImageShape& image() const { return image_; }
  int width() const { return image_.width; }
  int height() const { return image_.height; }
  int channels() const { return image_.channels; }
  int strip_rows() const { return strip_rows_; }
  int strips() const { return strips_; }
  bool in_place() const { return in_place_; }
  bool cyclic() const { return cyclic_; }

  Range strip(int i) const { return {i * strip_rows_, std::min(height(), (i + 1) * strip_rows_)}; }
  // Rows at the input of stage s (s = stages(): the strip itself); s = 0 is what is uploaded.
  // Cyclic plans: may reach below 0 and past height().
  Range stage_input_rows(int s, Range strip) const;
  Range upload_rows(Range strip) const { return stage_input_rows(0, strip); }

  // Float planes at the input of stage s (s = stages(): the final planes the pack reads): row
  // pitch and rows of room. They are laid out around the rows stage s computes
  // (stage_input_rows(s + 1)), with the stage's halo above and below.
  int pitch(int s) const { return pitch_[size_t(s)]; }
  int capacity_rows(int s) const { return capacity_rows_[size_t(s)]; }
  size_t plane_stride(int s) const { return size_t(pitch(s)) * size_t(capacity_rows(s)); }
  int temp_pitch() const { return temp_pitch_; }
  int temp_margin() const { return temp_margin_; }  // columns left of column 0 in a temp plane

  // Sizes of one slot's buffers, and of the slot.
  size_t work_floats() const { return work_floats_; }  // each of the two ping-pong buffers
  size_t temp_floats() const { return temp_floats_; }  // each temp plane set
  int max_temps() const { return max_temps_; }
  size_t upload_bytes() const { return upload_bytes_; }
  size_t download_bytes() const { return download_bytes_; }
  uint64_t slot_bytes() const;
  bool indexable() const;  // every buffer within the 2^31 floats kernels can index

  // Every out-of-image row a stage's border needs comes from rows the previous stage computed in
  // the same strip (always, for cyclic plans; else false for wrap unless one strip is the whole
  // image).
  bool borders_reachable() const;

  // Per strip, the rows it uploads from the host: the rest of its upload rows (those it shares
  // with the previous strip) are read on the device from that strip's upload buffer, where they
  // are at least `min_shared_bytes` and the previous strip uploaded them itself (needs 2 slots).
  std::vector<Range> fresh_rows(int slots, uint64_t min_shared_bytes) const;

 private:
  std::vector<StageShape> stages_;
  ImageShape image_;
  int strip_rows_ = 0, strips_ = 0;
  bool in_place_ = false, cyclic_ = false;
  std::vector<int> below_;  // below_[s] = hy[s] + ... + hy[n-1]; below_[n] = 0
  std::vector<int> pitch_, capacity_rows_;
  int temp_pitch_ = 0, temp_margin_ = 0, max_temps_ = 0;
  size_t work_floats_ = 0, temp_floats_ = 0, upload_bytes_ = 0, download_bytes_ = 0;
};

// The strip height and slot count a run uses: `requested` rows when given (> 0), else strips of
// 4 MiB (GPUs: of pixels as transferred, at least 2 strips; CPUs: of the float planes, at least 4),
// the largest that `fits`, with fewer slots when not even one row fits; then doubled until every
// border is reachable. `fits(plan, slots)` says whether a plan's slots fit the device.
struct StripChoice {
  int rows = 0, slots = 0;
};
StripChoice choose_strips(const std::vector<StageShape>& stages, const ImageShape& image,
                          bool in_place, bool cyclic, bool gpu, int requested, int slots,
                          const std::function<bool(const StripPlan&, int slots)>& fits);

}  // namespace clf::detail

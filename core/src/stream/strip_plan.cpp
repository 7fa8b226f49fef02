// The strip plan (see strip_plan.hpp): row ranges, buffer sizes, shared rows, strip height.
#include "stream/strip_plan.hpp"

#include <algorithm>

namespace clf::detail {
namespace {
constexpr int pitch_align = 32;  // floats: rows start on 128-byte boundaries
}  // namespace

std::vector<StageShape> stage_shapes(const std::vector<Filter*>& chain) {
  std::vector<StageShape> stages;
  for (Filter* f : chain) {
    const Halo halo = f->halo();
    stages.push_back({halo.x, halo.y, f->temp_planes(), f->border(), f->strip_rows_multiple()});
  }
  return stages;
}

int cyclic_halo(const std::vector<StageShape>& stages, int height) {
  int halo = 0;
  for (const StageShape& s : stages) {
    if (s.hy == 0) continue;
    if (s.border.mode != BorderMode::wrap) return 0;
    halo += s.hy;
  }
  return 2 * halo <= height ? halo : 0;
}

StripPlan::StripPlan(const std::vector<StageShape>& stages, const ImageShape& image, int strip_rows,
                     bool in_place, bool cyclic)
    : stages_(stages),
      image_(image),
      in_place_(in_place),
      cyclic_(cyclic && cyclic_halo(stages, image.height) > 0) {
  const int n = this->stages();
  strip_rows_ = std::max(1, std::min(strip_rows, height()));
  strips_ = (height() + strip_rows_ - 1) / strip_rows_;
  below_.assign(size_t(n) + 1, 0);
  for (int s = n - 1; s >= 0; --s)
    below_[size_t(s)] = below_[size_t(s) + 1] + stages_[size_t(s)].hy;
  auto most_rows = [&](int s) {
    const int64_t rows = int64_t(strip_rows_) + 2 * below_[size_t(s)];
    return int(cyclic_ ? rows : std::min<int64_t>(height(), rows));
  };
  // Temp planes keep the widest filter's horizontal margin too (multi-pass filters compute over
  // the halo columns, as the multirate blur does).
  int temp_hx = 0;
  for (const auto& stage : stages_)
    if (stage.temps > 0) temp_hx = std::max(temp_hx, stage.hx);
  temp_margin_ = plane_margin(temp_hx);
  temp_pitch_ = round_up(round_up(width(), 4) + 2 * temp_margin_, pitch_align);
  for (int s = 0; s <= n; ++s) {  // s = n: the final planes
    const int hx = s < n ? stages_[size_t(s)].hx : 0, hy = s < n ? stages_[size_t(s)].hy : 0;
    pitch_.push_back(round_up(round_up(width(), 4) + 2 * plane_margin(hx), pitch_align));
    capacity_rows_.push_back(most_rows(std::min(s + 1, n)) +
                             2 * hy);  // the rows stage s computes, +- its halo
    work_floats_ = std::max(
        work_floats_, size_t(channels()) * size_t(pitch_.back()) * size_t(capacity_rows_.back()));
    if (s < n && stages_[size_t(s)].temps > 0) {
      temp_floats_ = std::max(
          temp_floats_, size_t(channels()) * size_t(temp_pitch_) * size_t(capacity_rows_.back()));
      max_temps_ = std::max(max_temps_, stages_[size_t(s)].temps);
    }
  }
  upload_bytes_ = image_.row_bytes() * size_t(most_rows(0));
  download_bytes_ = image_.row_bytes() * size_t(strip_rows_);
}

Range StripPlan::stage_input_rows(int s, Range strip) const {
  const int b = below_[size_t(s)];
  if (cyclic_) return {strip.begin - b, strip.end + b};
  return {std::max(0, strip.begin - b), std::min(height(), strip.end + b)};
}

uint64_t StripPlan::slot_bytes() const {
  return (in_place_ ? 0 : upload_bytes_ + download_bytes_) +
         sizeof(float) * (2 * work_floats_ + size_t(max_temps_) * temp_floats_);
}

bool StripPlan::indexable() const {
  return work_floats_ <= max_buffer_floats && temp_floats_ <= max_buffer_floats &&
         upload_bytes_ / pixel_type_size(image_.type) <= max_buffer_floats;
}

namespace {

// The lowest and highest image row that rows [a, b) outside the image take their pixels from, in
// O(1): a mirror's extremes lie at the range's ends or at its folds (the rows that map to 0 or
// len - 1); a range a period long reaches every row. For wrap, a range across the image's end is
// taken to reach every row (a superset: the plan then only grows its strips).
Range mapped_span(int a, int b, int len, BorderMode mode) {
  const int first = border_interpolate(a, len, mode), last = border_interpolate(b - 1, len, mode);
  Range span{std::min(first, last), std::max(first, last)};
  const int64_t period = border_period(len, mode);
  if (period == 0) return span;  // replicate: the ends are the extremes
  if (int64_t(b) - a >= period) return {0, len - 1};
  // True when some p in [from, b) is congruent to `residue` modulo the period.
  auto holds = [&](int64_t residue, int64_t from) {
    return from + (((residue - from) % period) + period) % period < b;
  };
  if (mode == BorderMode::wrap) return holds(0, int64_t(a) + 1) ? Range{0, len - 1} : span;
  const bool reflect = mode == BorderMode::reflect;
  if (holds(0, a) || (reflect && holds(period - 1, a))) span.begin = 0;
  if (holds(len - 1, a) || (reflect && holds(len, a))) span.end = len - 1;
  return span;
}

}  // namespace

// Each stage's rows past the image's edges must map into the rows that stage has. Costs O(strips x
// stages), whatever the halo.
bool StripPlan::borders_reachable() const {
  if (cyclic_) return true;
  for (int i = 0; i < strips_; ++i) {
    const Range strip = this->strip(i);
    for (int s = 0; s < stages(); ++s) {
      const Border border = stages_[size_t(s)].border;
      if (border_fills(border.mode)) continue;
      const Range out = stage_input_rows(s + 1, strip), in = stage_input_rows(s, strip);
      const int h = stages_[size_t(s)].hy;
      const Range outside[] = {{out.begin - h, std::min(0, out.end + h)},
                               {std::max(height(), out.begin - h), out.end + h}};
      for (const Range& rows : outside) {
        if (rows.begin >= rows.end) continue;
        const Range span = mapped_span(rows.begin, rows.end, height(), border.mode);
        if (span.begin < in.begin || span.end >= in.end) return false;
      }
    }
  }
  return true;
}

std::vector<Range> StripPlan::fresh_rows(int slots, uint64_t min_shared_bytes) const {
  // Strip i may take its first rows from strip i-1's upload buffer only where strip i-1 uploaded
  // them itself (a strip shorter than twice the halo got some of its own from strip i-2).
  std::vector<Range> fresh;
  for (int i = 0; i < strips_; ++i) {
    const Range up = upload_rows(strip(i));
    Range mine = up;
    if (i > 0 && !in_place_ && slots >= 2) {
      const Range prev = upload_rows(strip(i - 1));
      const int begin = std::min(up.end, std::max(up.begin, prev.end));
      const uint64_t shared_bytes = uint64_t(begin - up.begin) * image_.row_bytes();
      if (begin > up.begin && up.begin >= fresh.back().begin && shared_bytes >= min_shared_bytes)
        mine.begin = begin;
    }
    fresh.push_back(mine);
  }
  return fresh;
}

StripChoice choose_strips(const std::vector<StageShape>& stages, const ImageShape& image,
                          bool in_place, bool cyclic, bool gpu, int requested, int slots,
                          const std::function<bool(const StripPlan&, int slots)>& fits) {
  const int height = image.height;
  int rows = requested;
  if (rows == 0) {
    // Strips of a few MiB (device memory stays flat as images grow), capped by the budget. GPUs:
    // 4 MiB of pixels as transferred, at least 2 strips (a strip costs ~6 commands of host time;
    // the last strip's transfer and compute overlap nothing). CPUs: 4 MiB of the float planes the
    // kernels work on, at least 4 strips, so that a strip's planes stay in the caches between
    // passes (both measured: the H100, PoCL here). GPUs in place (device images): nothing to
    // overlap, so strips of 256 MiB of float planes, one where that is the image: every strip
    // costs launches and computes its halo rows again.
    const bool resident = gpu && in_place;
    const uint64_t row_bytes = gpu && !resident
                                   ? image.row_bytes()
                                   : uint64_t(image.width) * image.channels * sizeof(float);
    const int by_bytes =
        int(std::max<uint64_t>(1, (uint64_t(resident ? 256 : 4) << 20) / row_bytes));
    const int min_strips = std::min(resident ? 1 : gpu ? 2 : 4, height);
    const int strips = std::max((height + by_bytes - 1) / by_bytes, min_strips);
    // At least 4 times the chain's halo rows on GPUs, twice on CPUs: each strip computes its halo
    // rows again (a row pass, the multirate blur's coarse rows), so a strip as short as its halo
    // would double the work. On CPUs taller strips fall out of the caches and add their memory
    // without making a 16384-wide TIFF any faster.
    int halo = 0;
    for (const auto& stage : stages) halo += stage.hy;
    const int target =
        std::max((height + strips - 1) / strips,
                 std::min((gpu ? 4 : 2) * halo, (height + min_strips - 1) / min_strips));
    // The largest height <= target that fits (slot bytes grow with it), a multiple of `step`;
    // when not even one row fits with this many slots, fewer slots in flight beat failing.
    auto largest = [&](int step, int most) {
      int best = 0;
      for (int lo = 1, hi = most / step; lo <= hi;) {
        const int mid = lo + (hi - lo) / 2;
        if (fits(StripPlan(stages, image, mid * step, in_place, cyclic),
                 std::min(slots, (height + mid * step - 1) / (mid * step)))) {
          best = mid * step;
          lo = mid + 1;
        } else {
          hi = mid - 1;
        }
      }
      return best;
    };
    // The last filter's rows are the strip's: a multiple of its strip_rows_multiple keeps its
    // whole-image result, where one fits.
    const int multiple = stages.empty() ? 0 : stages.back().rows_multiple;
    int best = 0;
    for (;;) {
      if (multiple > 0 && multiple < height)
        best = largest(multiple, std::max(multiple, target / multiple * multiple));
      if (best == 0) best = largest(1, target);
      if (best > 0 || slots == 1) break;
      --slots;
    }
    rows = std::max(best, 1);
  }
  rows = std::min(rows, height);
  while (!StripPlan(stages, image, rows, in_place, cyclic).borders_reachable() && rows < height)
    rows = std::min(height, rows * 2);
  return {rows, std::min(slots, (height + rows - 1) / rows)};
}

}  // namespace clf::detail

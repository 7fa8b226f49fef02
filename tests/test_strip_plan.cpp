// The strip plan, without a device: which rows each stage needs and computes, which rows cross the
// bus, buffer sizes, and the strip height a run chooses.
#include <catch2/catch.hpp>

#include "clf/border.hpp"
#include "stream/strip_plan.hpp"

using clf::detail::choose_strips;
using clf::detail::Range;
using clf::detail::StageShape;
using clf::detail::StripPlan;

namespace {
const clf::ImageShape image{100, 50, 3, clf::PixelType::u8};
StageShape stage(int hx, int hy, clf::BorderMode mode = clf::BorderMode::reflect101, int temps = 0) {
  StageShape s;
  s.hx = hx;
  s.hy = hy;
  s.temps = temps;
  s.border.mode = mode;
  return s;
}
bool same(Range a, Range b) { return a.begin == b.begin && a.end == b.end; }
}  // namespace

TEST_CASE("each stage's input rows are the strip grown by the halos of the stages after it, clipped") {
  const StripPlan plan({stage(1, 2), stage(3, 4)}, image, 10, false);
  CHECK(plan.strips() == 5);
  const Range strip = plan.strip(2);  // rows 20..30
  CHECK(same(strip, {20, 30}));
  CHECK(same(plan.stage_input_rows(2, strip), {20, 30}));  // after the last stage: the strip
  CHECK(same(plan.stage_input_rows(1, strip), {16, 34}));  // the last stage needs its halo, 4
  CHECK(same(plan.upload_rows(strip), {14, 36}));          // and the first 2 more
  CHECK(same(plan.upload_rows(plan.strip(0)), {0, 16}));   // clipped at the top
  CHECK(same(plan.upload_rows(plan.strip(4)), {34, 50}));  // and at the bottom
  // Planes: room for the rows a stage computes and its halo; rows of whole float4s and margins.
  CHECK(plan.capacity_rows(0) == 18 + 2 * 2);
  CHECK(plan.capacity_rows(1) == 10 + 2 * 4);
  CHECK(plan.capacity_rows(2) == 10);
  for (int s = 0; s <= 2; ++s) CHECK(plan.pitch(s) % 32 == 0);
  CHECK(plan.pitch(1) >= 100 + 2 * 4);
  CHECK(plan.upload_bytes() == size_t(22) * 300);
  CHECK(plan.download_bytes() == size_t(10) * 300);
}

TEST_CASE("shared rows cross the bus once: fresh rows tile the image when sharing is on") {
  for (int rows : {1, 3, 7, 10, 50})
    for (int slots : {1, 2, 3}) {
      INFO("strip rows " << rows << ", slots " << slots);
      const StripPlan plan({stage(2, 3), stage(1, 1)}, image, rows, false);
      const auto shared = plan.fresh_rows(slots, 0);
      const auto resent = plan.fresh_rows(slots, uint64_t(1) << 40);
      int previous_end = 0;
      for (int i = 0; i < plan.strips(); ++i) {
        const Range up = plan.upload_rows(plan.strip(i));
        CHECK(same(resent[size_t(i)], up));  // below the threshold every strip uploads all its rows
        CHECK(shared[size_t(i)].end == up.end);
        CHECK(shared[size_t(i)].begin >= up.begin);
        if (slots == 1) CHECK(same(shared[size_t(i)], up));  // sharing needs the previous slot
        // Rows a strip does not upload were uploaded by the strip before it.
        if (shared[size_t(i)].begin > up.begin) CHECK(shared[size_t(i)].begin == previous_end);
        previous_end = shared[size_t(i)].end;
      }
    }
}

TEST_CASE("a chain whose vertical borders all wrap plans cyclic rows; mixed with other borders, one strip") {
  using clf::BorderMode;
  const std::vector<StageShape> wraps = {stage(1, 2, BorderMode::wrap), stage(3, 0, BorderMode::reflect),
                                         stage(0, 1, BorderMode::wrap)};
  CHECK(clf::detail::cyclic_halo(wraps, 50) == 3);
  CHECK(clf::detail::cyclic_halo(wraps, 5) == 0);  // shorter than twice the halo: one strip
  CHECK(clf::detail::cyclic_halo({stage(1, 1, BorderMode::wrap), stage(1, 1, BorderMode::reflect)}, 50) == 0);
  CHECK(clf::detail::cyclic_halo({stage(1, 0, BorderMode::wrap)}, 50) == 0);  // nothing to wrap
  const StripPlan plan(wraps, image, 10, false, true);
  REQUIRE(plan.cyclic());
  CHECK(plan.borders_reachable());
  // Rows reach past both ends of the image by the halo below each stage; every strip the same size.
  CHECK(plan.upload_rows(plan.strip(0)).begin == -3);
  CHECK(plan.upload_rows(plan.strip(4)).end == 53);
  CHECK(plan.stage_input_rows(2, plan.strip(4)).end == 51);
  for (int i = 0; i < plan.strips(); ++i) CHECK(plan.upload_rows(plan.strip(i)).size() == 16);
  CHECK(plan.upload_bytes() == 16 * image.row_bytes());
  auto all = [](const StripPlan&, int) { return true; };
  CHECK(choose_strips(wraps, image, false, true, true, 3, 3, all).rows == 3);
  // Not cyclic: not reachable in strips, so one strip.
  CHECK(choose_strips(wraps, image, false, false, true, 3, 3, all).rows == 50);
}

TEST_CASE("a wrap border is reachable only when one strip is the whole image") {
  const StripPlan strips({stage(1, 1, clf::BorderMode::wrap)}, image, 10, false);
  CHECK_FALSE(strips.borders_reachable());
  CHECK(StripPlan({stage(1, 1, clf::BorderMode::wrap)}, image, 50, false).borders_reachable());
  CHECK(StripPlan({stage(1, 1, clf::BorderMode::reflect)}, image, 1, false).borders_reachable());
  CHECK(StripPlan({stage(1, 1, clf::BorderMode::constant)}, image, 1, false).borders_reachable());
  auto all = [](const StripPlan&, int) { return true; };
  CHECK(choose_strips({stage(1, 1, clf::BorderMode::wrap)}, image, false, false, true, 3, 3, all).rows == 50);
}

TEST_CASE("the strip height: the caller's, else 4 MiB per strip, the largest that fits", "[layout]") {
  const clf::ImageShape big{4096, 4096, 1, clf::PixelType::u8};
  auto all = [](const StripPlan&, int) { return true; };
  CHECK(choose_strips({stage(1, 1)}, big, false, false, true, 100, 3, all).rows == 100);
  // GPUs: 4 MiB of u8 pixels = 1024 rows of 4096; CPUs: 4 MiB of float planes = 256 rows.
  CHECK(choose_strips({stage(1, 1)}, big, false, false, true, 0, 3, all).rows == 1024);
  CHECK(choose_strips({stage(1, 1)}, big, false, false, false, 0, 3, all).rows == 256);
  // At least 2 strips on GPUs, 4 on CPUs, for small images too.
  CHECK(choose_strips({stage(1, 1)}, image, false, false, true, 0, 3, all).rows == 25);
  CHECK(choose_strips({stage(1, 1)}, image, false, false, false, 0, 3, all).rows == 13);
  // Device images on GPUs (in place): 256 MiB of float planes, one strip where that is the image.
  CHECK(choose_strips({stage(1, 1)}, big, true, false, true, 0, 3, all).rows == 4096);
  const clf::ImageShape huge{16384, 16384, 1, clf::PixelType::u8};
  CHECK(choose_strips({stage(1, 1)}, huge, true, false, true, 0, 3, all).rows == 4096);
  // A budget: the largest height whose slots fit, then fewer slots rather than none.
  const uint64_t room = 3 * StripPlan({stage(1, 1)}, big, 300, false).slot_bytes();
  auto budget = [&](const StripPlan& p, int slots) { return uint64_t(slots) * p.slot_bytes() <= room; };
  const auto fit = choose_strips({stage(1, 1)}, big, false, false, true, 0, 3, budget);
  CHECK(fit.rows == 300);
  CHECK(fit.slots == 3);
  const uint64_t one_row = StripPlan({stage(1, 1)}, big, 1, false).slot_bytes();
  auto tight = [&](const StripPlan& p, int slots) { return uint64_t(slots) * p.slot_bytes() <= one_row; };
  const auto last = choose_strips({stage(1, 1)}, big, false, false, true, 0, 3, tight);
  CHECK(last.rows == 1);
  CHECK(last.slots == 1);
}

namespace {
// OpenCV's borderInterpolate as its documentation draws it: mirror at the edges until inside.
int mirrored(int p, int len, clf::BorderMode mode) {
  const int delta = mode == clf::BorderMode::reflect101 ? 1 : 0;
  if (len == 1) return 0;
  while (p < 0 || p >= len) p = p < 0 ? -p - 1 + delta : 2 * len - 1 - p - delta;
  return p;
}
// Reachability row by row: every row past the image's edges, every strip and stage.
bool reachable_row_by_row(const StripPlan& plan, const std::vector<StageShape>& stages) {
  for (int i = 0; i < plan.strips(); ++i)
    for (int s = 0; s < int(stages.size()); ++s) {
      const auto mode = stages[size_t(s)].border.mode;
      if (mode == clf::BorderMode::constant) continue;
      const Range out = plan.stage_input_rows(s + 1, plan.strip(i)), in = plan.stage_input_rows(s, plan.strip(i));
      const int h = stages[size_t(s)].hy;
      for (int p = out.begin - h; p < out.end + h; ++p) {
        if (p >= 0 && p < plan.height()) continue;
        const int m = clf::border_interpolate(p, plan.height(), mode);
        if (m < in.begin || m >= in.end) return false;
      }
    }
  return true;
}
}  // namespace

TEST_CASE("border rows map as OpenCV mirrors them, however far outside") {
  for (const auto mode : {clf::BorderMode::reflect, clf::BorderMode::reflect101})
    for (int len : {1, 2, 3, 5, 8})
      for (int p = -40; p < 40 + len; ++p) {
        INFO(clf::border_mode_name(mode) << " len " << len << " p " << p);
        CHECK(clf::border_interpolate(p, len, mode) == mirrored(p, len, mode));
      }
  CHECK(clf::border_interpolate(-1000000007, 3, clf::BorderMode::reflect101) ==
        mirrored(-1000000007 % 4, 3, clf::BorderMode::reflect101));
}

TEST_CASE("whether borders are reachable is decided per strip, as row by row, for any halo") {
  using M = clf::BorderMode;
  for (const M mode : {M::replicate, M::reflect, M::reflect101, M::wrap})
    for (int height : {1, 2, 7, 50})
      for (int hy : {0, 1, 3, 6, 13, 49, 120})
        for (int rows : {1, 2, 3, 5, 16, 50}) {
          const std::vector<StageShape> stages{stage(0, hy, mode), stage(0, 2, M::reflect101)};
          const StripPlan plan(stages, {10, height, 1, clf::PixelType::f32}, rows, false);
          INFO(clf::border_mode_name(mode) << " height " << height << " halo " << hy << " rows " << rows);
          const bool exact = reachable_row_by_row(plan, stages);
          // The planner may only err towards taller strips: for wrap, a superset of the rows.
          if (mode == M::wrap)
            CHECK((!plan.borders_reachable() || exact));
          else
            CHECK(plan.borders_reachable() == exact);
        }
  // A halo of a million rows plans at once (it spun for minutes row by row).
  const std::vector<StageShape> huge{stage(0, 1 << 20, M::reflect101)};
  const clf::ImageShape small{5, 3, 1, clf::PixelType::u8};
  const auto choice = choose_strips(huge, small, false, false, false, 0, 2,
                                    [](const StripPlan&, int) { return true; });
  CHECK(StripPlan(huge, small, choice.rows, false).borders_reachable());
}

// The non-linear filters (median, rank, morphology, bilateral) and the compositions (laplacian,
// unsharp) through the C++ API: every kernel layout the tuning can pick, forced, gives the same
// result; 1-row strips give the whole image's bits; u8 and float images; errors name the filter
// and parameter. Results against OpenCV and scipy on photographs: tests/python/test_nonlinear.py.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <random>
#include <string>

#include "../plugins/common/levels.hpp"
#include "../plugins/common/local_memory.hpp"
#include "../plugins/rank/selection.hpp"
#include "support.hpp"

namespace {

// The largest |a - b| over two images of one shape, in their values.
double largest_difference(const ref::Image& ra, const ref::Image& rb) {
  REQUIRE(ra.values.size() == rb.values.size());
  double largest = 0;
  for (size_t i = 0; i < ra.values.size(); ++i)
    largest = std::max(largest, std::abs(ra.values[i] - rb.values[i]));
  return largest;
}
double largest_difference(const clf::Image& a, const clf::Image& b) {
  REQUIRE(a.width() == b.width());
  REQUIRE(a.height() == b.height());
  REQUIRE(a.channels() == b.channels());
  return largest_difference(test::to_ref(a), test::to_ref(b));
}
// The bilateral's error against its formula: in levels for u8, else relative (to at least 1e-3).
double bilateral_error(const ref::Image& have, const ref::Image& want, bool u8) {
  REQUIRE(have.values.size() == want.values.size());
  double worst = 0;
  for (size_t i = 0; i < want.values.size(); ++i) {
    const double d = std::abs(have.values[i] - want.values[i]);
    worst = std::max(worst, u8 ? d : d / std::max(1e-3, std::abs(want.values[i])));
  }
  return worst;
}

// The integer after `key` in a filter spec ("ksize=" in "morphology:ksize=9,.."), 0 without it.
int number_after(const std::string& spec, const std::string& key) {
  const size_t at = spec.find(key);
  return at == std::string::npos ? 0 : std::stoi(spec.substr(at + key.size()));
}

const char* const exact_specs[] = {
    "median:ksize=3",
    "median:ksize=7,border=reflect101",
    "median:ksize=11",  // u8: the histogram; float: bisection
    "median:ksize=5,method=bisect,border=wrap",
    "rank:ksize=5,percentile=20,border=constant,border_value=7",
    "morphology:op=open,shape=ellipse,ksize=5",
    "morphology:op=gradient,shape=rect,ksize=7,border=reflect",
    "morphology:op=blackhat,shape=cross,ksize=5,iterations=2,border=replicate",
    "morphology:op=close,ksize=3,border=wrap",
    "morphology:op=tophat,ksize=5,border=constant,border_value=100",
    "morphology:op=open,ksize=9,method=line",  // constant-cost rows and columns
    "morphology:op=gradient,ksize=7,iterations=2,method=line,border=reflect101",
    "morphology:op=tophat,ksize=15,method=line,border=constant,border_value=3",
    "morphology:op=close,ksize=11,method=line,border=wrap",
};

// Layouts the tuning can give these kernels: tiled (staged windows), direct one output a
// work-item, direct vectors of 4 (GPUs), 8 and 16 (CPUs).
struct Layout {
  clf::Variant variant;
  int vector_width;
  const char* name;
};
const Layout layouts[] = {{clf::Variant::direct, 1, "direct"},
                          {clf::Variant::direct, 4, "direct x4"},
                          {clf::Variant::direct, 8, "direct x8"},
                          {clf::Variant::direct, 16, "direct x16"},
                          {clf::Variant::tiled, 0, "tiled"}};

// The device's one-channel knobs of the bilateral's pairs dropped, so that the unsuffixed knobs a
// test sets hold for one channel too.
void drop_one_channel_knobs(clf::Tuning& t) {
  for (const char* name :
       {"bilateral.pairs_1ch", "bilateral.pair_outputs_1ch", "bilateral.pair_min_rows_1ch"})
    t.knobs.erase(name);
}

// The launches of `kernel` in a profiled run's trace.
int launches(const clf::RunStats& stats, const char* kernel) {
  int n = 0;
  for (const clf::TraceEvent& e : stats.trace) n += e.name.find(kernel) != std::string::npos;
  return n;
}

// Direct, one output a work-item (or vectors of them), with the plugins' knobs given set, for the
// scope (after drop_one_channel_knobs).
struct KnobScope : test::VariantScope {
  explicit KnobScope(std::initializer_list<std::pair<const char*, std::string>> knobs,
                     int vector_width = 1)
      : VariantScope(clf::Variant::direct, vector_width) {
    clf::Tuning t = test::device()->tuning();
    drop_one_channel_knobs(t);
    for (const auto& [name, value] : knobs) t.knobs[name] = value;
    test::device()->set_tuning(t);
  }
};

// `spec` on `in` with one output a work-item, direct (the median's tiles too: GPUs' tuning has 2 x
// 2): what every layout must give.
clf::Image one_output_a_work_item(const std::string& spec, const clf::Image& in) {
  KnobScope scope({{"rank.tile_width", "1"}, {"rank.tile_height", "1"}});
  return test::run_chain({spec}, in);
}

}  // namespace

TEST_CASE("every layout and 1-row strips give the same bits for median, rank and morphology",
          "[layout]") {
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32})
    for (const int channels : {1, 3}) {
      const clf::Image in = test::random_image(83, 29, channels, type, 11);
      for (const char* spec : exact_specs) {
        const clf::Image want = one_output_a_work_item(spec, in);
        for (const Layout& layout : layouts) {
          INFO(spec << " " << clf::pixel_type_name(type) << " x" << channels << " " << layout.name);
          test::VariantScope scope(layout.variant, layout.vector_width);
          CHECK(test::identical(test::run_chain({spec}, in), want));
          clf::RunOptions strips;
          strips.strip_rows = 1;
          CHECK(test::identical(test::run_chain({spec}, in, strips), want));
        }
      }
    }
}

TEST_CASE("a rect never reads its every tap, in any layout", "[layout]") {
  // A rect is separable: one output a work-item (direct x1) runs it as a row and a column pass
  // where vectors would have folded it into one (on CPUs); never as a 31x31 window of taps. The
  // tiled variant takes the direct passes' vectors (morphology has no staged pass).
  const clf::Image in = test::random_image(70, 40, 1, clf::PixelType::f32, 12);
  const clf::Image want = test::run_chain({"morphology:op=dilate,ksize=31,method=line"}, in);
  for (const Layout& layout : layouts) {
    INFO(layout.name);
    test::VariantScope scope(layout.variant, layout.vector_width);
    clf::Pipeline p(test::device());
    p.add(test::registry(), "morphology:op=dilate,ksize=31");
    CHECK_THAT(p.filter(0).describe(), !Catch::Contains("1 pass, direct"));
    CHECK(test::identical(test::run_chain({"morphology:op=dilate,ksize=31"}, in), want));
  }
}

TEST_CASE("a rect's rows by doubling windows give the loop's bits, NaN and signed zeros too",
          "[layout]") {
  // morphology.row_doubling_min_radius (morph_rect_vector, CPUs' vectors): radii about the vector
  // widths, the span's last vector loaded early and shifted; NaN inputs never win, and of equal
  // values (0 and -0) the leftmost does, as in the loop over the row's inputs.
  clf::Image in = test::random_image(75, 23, 3, clf::PixelType::f32, 14);
  const float values[] = {0.f, -0.f, 1.f, -1.f, std::nanf("")};
  for (size_t i = 0; i < in.byte_size() / sizeof(float); ++i)
    if (i % 3 == 0) reinterpret_cast<float*>(in.data())[i] = values[(i / 3 * 7) % 5];
  for (const int vw : {4, 8, 16})
    for (const char* spec : {"morphology:op=dilate,ksize=3", "morphology:op=erode,ksize=9",
                             "morphology:op=dilate,ksize=15",
                             "morphology:op=erode,ksize=17,border=constant,border_value=0.5",
                             "morphology:op=dilate,ksize=33,border=wrap",
                             "morphology:op=gradient,ksize=35,border=reflect101",
                             "morphology:op=dilate,ksize=5,iterations=7"}) {
      INFO(spec << ", vectors of " << vw);
      clf::Image loop, strips_loop;
      clf::RunOptions strips;
      strips.strip_rows = 1;
      {
        KnobScope off({{"morphology.row_doubling_min_radius", "1000"}}, vw);
        loop = test::run_chain({spec}, in);
        strips_loop = test::run_chain({spec}, in, strips);
      }
      KnobScope on({{"morphology.row_doubling_min_radius", "1"}}, vw);
      clf::Pipeline p(test::device());
      p.add(test::registry(), spec);
      CHECK_THAT(p.filter(0).describe(), Catch::Contains("rows by doubling windows") ||
                                             !Catch::Contains("van Herk down the columns"));
      CHECK(test::identical(test::run_chain({spec}, in), loop));
      CHECK(test::identical(test::run_chain({spec}, in, strips), strips_loop));
    }
}

TEST_CASE("the rank filters' tiles of outputs give one output's bits", "[layout]") {
  // rank.tile_width x rank.tile_height (GPUs: 2 x 2): the tiles' networks on the device against
  // one output a work-item, strips of 1 row (lower than a tile: the one-output kernel) and of 5
  // (a strip's last tile moves back inside it), a width no tile divides. Windows past 5x5 build
  // for minutes on PoCL; their networks are checked on the host (the next test).
  const char* const specs[] = {"median:ksize=3", "median:ksize=5,border=reflect101",
                               "rank:ksize=5,percentile=20,border=constant,border_value=7"};
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32}) {
    const clf::Image in = test::random_image(83, 29, 3, type, 13);
    for (const char* spec : specs) {
      const clf::Image want = one_output_a_work_item(spec, in);
      for (const auto tile : {std::pair{2, 2}, std::pair{3, 4}}) {
        INFO(spec << " " << clf::pixel_type_name(type) << " " << tile.first << "x" << tile.second);
        KnobScope scope({{"rank.tile_width", std::to_string(tile.first)},
                         {"rank.tile_height", std::to_string(tile.second)}});
        clf::Pipeline p(test::device());
        p.add(test::registry(), spec);
        CHECK_THAT(p.filter(0).describe(), Catch::Contains("outputs a work-item"));
        CHECK(test::identical(test::run_chain({spec}, in), want));
        for (const int rows : {1, 5}) {
          clf::RunOptions strips;
          strips.strip_rows = rows;
          CHECK(test::identical(test::run_chain({spec}, in, strips), want));
        }
      }
    }
  }
}

TEST_CASE("the 3x3 median from sorted columns gives the network's bits", "[layout]") {
  // rank.median3_rows 2 (CPUs): vectors of 8 outputs in 2 rows a work-item, against one output a
  // work-item; a width 8 does not divide (the row's tail), an odd height (a last row alone), strips
  // of 1 and 5 rows, every border kind.
  const char* const specs[] = {"median:ksize=3", "median:ksize=3,border=reflect101",
                               "median:ksize=3,border=wrap",
                               "median:ksize=3,border=constant,border_value=7"};
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32})
    for (const int channels : {1, 3}) {
      const clf::Image in = test::random_image(83, 29, channels, type, 17);
      for (const char* spec : specs) {
        const clf::Image want = one_output_a_work_item(spec, in);
        for (const char* rows : {"2", "0"}) {
          INFO(spec << " " << clf::pixel_type_name(type) << " x" << channels
                    << ", rank.median3_rows " << rows);
          // Tiles of 1 x 1, as on CPUs: GPUs' tuning has 2 x 2, which the kernel does not take.
          KnobScope scope(
              {{"rank.median3_rows", rows}, {"rank.tile_width", "1"}, {"rank.tile_height", "1"}},
              8);
          clf::Pipeline p(test::device());
          p.add(test::registry(), spec);
          CHECK((p.filter(0).describe().find("2 rows from sorted columns") != std::string::npos) ==
                (rows[0] == '2'));
          CHECK(test::identical(test::run_chain({spec}, in), want));
          for (const int strip_rows : {1, 5}) {
            clf::RunOptions strips;
            strips.strip_rows = strip_rows;
            CHECK(test::identical(test::run_chain({spec}, in, strips), want));
          }
        }
      }
    }
}

TEST_CASE("rank.u8_network_max_ksize sends u8 windows past it to the histogram, the same bits") {
  // 9x9 past a knob of 7 (CPUs' database): u8 counts in the histogram, u16 and f32 keep the
  // network; with 9, the network for every type. Each gives the network's bits.
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f32})
    for (const char* spec : {"median:ksize=9", "rank:ksize=9,percentile=30"}) {
      const clf::Image in = test::random_image(45, 23, 3, type, 19);
      const std::string forced = std::string(spec) + ",method=network";
      const clf::Image want = one_output_a_work_item(forced, in);
      for (const char* most : {"7", "9"}) {
        INFO(spec << " " << clf::pixel_type_name(type) << ", rank.u8_network_max_ksize " << most);
        KnobScope scope({{"rank.u8_network_max_ksize", most}});
        clf::Pipeline p(test::device());
        p.add(test::registry(), spec);
        CHECK((p.filter(0).describe().find("histogram on u8 images") != std::string::npos) ==
              (most[0] == '7'));
        clf::Image out(in.width(), in.height(), in.channels(), type);
        p.run(in, out);
        CHECK(test::identical(out, want));
        const bool histogram = type == clf::PixelType::u8 && most[0] == '7';
        CHECK(p.filter(0).describe().find(histogram ? ", histogram" : ", network") !=
              std::string::npos);
      }
    }
}

TEST_CASE("a tile's selection network gives each window's Q-th value, at fewer operations") {
  // On the host, windows of a few levels (many ties), every tile to 4 x 4 and ranks at the ends
  // and in the middle, against a sort of each window.
  std::mt19937 random(5);
  for (const int k : {3, 5, 7, 9})
    for (int mx = 1; mx <= std::min(k, 4); ++mx)
      for (int my = 1; my <= std::min(k, 4); ++my)
        for (const int q : {0, k * k / 2, k * k - 1, int(random() % unsigned(k * k))}) {
          INFO("ksize " << k << ", " << mx << "x" << my << " outputs, rank " << q);
          const clf_rank::SelectionNetwork net = clf_rank::selection_network(k, q, mx, my);
          const int wide = mx + k - 1, tall = my + k - 1;
          for (int trial = 0; trial < 20; ++trial) {
            std::vector<float> window(size_t(wide * tall));
            for (float& v : window) v = float(random() % 6);
            const std::vector<float> got =
                net.evaluate([&](int x, int y) { return window[size_t(y * wide + x)]; });
            REQUIRE(got.size() == size_t(mx * my));
            for (int yo = 0; yo < my; ++yo)
              for (int xo = 0; xo < mx; ++xo) {
                std::vector<float> values;
                for (int y = yo; y < yo + k; ++y)
                  for (int x = xo; x < xo + k; ++x) values.push_back(window[size_t(y * wide + x)]);
                std::nth_element(values.begin(), values.begin() + q, values.end());
                REQUIRE(got[size_t(yo * mx + xo)] == values[size_t(q)]);
              }
          }
        }
  // The point of sharing: from 5x5 on, 2 x 2 outputs cost under half as many operations an
  // output as one.
  for (const int k : {5, 7, 9}) {
    const int q = k * k / 2;
    CHECK(2 * clf_rank::selection_network(k, q, 2, 2).min_max_ops() / 4 <
          clf_rank::selection_network(k, q, 1, 1).min_max_ops());
  }
}

TEST_CASE("morphology's lines at constant cost give the direct passes' bits", "[layout]") {
  // The column line walking down segments of whole blocks, at least morphology.line_walk_rows
  // rows (the default; 7 and 20: segments of one block and of several), and one block a
  // work-item (0). A group's block of the 61x61 takes under half of local memory on every device
  // here. Segments of several blocks need few compute units for an image this small (PoCL): a
  // GPU's 8 groups a compute unit give each of its 47 rows' blocks a segment of its own. Groups
  // of 64 columns and of 32 (morphology.line_walk_group 32; by default where 64 do not fit). The
  // row line one block a work-item (morphology.row_tile 0), and in tiles of 17 to 2048 outputs
  // whose blocks are scanned in chunks: several tiles a row, and one, and groups of 16 for a tile
  // of 17 (two outputs for some work-items); the 151x151's blocks are longer than the image is wide
  // or high. Tiles start at every column modulo 4, so the float4 staging meets every alignment.
  const clf::Image in = test::random_image(91, 47, 2, clf::PixelType::f32, 8);
  struct Lines {
    const char *rows, *group, *tile, *row_group = "128";
  };
  for (const char* spec : {"morphology:op=dilate,ksize=7", "morphology:op=erode,ksize=31",
                           "morphology:op=blackhat,ksize=9,border=replicate",
                           "morphology:op=open,ksize=61,border=reflect",
                           "morphology:op=dilate,ksize=151,border=replicate"}) {
    INFO(spec);
    const clf::Image direct = test::run_chain({std::string(spec) + ",method=direct"}, in);
    for (const Lines lines :
         {Lines{"200", "64", "0"}, Lines{"7", "32", "32"}, Lines{"20", "32", "2048"},
          Lines{"20", "64", "64"}, Lines{"0", "64", "0"}, Lines{"0", "64", "17"},
          Lines{"7", "64", "17", "16"}}) {
      const char* rows = lines.rows;
      INFO("morphology.line_walk_rows " << rows << ", line_walk_group " << lines.group
                                        << ", row_tile " << lines.tile << ", row_group "
                                        << lines.row_group);
      KnobScope scope({{"morphology.line_walk_rows", rows},
                       {"morphology.line_walk_group", lines.group},
                       {"morphology.row_tile", lines.tile},
                       {"morphology.row_tile_min_radius", "0"},
                       {"morphology.row_group", lines.row_group}});
      clf::Pipeline p(test::device());
      p.add(test::registry(), std::string(spec) + ",method=line");
      const std::string layout = p.filter(0).describe();
      CHECK((layout.find("columns walked down") != std::string::npos) == (rows[0] != '0'));
      CHECK((layout.find("rows in tiles") != std::string::npos) == (lines.tile[0] != '0'));
      CHECK(test::identical(test::run_chain({std::string(spec) + ",method=line"}, in), direct));
      clf::RunOptions strips;
      strips.strip_rows = 2;
      CHECK(test::identical(test::run_chain({std::string(spec) + ",method=line"}, in, strips),
                            direct));
    }
  }
}

TEST_CASE("the largest rect, 511x511, in one pass gives the lines' bits", "[layout]") {
  // On CPUs the one pass keeps 2 x 511 vectors a work-item in private arrays, which PoCL keeps
  // for a whole group on one thread's stack: its groups are sized to hold them.
  const clf::Image in = test::random_image(91, 47, 2, clf::PixelType::f32, 9);
  const std::string spec = "morphology:op=dilate,ksize=511,border=reflect101";
  if (!test::device()->info().is_gpu) {
    clf::Pipeline p(test::device());
    p.add(test::registry(), spec);
    CHECK_THAT(p.filter(0).describe(), Catch::Matchers::Contains("1 pass"));
  }
  const clf::Image lines = test::run_chain({spec + ",method=line"}, in);
  CHECK(test::identical(test::run_chain({spec}, in), lines));
  clf::RunOptions strips;
  strips.strip_rows = 2;
  CHECK(test::identical(test::run_chain({spec}, in, strips), lines));
}

TEST_CASE("a rect by groups walking down the columns gives the direct passes' bits", "[layout]") {
  // morphology.rect_walk (GPUs' default): the first erode or dilate of a rect from 9x9 to
  // morphology.walk_max_radius (47x47 here) in one pass; later passes read temp planes. Radii to 8
  // issue the next batch's loads early (the default morphology.walk_prefetch_max_radius), larger
  // ones wait for each batch's. Widths that leave a group part empty, strips lower than a block,
  // and 2 channels; the default groups (128 columns, 8 blocks) and narrow, short ones
  // (morphology.walk_group, walk_blocks); rows first and columns first
  // (morphology.walk_columns_min_radius 0), which a 32-column group leaves to rows first past 29x29
  // (it reaches 2 r columns past its outputs). Every group walks all its blocks
  // (morphology.min_groups 0), or fewer where a strip's groups would be fewer than 8 a compute unit
  // (the default; a block a group in these strips).
  const clf::Image in = test::random_image(141, 75, 2, clf::PixelType::f32, 12);
  struct Walk {
    const char *group, *blocks, *columns_from, *min_groups;
  };
  const Walk walks[] = {{"128", "8", "16", "0"},
                        {"32", "3", "16", "0"},
                        {"128", "8", "0", "0"},
                        {"32", "3", "0", "0"},
                        {"128", "8", "16", "8"}};
  for (const char* spec :
       {"morphology:op=dilate,ksize=9",
        "morphology:op=erode,ksize=31,border=constant,border_value=2",
        "morphology:op=open,ksize=11,border=reflect", "morphology:op=tophat,ksize=17",
        "morphology:op=gradient,ksize=9,border=wrap", "morphology:op=erode,ksize=5,iterations=5",
        "morphology:op=dilate,ksize=25,border=replicate",
        "morphology:op=dilate,ksize=47,border=reflect101"}) {
    INFO(spec);
    const clf::Image direct = test::run_chain({std::string(spec) + ",method=direct"}, in);
    for (const Walk& walk : walks) {
      INFO("walk_group " << walk.group << ", walk_blocks " << walk.blocks
                         << ", walk_columns_min_radius " << walk.columns_from << ", min_groups "
                         << walk.min_groups);
      KnobScope scope({{"morphology.rect_walk", "1"},
                       {"morphology.walk_max_radius", "23"},
                       {"morphology.walk_group", walk.group},
                       {"morphology.walk_blocks", walk.blocks},
                       {"morphology.walk_columns_min_radius", walk.columns_from},
                       {"morphology.min_groups", walk.min_groups}});
      clf::Pipeline p(test::device());
      p.add(test::registry(), spec);
      const std::string layout = p.filter(0).describe();
      CHECK_THAT(layout, Catch::Contains("walking down"));
      // Columns first from the knob's radius, where the group reaches 2 r + 4 columns (a rect's
      // iterations fold into one of radius r times as many).
      const int r =
          number_after(spec, "ksize=") / 2 * std::max(1, number_after(spec, "iterations="));
      const bool columns = r >= std::stoi(walk.columns_from) && std::stoi(walk.group) >= 2 * r + 4;
      CHECK((layout.find("columns first") != std::string::npos) == columns);
      CHECK(test::identical(test::run_chain({spec}, in), direct));
      for (const int rows : {1, 7}) {
        clf::RunOptions strips;
        strips.strip_rows = rows;
        CHECK(test::identical(test::run_chain({spec}, in, strips), direct));
      }
    }
  }
  // Past morphology.walk_max_radius the rect is not walked.
  KnobScope scope({{"morphology.rect_walk", "1"}, {"morphology.walk_max_radius", "23"}});
  clf::Pipeline past(test::device());
  past.add(test::registry(), "morphology:op=dilate,ksize=49");
  CHECK_THAT(past.filter(0).describe(), !Catch::Contains("walking down"));
}

TEST_CASE(
    "erode and dilate on the correlation's kernels give the direct passes' bits, every layout",
    "[layout]") {
  // method=window: the element as a window of 1s, a max or min in place of the multiply-add, on
  // every layout the 2-D correlation takes (GPUs: 4 x TH blocks from float4 reads).
  const clf::Image in = test::random_image(77, 41, 3, clf::PixelType::f32, 9);
  for (const char* spec :
       {"morphology:op=dilate,ksize=3", "morphology:op=erode,shape=ellipse,ksize=15",
        "morphology:op=dilate,shape=cross,ksize=7,border=reflect101",
        "morphology:op=erode,ksize=5,iterations=2,border=constant,border_value=0.5",
        "morphology:op=dilate,shape=ellipse,ksize=9,border=wrap"}) {
    const clf::Image direct = test::run_chain({std::string(spec) + ",method=direct"}, in);
    for (const auto& layout : test::layouts()) {
      INFO(spec << ", " << layout.name);
      test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                               layout.columns_first);
      clf::Pipeline p(test::device());
      p.add(test::registry(), std::string(spec) + ",method=window");
      CHECK_THAT(p.filter(0).describe(), Catch::Contains("the element in one window"));
      clf::Image out;
      p.run(in, out);
      CHECK(test::identical(out, direct));
      clf::RunOptions strips;
      strips.strip_rows = 1;
      CHECK(test::identical(test::run_chain({std::string(spec) + ",method=window"}, in, strips),
                            direct));
    }
  }
}

TEST_CASE("the median's three ways agree wherever each applies", "[layout]") {
  const clf::Image u8 = test::random_image(70, 41, 2, clf::PixelType::u8, 3);
  for (const char* size : {"ksize=3", "ksize=9"}) {
    const std::string base = std::string("median:") + size + ",method=";
    const clf::Image network = test::run_chain({base + "network"}, u8);
    CHECK(test::identical(test::run_chain({base + "histogram"}, u8), network));
    CHECK(test::identical(test::run_chain({base + "bisect"}, u8), network));
  }
  clf::Image f32 = test::random_image(50, 33, 1, clf::PixelType::f32, 4);
  for (size_t i = 0; i < 50 * 33; i += 3) f32.pixels<float>()[i] *= -1000.f;  // keys of both signs
  CHECK(test::identical(test::run_chain({"rank:ksize=7,percentile=90,method=network"}, f32),
                        test::run_chain({"rank:ksize=7,percentile=90,method=bisect"}, f32)));
}

TEST_CASE("the two-level histogram of u16 levels and half values gives the bisection's bits",
          "[layout]") {
  // Full-range keys move the result's high byte on most rows; a narrow range (a photograph's
  // smooth part) keeps it and counts most keys' low bytes. Half images take negatives too.
  clf::Image wide = test::random_image(75, 45, 2, clf::PixelType::u16, 7);
  clf::Image narrow = test::random_image(75, 45, 2, clf::PixelType::u16, 8);
  clf::Image half = test::random_image(75, 45, 2, clf::PixelType::f16, 9);
  for (size_t i = 0; i < size_t(75 * 45 * 2); ++i) {
    narrow.pixels<uint16_t>()[i] = uint16_t(30000 + narrow.pixels<uint16_t>()[i] / 100);
    if (i % 3 == 0) half.pixels<uint16_t>()[i] |= 0x8000;
  }
  for (const clf::Image* in : {&wide, &narrow, &half}) {
    const bool u16 = in->type() == clf::PixelType::u16;
    const std::vector<std::string> specs = {
        "median:ksize=11", "rank:ksize=13,percentile=83,border=reflect101",
        std::string("median:ksize=15,border=constant,border_value=") + (u16 ? "40000" : "-0.375"),
        "rank:ksize=3,percentile=0,border=wrap"};
    for (const std::string& spec : specs) {
      INFO(spec << " " << clf::pixel_type_name(in->type()));
      const clf::Image bisect = test::run_chain({spec + ",method=bisect"}, *in);
      clf::Pipeline p(test::device());
      p.add(test::registry(), spec + ",method=histogram");
      clf::Image out;
      p.run(*in, out);
      CHECK(test::identical(out, bisect));
      CHECK_THAT(p.filter(0).describe(), Catch::Contains(u16 ? "two-level histogram of u16"
                                                             : "two-level histogram of half"));
      if (spec.find("median:ksize=11") == 0)  // auto takes it past the networks' 9x9
        CHECK(test::identical(test::run_chain({spec}, *in), bisect));
      clf::RunOptions strips;
      strips.strip_rows = 1;
      CHECK(test::identical(test::run_chain({spec + ",method=histogram"}, *in, strips), bisect));
    }
  }
  // A constant border off the keys: no histogram (auto bisects).
  CHECK_THROWS_WITH(test::run_chain({"median:ksize=11,border=constant,border_value=0.5,"
                                     "method=histogram"},
                                    wide),
                    Catch::Contains("u16 with a border_value that is not one of them"));
  CHECK_THROWS_WITH(test::run_chain({"median:ksize=11,border=constant,border_value=0.1,"
                                     "method=histogram"},
                                    half),
                    Catch::Contains("f16 with a border_value that is not one of them"));
  CHECK(test::identical(
      test::run_chain({"median:ksize=11,border=constant,border_value=0.1"}, half),
      test::run_chain({"median:ksize=11,border=constant,border_value=0.1,method=bisect"}, half)));
}

TEST_CASE("poisoned planes: every filter and layout reads only what was written", "[layout]") {
  // RunOptions::poison fills each strip's planes with NaN first: a kernel reading past what the
  // unpack, the border and the stages before it wrote gives NaN, or faults indexing a table.
  struct Forced {
    std::vector<std::string> chain;
    std::initializer_list<std::pair<const char*, std::string>> knobs;
  };
  const Forced cases[] = {
      {{"median:ksize=3"}, {}},
      {{"median:ksize=5"}, {{"rank.tile_width", "2"}, {"rank.tile_height", "2"}}},
      {{"median:ksize=13"}, {}},
      {{"rank:ksize=11,percentile=30,method=bisect"}, {}},
      {{"morphology:op=close,ksize=9"}, {}},
      {{"morphology:op=dilate,ksize=21,method=line"}, {}},
      {{"morphology:op=erode,shape=ellipse,ksize=7,border=wrap"}, {}},
      {{"bilateral:d=7,sigma_color=40,sigma_space=2"},
       {{"bilateral.outputs", "4"}, {"bilateral.rows_max_radius", "8"}}},
      {{"bilateral:d=9,sigma_color=40,sigma_space=3,border=reflect"},
       {{"bilateral.outputs", "8"},
        {"bilateral.rows_max_radius", "8"},
        {"bilateral.lane_tables", "1"}}},
      {{"bilateral:d=9,sigma_color=40,sigma_space=3,border=wrap"},
       {{"bilateral.outputs", "4"},
        {"bilateral.rows_max_radius", "8"},
        {"bilateral.lane_tables", "1"},
        {"bilateral.pair_channels", "1"},
        {"bilateral.pair_outputs", "8"},
        {"bilateral.pair_exp", "0.5"}}},
      {{"bilateral:d=5,sigma_color=40,sigma_space=2"}, {}},
      {{"laplacian:ksize=5"}, {}},
      {{"unsharp:sigma=2,amount=1.5"}, {}},
      {{"median:ksize=5", "bilateral:d=5,sigma_color=40,sigma_space=2"},
       {{"bilateral.outputs", "4"}, {"bilateral.rows_max_radius", "8"}}},
      {{"gaussian:sigma=2", "morphology:op=open,ksize=5", "median:ksize=13"}, {}}};
  for (const clf::PixelType type :
       {clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f16, clf::PixelType::f32})
    for (const int channels : {1, 3})
      for (const Forced& c : cases) {
        const bool sixteen = type == clf::PixelType::u16 || type == clf::PixelType::f16;
        if (sixteen && c.chain.front().rfind("median", 0) != 0 &&
            c.chain.front().rfind("rank", 0) != 0)
          continue;  // their own ways: the two-level histogram
        INFO(c.chain.front() << " (" << c.chain.size() << " filters) " << clf::pixel_type_name(type)
                             << " x" << channels);
        KnobScope scope(c.knobs);
        test::check_poisoned(c.chain, test::random_image(45, 23, channels, type, 31), 5);
      }
}

TEST_CASE("groups with __local counts shrink to the device's local memory") {
  CHECK(clf_plugins::halved_to_fit(544, 48 << 10, 64) == 64);  // the GPUs here: 34 KiB
  CHECK(clf_plugins::halved_to_fit(544, 32 << 10, 64) == 32);  // 32 KiB devices: 17 KiB
  CHECK(clf_plugins::halved_to_fit(1088, 16 << 10, 32) == 8);
  CHECK(clf_plugins::halved_to_fit(1088, 100, 32) == 1);  // never none
}

TEST_CASE("a border_value is a half value exactly where Imath's half gives it back") {
  for (float v : {0.f, -0.f, 1.f, 0.1f, 0.375f, 65504.f, 65505.f, 65520.f, 1e-7f,
                  5.960464477539063e-8f, 6.103515625e-05f, 6.1035156e-05f * 1.0009765625f, 2049.f,
                  2050.f, 1.f + 0x1p-10f, 1.f + 0x1p-11f, -3.140625f})
    for (float s : {1.f, -1.f}) {
      INFO(v * s);
      CHECK(clf_plugins::is_half_value(v * s) == (float(Imath::half(v * s)) == v * s));
    }
}

TEST_CASE("past a chain's first filter the input is f32: no u8 histogram on a blur's results") {
  const clf::Image u8 = test::random_image(64, 40, 1, clf::PixelType::u8, 5);
  const clf::Image bisect = test::run_chain({"box:radius=1", "median:ksize=11,method=bisect"}, u8);
  CHECK(test::identical(test::run_chain({"box:radius=1", "median:ksize=11"}, u8), bisect));
  CHECK_THROWS_WITH(test::run_chain({"box:radius=1", "median:ksize=11,method=histogram"}, u8),
                    Catch::Contains("its input is f32"));
  // The first filter of a chain still sees the image's u8 levels.
  CHECK(test::identical(test::run_chain({"median:ksize=11,method=histogram"}, u8),
                        test::run_chain({"median:ksize=11,method=bisect"}, u8)));
}

TEST_CASE("bilateral: every layout and 1-row strips within float rounding", "[layout]") {
  for (const int channels : {1, 3, 5}) {  // 5: past the tiled kernel's 4, direct on every device
    const clf::Image in = test::random_image(77, 23, channels, clf::PixelType::f32, 9);
    const std::string spec = "bilateral:d=7,sigma_color=0.3,sigma_space=2,border=reflect";
    const clf::Image want = one_output_a_work_item(spec, in);
    for (const Layout& layout : layouts) {
      INFO(layout.name << " x" << channels);
      test::VariantScope scope(layout.variant, layout.vector_width);
      CHECK(largest_difference(test::run_chain({spec}, in), want) <= 1e-6);
      clf::RunOptions strips;
      strips.strip_rows = 1;
      CHECK(largest_difference(test::run_chain({spec}, in, strips), want) <= 1e-6);
    }
  }
}

TEST_CASE("bilateral: u8 levels in every other layout within a level, 1-row strips the same bits",
          "[layout]") {
  // Direct, SIMD vectors and tiled (the rows layout off): CPUs take the colour weights from a
  // polynomial exp, GPUs from native_exp; whole levels and a fractional constant border alike.
  const std::pair<const char*, bool> borders[] = {{"border=reflect", true},
                                                  {"border=constant,border_value=7.5", false}};
  for (const int channels : {1, 3, 5})
    for (const auto& [border, levels] : borders) {
      const clf::Image in = test::random_image(45, 19, channels, clf::PixelType::u8, 29);
      const std::string spec = "bilateral:d=7,sigma_color=40,sigma_space=2," + std::string(border);
      const ref::Image want =
          ref::bilateral(test::to_ref(in), 3, 40, 2,
                         levels ? ref::Border::reflect : ref::Border::constant, levels ? 0 : 7.5);
      for (const Layout& layout : layouts) {
        INFO(spec << " x" << channels << " " << layout.name);
        KnobScope scope({{"bilateral.outputs", "0"}}, layout.vector_width);
        test::VariantScope variant(layout.variant, layout.vector_width);
        clf::Pipeline p(test::device());
        p.add(test::registry(), spec);
        clf::Image got;
        p.run(in, got);
        CHECK((p.filter(0).describe().find("colour table") == std::string::npos));
        CHECK(largest_difference(test::to_ref(got), want) <= 1.0);
        clf::RunOptions strips;
        strips.strip_rows = 1;
        CHECK(test::identical(test::run_chain({spec}, in, strips), got));
      }
    }
}

TEST_CASE("bilateral: colour weights far below float's range, in every layout", "[layout]") {
  // A sigma_color so small that most colour weights underflow: exp gives 0, the CPUs' polynomial
  // 2^-126 or less; beside the centre's weight of 1 neither counts. Every layout and the rows
  // layout (its u8 table), against the formula.
  struct Run {
    std::string name;
    clf::Variant variant;
    int vector_width;
    const char* rows_outputs;
  };
  std::vector<Run> runs;
  for (const Layout& layout : layouts)
    runs.push_back({layout.name, layout.variant, layout.vector_width, "0"});
  runs.push_back({"rows x4", clf::Variant::direct, 1, "4"});
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32})
    for (const int channels : {1, 3}) {
      const bool u8 = type == clf::PixelType::u8;
      const clf::Image in = test::random_image(45, 19, channels, type, 31);
      const std::string spec = "bilateral:d=7,sigma_color=" + std::string(u8 ? "0.5" : "0.01") +
                               ",sigma_space=2,border=reflect";
      const ref::Image want =
          ref::bilateral(test::to_ref(in), 3, u8 ? 0.5 : 0.01, 2, ref::Border::reflect, 0);
      for (const Run& run : runs) {
        INFO(spec << " x" << channels << " " << clf::pixel_type_name(type) << " " << run.name);
        KnobScope scope(
            {{"bilateral.outputs", run.rows_outputs}, {"bilateral.rows_max_radius", "8"}},
            run.vector_width);
        test::VariantScope variant(run.variant, run.vector_width);
        CHECK(bilateral_error(test::to_ref(test::run_chain({spec}, in)), want, u8) <=
              (u8 ? 1.0 : 1e-5));
      }
    }
}

TEST_CASE("bilateral: space weights below float's range, the pairs' exp2 among them", "[layout]") {
  // A sigma_space so small that every weight but the centre's is below float's least (0 in the
  // host's table, -1000 for exp2's log2): the output is the input. The rows layout and the pairs,
  // their weights from the table or exp2, u8 of 1 and 3 channels, against the formula.
  const clf::Image in = test::random_image(40, 17, 3, clf::PixelType::u8, 9);
  const clf::Image one = test::random_image(40, 17, 1, clf::PixelType::u8, 9);
  const std::string spec = "bilateral:d=7,sigma_color=40,sigma_space=0.05,border=reflect101";
  for (const char* pair_exp : {"0", "0.5", "1"})
    for (const char* pair_channels : {"0", "1"})
      for (const clf::Image* image : {&in, &one}) {
        INFO("pairs from " << pair_channels << " channels, exp share " << pair_exp << ", x"
                           << image->channels());
        KnobScope scope({{"bilateral.outputs", "4"},
                         {"bilateral.rows_max_radius", "8"},
                         {"bilateral.lane_tables", "1"},
                         {"bilateral.pair_channels", pair_channels},
                         {"bilateral.pair_exp", pair_exp}});
        const ref::Image want =
            ref::bilateral(test::to_ref(*image), 3, 40, 0.05, ref::Border::reflect101, 0);
        CHECK(bilateral_error(test::to_ref(test::run_chain({spec}, *image)), want, true) <= 1.0);
      }
}

TEST_CASE("bilateral's rows layout: u8 with its colour table within a level, float within 1e-5",
          "[layout]") {
  // The GPUs' layouts, forced on any device: outputs a row a work-item, the taps of a space weight
  // summed together, or as pairs (a pair of pixels weighted once for both, groups starting their
  // walks radius rows above); colour weights from a table of distances for u8 levels. Against the
  // formula (tests/reference), every border, 1 to 4 channels (more than one: keys from packed
  // bytes), and 1-row strips giving the same bits.
  struct Case {
    const char* spec;
    ref::Border border;
    double value;
    bool table;  // u8: a constant border of a fractional value is not a level, so no table
  };
  const Case cases[] = {
      {"border=reflect101", ref::Border::reflect101, 0, true},
      {"border=wrap", ref::Border::wrap, 0, true},
      {"border=constant,border_value=7", ref::Border::constant, 7, true},
      {"border=constant,border_value=7.5", ref::Border::constant, 7.5, false},
  };
  // Outputs a work-item, whether the u8 table is held once per lane of a warp where it fits, from
  // how many channels the pairs layout takes over (8 outputs, groups of 4 rows; 0: never), the
  // share of the disc's offsets whose pairs take exp where packed bytes key the table, and the
  // most copies of such a table. The last three differ from one before only there: they run on
  // u8 of 2 to 4 channels alone.
  struct Layout {
    const char *outputs, *lane_tables, *pair_channels, *pair_exp, *packed_copies;
    bool packed_only;
  };
  const Layout layouts[] = {{"4", "0", "0", "0", "32", false}, {"8", "0", "0", "0", "32", false},
                            {"4", "1", "0", "0", "32", false}, {"4", "1", "1", "0", "32", false},
                            {"4", "0", "2", "0", "32", false}, {"4", "1", "1", "0.4", "4", true},
                            {"4", "0", "2", "1", "32", true},  {"4", "1", "0", "0", "2", true}};
  for (const auto& [outputs, lane_tables, pair_channels, pair_exp, packed_copies, packed_only] :
       layouts)
    for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32})
      for (const int channels : {1, 2, 3, 4})
        for (const Case& c : cases) {
          const bool u8 = type == clf::PixelType::u8;
          if (packed_only && (!u8 || channels == 1)) continue;
          const clf::Image in = test::random_image(45, 19, channels, type, 21);
          const double sigma_color = u8 ? 40 : 0.3;
          const std::string spec = "bilateral:d=7,sigma_color=" + std::string(u8 ? "40" : "0.3") +
                                   ",sigma_space=2," + c.spec;
          const clf::DeviceInfo& info = test::device()->info();
          const bool table = u8 && c.table;
          const int pairs_from = std::stoi(pair_channels);
          const bool paired = pairs_from > 0 && channels >= pairs_from;
          const std::string layout_name = paired ? "pairs x8" : std::string("rows x") + outputs;
          INFO(spec << " x" << channels << " " << clf::pixel_type_name(type) << ", " << layout_name
                    << ", lane tables " << lane_tables << ", exp share " << pair_exp
                    << ", packed copies " << packed_copies);
          KnobScope scope({{"bilateral.outputs", outputs},
                           {"bilateral.rows_max_radius", "8"},
                           {"bilateral.lane_tables", lane_tables},
                           {"bilateral.pair_channels", pair_channels},
                           {"bilateral.pair_outputs", "8"},
                           {"bilateral.pair_rows", "4"},
                           {"bilateral.pair_min_rows", "2"},
                           {"bilateral.pair_exp", pair_exp},
                           {"bilateral.packed_copies", packed_copies}});
          clf::Pipeline p(test::device());
          p.add(test::registry(), spec);
          clf::Image got;
          p.run(in, got);
          const std::string layout = p.filter(0).describe();
          CHECK_THAT(layout, Catch::Contains(layout_name));
          CHECK((layout.find("colour table") != std::string::npos) == table);
          // d=7: 29 taps, 14 offsets each side of the centre, floor(14 share) of them by exp.
          const int by_exp = paired && table && channels > 1 ? int(14 * std::stod(pair_exp)) : 0;
          CHECK((layout.find("(exp for " + std::to_string(by_exp) + " of 14 offsets)") !=
                 std::string::npos) == (by_exp > 0));
          // With lane tables, the most copies to 32 (packed bytes': to packed_copies) that fit
          // the device's __local memory (one channel's 32 copies, 32 KiB: everywhere).
          int copies = channels > 1 ? std::stoi(packed_copies) : 32;
          while (copies > 1 && (255 * channels + 1) * copies * 4 > int64_t(info.local_mem_bytes))
            copies /= 2;
          const bool lanes = table && lane_tables[0] == '1' && info.max_work_group_size >= 32;
          CHECK((layout.find(" copies of a colour table") != std::string::npos) == lanes);
          if (lanes) CHECK_THAT(layout, Catch::Contains(std::to_string(copies) + " copies"));
          const ref::Image want =
              ref::bilateral(test::to_ref(in), 3, sigma_color, 2, c.border, c.value);
          CHECK(bilateral_error(test::to_ref(got), want, u8) <= (u8 ? 1.0 : 1e-5));
          clf::RunOptions strips;
          strips.strip_rows = 1;
          CHECK(test::identical(test::run_chain({spec}, in, strips), got));
        }
}

TEST_CASE("bilateral: the pairs' walk and the rows layout in the pairs' order give the same bits",
          "[layout]") {
  // A launch whose groups would walk down fewer than bilateral.pair_min_rows rows takes the rows
  // layout with each tap where the pairs add it, weighted as its pair: forced both ways (the
  // trace names the kernel), the same bits, and the formula's results. u8 levels (the table; for
  // three channels packed keys, half the offsets by exp2) and floats (exp at every pair). The
  // layout test above compares the two for 1 to 4 channels and every border where the device's
  // groups are tall enough to walk.
  for (const clf::PixelType type : {clf::PixelType::u8, clf::PixelType::f32})
    for (const int channels : {1, 3})
      for (const auto& [border, ref_border] :
           {std::pair{"reflect101", ref::Border::reflect101},
            std::pair{"constant,border_value=7", ref::Border::constant}}) {
        const bool u8 = type == clf::PixelType::u8;
        const std::string spec = "bilateral:d=9,sigma_color=" + std::string(u8 ? "40" : "0.3") +
                                 ",sigma_space=3,border=" + border;
        INFO(spec << " x" << channels << " " << clf::pixel_type_name(type));
        const clf::Image in = test::random_image(53, 23, channels, type, 29);
        clf::Image got[2];
        for (const int walk : {1, 0}) {
          KnobScope scope({{"bilateral.outputs", "4"},
                           {"bilateral.rows_max_radius", "8"},
                           {"bilateral.lane_tables", "1"},
                           {"bilateral.pair_channels", "1"},
                           {"bilateral.pair_outputs", "8"},
                           {"bilateral.pair_exp", "0.5"},
                           {"bilateral.pair_min_rows", walk ? "1" : "100000"}});
          clf::RunOptions options;
          options.profile = true;
          clf::RunStats stats;
          got[walk] = test::run_chain({spec}, in, options, &stats);
          CHECK((launches(stats, "bilateral_pairs") > 0) == bool(walk));  // a launch a strip
          CHECK((launches(stats, "bilateral_rows") > 0) == !walk);
        }
        CHECK(test::identical(got[0], got[1]));
        const ref::Image want =
            ref::bilateral(test::to_ref(in), 4, u8 ? 40 : 0.3, 3, ref_border, 7);
        CHECK(bilateral_error(test::to_ref(got[0]), want, u8) <= (u8 ? 1.0 : 1e-5));
      }
}

TEST_CASE("bilateral: one channel's pair knobs apply to one channel, the others' to more",
          "[layout]") {
  // bilateral.pairs_1ch, pair_outputs_1ch and pair_min_rows_1ch against pair_channels,
  // pair_outputs and pair_min_rows: one channel's pairs (though pairs start from 2 channels) 8
  // outputs a work-item, three channels' 4. Groups walking pair_rows rows (pair_groups 0: however
  // few groups that makes): three channels' walk from 2r rows, one channel's from 8r (d=9: 32),
  // or from its own pair_min_rows_1ch; shorter walks take the rows layout in the pairs' order. The
  // formula's results every way.
  struct Case {
    const char *rows, *min_rows_1ch;
    bool walk_1ch;
  };
  for (const Case& c : {Case{"20", nullptr, false}, Case{"40", nullptr, true},
                        Case{"40", "41", false}}) {
    KnobScope scope({{"bilateral.outputs", "4"},
                     {"bilateral.rows_max_radius", "8"},
                     {"bilateral.lane_tables", "1"},
                     {"bilateral.pair_channels", "2"},
                     {"bilateral.pairs_1ch", "1"},
                     {"bilateral.pair_outputs", "4"},
                     {"bilateral.pair_outputs_1ch", "8"},
                     {"bilateral.pair_groups", "0"},
                     {"bilateral.pair_rows", c.rows}});
    if (c.min_rows_1ch) {
      clf::Tuning t = test::device()->tuning();
      t.knobs["bilateral.pair_min_rows_1ch"] = c.min_rows_1ch;
      test::device()->set_tuning(t);
    }
    const std::string spec = "bilateral:d=9,sigma_color=40,sigma_space=3";
    for (const int channels : {1, 3}) {
      INFO(channels << " channels, groups of " << c.rows << " rows, one channel's fewest "
                    << (c.min_rows_1ch ? c.min_rows_1ch : "8r"));
      const clf::Image in = test::random_image(53, 23, channels, clf::PixelType::u8, 31);
      clf::Pipeline p(test::device());
      p.add(test::registry(), spec);
      clf::RunOptions options;
      options.profile = true;
      clf::Image got;
      const clf::RunStats stats = p.run(in, got, options);
      CHECK_THAT(p.filter(0).describe(),
                 Catch::Contains(channels == 1 ? "pairs x8" : "pairs x4"));
      const bool walk = channels > 1 || c.walk_1ch;
      CHECK((launches(stats, "bilateral_pairs") > 0) == walk);
      CHECK((launches(stats, "bilateral_rows") > 0) == !walk);
      const ref::Image want =
          ref::bilateral(test::to_ref(in), 4, 40, 3, ref::Border::reflect101, 0);
      CHECK(bilateral_error(test::to_ref(got), want, true) <= 1.0);
    }
  }
}

TEST_CASE("bilateral's rows layout: groups walk down several rows, the last group fewer",
          "[layout]") {
  // A group walks down its rows one after the other, its colour table filled once; fewer rows a
  // group where a strip's rows would leave fewer than 8 groups a compute unit. An image in one
  // strip 5 rows a group tall, 3 past a whole number of groups (one group across), against the
  // formula and against 1-row strips (one row a group).
  // The pairs layout the same, its groups counted as the rows layout's (bilateral.pair_groups).
  const size_t min_groups = 8 * size_t(std::max(1, test::device()->info().compute_units));
  const int rows = int(min_groups * 5 + 3);
  for (const char* pair_channels : {"0", "1"})
    for (const int channels : {1, 3}) {
      KnobScope scope({{"bilateral.outputs", "4"},
                       {"bilateral.rows_max_radius", "8"},
                       {"bilateral.lane_tables", "1"},
                       {"bilateral.pair_channels", pair_channels},
                       {"bilateral.pair_groups", "8"}});
      const clf::Image in = test::random_image(37, rows, channels, clf::PixelType::u8, 5);
      const std::string spec = "bilateral:d=5,sigma_color=30,sigma_space=2,border=reflect101";
      INFO(spec << " x" << channels << ", " << rows << " rows, pairs from " << pair_channels
                << " channels");
      clf::RunOptions whole;
      whole.strip_rows = rows;
      const clf::Image got = test::run_chain({spec}, in, whole);
      const ref::Image want =
          ref::bilateral(test::to_ref(in), 2, 30, 2, ref::Border::reflect101, 0);
      CHECK(bilateral_error(test::to_ref(got), want, true) <= 1.0);
      clf::RunOptions strips;
      strips.strip_rows = 1;
      CHECK(test::identical(test::run_chain({spec}, in, strips), got));
    }
}

TEST_CASE("bilateral's pairs layout: inf and NaN give what the formula gives, as the rows layout",
          "[layout]") {
  // Float images weigh by exp: a pixel of inf or NaN is NaN where its own weight is (the centre's
  // distance is NaN), and weighs 0 or NaN in its neighbours' sums. Both layouts compute each tap's
  // weight by the same formula, so their non-finite results fall on the same pixels.
  for (const int channels : {1, 3}) {
    clf::Image in = test::random_image(29, 17, channels, clf::PixelType::f32, 9);
    reinterpret_cast<float*>(in.row(5))[7 * channels] = std::numeric_limits<float>::infinity();
    reinterpret_cast<float*>(in.row(11))[20 * channels] = std::numeric_limits<float>::quiet_NaN();
    const std::string spec = "bilateral:d=5,sigma_color=0.3,sigma_space=2";
    auto run = [&](const char* pair_channels) {
      KnobScope scope({{"bilateral.outputs", "4"},
                       {"bilateral.rows_max_radius", "8"},
                       {"bilateral.pair_channels", pair_channels}});
      return test::run_chain({spec}, in);
    };
    const clf::Image rows = run("0"), pairs = run("1");
    int non_finite = 0;
    for (int y = 0; y < 17; ++y)
      for (int i = 0; i < 29 * channels; ++i) {
        const float a = reinterpret_cast<const float*>(rows.row(y))[i];
        const float b = reinterpret_cast<const float*>(pairs.row(y))[i];
        INFO("x" << channels << " row " << y << " value " << i << ": rows " << a << ", pairs "
                 << b);
        CHECK(std::isnan(a) == std::isnan(b));
        CHECK(std::isinf(a) == std::isinf(b));
        non_finite += !std::isfinite(a);
        if (std::isfinite(a)) CHECK(std::abs(a - b) <= 1e-5f);
      }
    CHECK(non_finite >= 2 * channels);  // at least the two pixels themselves
  }
}

TEST_CASE("bilateral: programs that flush denormals keep the colour table and its results",
          "[layout]") {
  // The __local table's keys are integers, which no flushing of denormals touches: with
  // -cl-denorms-are-zero, fast or unsafe math in the build options the rows layout and its pairs
  // keep the table, and the formula's results.
  const std::string selector = test::device()->info().is_gpu ? "gpu" : "cpu";
  for (const char* flush : {"-cl-denorms-are-zero", "-cl-fast-relaxed-math"}) {
    INFO(flush);
    clf::DeviceOptions options;
    options.build_options = flush;
    auto device = clf::Device::open(selector, options);
    CHECK_FALSE(device->info().fp32_denormals);
    CHECK(clf::Device::open(selector)->info().fp32_denormals ==
          test::device()->info().fp32_denormals);
    for (const char* pair_channels : {"0", "1"})  // the rows layout, then its pairs
      for (const int channels : {1, 3}) {
        INFO("pairs from " << pair_channels << " channels, x" << channels);
        clf::Tuning t = device->tuning();
        drop_one_channel_knobs(t);
        t.knobs["bilateral.outputs"] = "4";
        t.knobs["bilateral.rows_max_radius"] = "8";
        t.knobs["bilateral.lane_tables"] = "1";
        t.knobs["bilateral.pair_channels"] = pair_channels;
        device->set_tuning(t);
        const clf::Image in = test::random_image(45, 19, channels, clf::PixelType::u8, 23);
        clf::Pipeline p(device);
        p.add(test::registry(), "bilateral:d=7,sigma_color=40,sigma_space=2");
        clf::Image got;
        p.run(in, got);
        const std::string layout = p.filter(0).describe();
        CHECK_THAT(layout, Catch::Contains(pair_channels[0] == '0' ? "rows x4" : "pairs x4"));
        CHECK_THAT(layout, Catch::Contains("colour table"));
        const ref::Image want =
            ref::bilateral(test::to_ref(in), 3, 40, 2, ref::Border::reflect101, 0);
        CHECK(largest_difference(test::to_ref(got), want) <= 1.0);
      }
  }
}

TEST_CASE("unsharp in the blur's single pass equals the blur and the combine, every layout",
          "[layout]") {
  // The composed result (direct: two blur passes, then the combine) against each layout, the
  // tiled and blocked single passes fusing the rule into the blur's stores; strips of one row
  // give each layout's whole-image bits. Thresholds where the rule leaves pixels as they are.
  for (const int channels : {1, 3}) {
    const clf::Image in = test::random_image(83, 29, channels, clf::PixelType::f32, 17);
    for (const char* spec :
         {"unsharp:sigma=2,amount=1.5", "unsharp:sigma=3,amount=0.7,threshold=0.05",
          "unsharp:sigma=1.2,amount=2,border=wrap"}) {
      const clf::Image want = one_output_a_work_item(spec, in);
      // The layout in scope: the composed result, and the same bits in strips of one row.
      const auto check_layout = [&] {
        const clf::Image whole = test::run_chain({spec}, in);
        CHECK(largest_difference(whole, want) <= 1e-5);
        clf::RunOptions strips;
        strips.strip_rows = 1;
        CHECK(test::identical(test::run_chain({spec}, in, strips), whole));
      };
      int fused = 0;
      for (const auto& layout : test::layouts()) {
        INFO(spec << " x" << channels << " " << layout.name);
        test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                                 layout.columns_first);
        clf::Pipeline p(test::device());
        p.add(test::registry(), spec);
        fused += p.filter(0).describe().find("in the blur's pass") != std::string::npos;
        check_layout();
      }
      CHECK(fused >= 2);  // the tiled rows-first and columns-first passes at least
      {  // columns first in batches of 3 rows, as local memory cuts an entry's to the most that fit
        INFO(spec << " x" << channels << " columns first, batches of 3 rows");
        test::VariantScope scope(clf::Variant::tiled, 0, -1, true);
        clf::Tuning t = test::device()->tuning();
        t.separable_columns = {{0, 64, 3}};
        test::device()->set_tuning(t);
        clf::Pipeline p(test::device());
        p.add(test::registry(), spec);
        CHECK(p.filter(0).describe().find("columns first") != std::string::npos);
        check_layout();
      }
    }
  }
}

TEST_CASE("non-linear filters fuse in chains: the chain equals its filters one after another") {
  const clf::Image in = test::random_image(64, 37, 3, clf::PixelType::f32, 21);
  const std::vector<std::string> chain = {
      "median:ksize=5",    "morphology:op=open,ksize=3", "gaussian:sigma=1.5",
      "laplacian:ksize=3", "unsharp:sigma=1,amount=0.5", "bilateral:d=5"};
  clf::Image step = in;
  for (const std::string& spec : chain) step = test::run_chain({spec}, step);
  CHECK(test::identical(test::run_chain(chain, in), step));
  clf::RunOptions strips;
  strips.strip_rows = 3;
  CHECK(test::identical(test::run_chain(chain, in, strips), step));
}

TEST_CASE("morphology's default border: outside pixels never win, on a flat image too") {
  // A flat image stays flat under every operation with border=ignore (OpenCV's default): the
  // pixels outside are neither the image's value nor anything else.
  clf::Image in(31, 17, 1, clf::PixelType::f32);
  for (int y = 0; y < 17; ++y)
    for (int x = 0; x < 31; ++x) reinterpret_cast<float*>(in.row(y))[x] = 42.f;
  for (const char* op : {"erode", "dilate", "open", "close"})
    for (const char* shape : {"rect", "ellipse", "cross"}) {
      INFO(op << " " << shape);
      const clf::Image out =
          test::run_chain({std::string("morphology:ksize=9,op=") + op + ",shape=" + shape}, in);
      CHECK(largest_difference(out, in) == 0);
    }
  for (const char* op : {"gradient", "tophat", "blackhat"}) {
    const clf::Image out = test::run_chain({std::string("morphology:ksize=9,op=") + op}, in);
    for (int y = 0; y < 17; ++y)
      for (int x = 0; x < 31; ++x) CHECK(reinterpret_cast<const float*>(out.row(y))[x] == 0.f);
  }
}

TEST_CASE("the new filters refuse bad parameters by name") {
  const std::pair<const char*, const char*> cases[] = {
      {"median:ksize=4", "median: ksize must be odd"},
      {"median:ksize=3,radius=1", "median: give ksize or radius"},
      {"rank:percentile=101", "percentile"},
      {"morphology:op=thin", "op"},
      {"morphology:shape=diamond", "shape"},
      {"morphology:radius=200,iterations=2", "radius x iterations"},
      {"bilateral:sigma_color=-1", "sigma_color"},
      {"bilateral:sigma_space=0", "sigma_space"},
      {"bilateral:sigma_space=50", "sigma_space=50 with d=0 makes a disc of radius 75"},
      {"laplacian:ksize=9", "ksize"},
      {"unsharp:amount=-1", "amount"},
      {"gaussian:border=ignore", "border"},  // ignore is for extrema only
      {"median:method=network,ksize=11", "method=network takes ksize up to 9"},
      {"morphology:op=open,method=window", "method=window takes erode or dilate of one element"},
      {"morphology:op=erode,ksize=65,method=window", "up to 63x63 (got op=erode, ksize 65)"},
  };
  for (const auto& [spec, message] : cases) {
    INFO(spec);
    clf::Pipeline p(test::device());
    REQUIRE_THROWS_WITH(p.add(test::registry(), spec), Catch::Contains(message));
  }
  // A way that needs u8 data says so when the image is not.
  const clf::Image f32 = test::random_image(9, 9, 1, clf::PixelType::f32, 1);
  REQUIRE_THROWS_WITH(
      test::run_chain({"median:ksize=3,method=histogram"}, f32),
      Catch::Contains("method=histogram counts u8 or u16 levels or half values; its input is f32"));
}

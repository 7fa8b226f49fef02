// Every filter against the plain-loop reference: border modes x pixel types x channel counts x
// kernel variants, odd sizes, radius larger than the image, rank-1 detection.
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>

#include "clf/correlate.hpp"
#include "support.hpp"

using ref::Border;

namespace {

struct FilterCase {
  std::string spec;
  std::function<ref::Image(const ref::Image&, Border, double border_value)> reference;
  double kernel_l1 = 1;  // sum of |weights|: the scale of float rounding in the result
};

// OpenCV's size for a float Gaussian of sigma (getGaussianKernel's documentation, and
// createGaussianKernels): ksize = round(8 sigma + 1), made odd. The README promises that kernel.
int opencv_gaussian_radius(double sigma) { return (int(std::lrint(sigma * 8 + 1)) | 1) / 2; }

ref::Image separable(const ref::Image& in, const std::vector<double>& kx,
                     const std::vector<double>& ky, Border b, double bv) {
  return ref::correlate(in, ref::outer(ky, kx), int(kx.size()), int(ky.size()), b, bv);
}

std::vector<FilterCase> filter_cases() {
  const std::vector<double> mat3 = {1, 2, 0, -1, 0.5, 3, 0, 1, -2};
  std::vector<double> binom9 = {1, 8, 28, 56, 70, 56, 28, 8, 1}, tri9 = {1, 2, 3, 4, 5, 4, 3, 2, 1};
  std::string rank1_9;
  for (size_t r = 0; r < 9; ++r) {
    rank1_9 += r ? ";" : "";
    for (size_t c = 0; c < 9; ++c)
      rank1_9 += (c ? "," : "") + std::to_string(int(binom9[r] * tri9[c]));
  }
  return {
      {"sobel",
       [](auto& in, Border b, double bv) {
         // magnitude over the reference's own Gx, Gy (border through correlate)
         const auto gx =
             ref::correlate(in, ref::outer(ref::sobel_1d(0, 3), ref::sobel_1d(1, 3)), 3, 3, b, bv);
         const auto gy =
             ref::correlate(in, ref::outer(ref::sobel_1d(1, 3), ref::sobel_1d(0, 3)), 3, 3, b, bv);
         ref::Image out = in;
         for (size_t i = 0; i < out.values.size(); ++i)
           out.values[i] = std::hypot(gx.values[i], gy.values[i]);
         return out;
       },
       8},
      {"sobel:mode=x,ksize=5,scale=0.5,delta=0.25",
       [](auto& in, Border b, double bv) {
         auto out = separable(in, ref::sobel_1d(1, 5), ref::sobel_1d(0, 5), b, bv);
         for (double& v : out.values) v = v * 0.5 + 0.25;
         return out;
       },
       48},
      {"sobel:mode=y,dy=2,ksize=7",
       [](auto& in, Border b, double bv) {
         return separable(in, ref::sobel_1d(0, 7), ref::sobel_1d(2, 7), b, bv);
       },
       768},
      {"gaussian:sigma=1.5",
       [](auto& in, Border b, double bv) {
         const auto g = ref::gaussian_1d(1.5, opencv_gaussian_radius(1.5));
         return separable(in, g, g, b, bv);
       }},
      {"gaussian:sigma_x=0.8,sigma_y=2,radius=3",
       [](auto& in, Border b, double bv) {
         return separable(in, ref::gaussian_1d(0.8, 3), ref::gaussian_1d(2, 3), b, bv);
       }},
      // method=fast: the multirate blur, its kernel at each pixel from its definition (every 2
      // pixels along x, every 4 down y), applied to the border-extended image.
      {"gaussian:sigma_x=5.17,sigma_y=9,method=fast",
       [](auto& in, Border b, double bv) {
         return ref::correlate_phased(in, ref::multirate_gaussian_1d(5.17),
                                      ref::multirate_gaussian_1d(9), b, bv);
       }},
      {"box:radius=2",
       [](auto& in, Border b, double bv) {
         return ref::correlate(in, std::vector<double>(25, 1.0 / 25), 5, 5, b, bv);
       }},
      {"box:size=9,normalize=false",
       [](auto& in, Border b, double bv) {
         return ref::correlate(in, std::vector<double>(81, 1.0), 9, 9, b, bv);
       },
       81},
      {"convolve:kernel=1,2,0;-1,0.5,3;0,1,-2",
       [mat3](auto& in, Border b, double bv) { return ref::correlate(in, mat3, 3, 3, b, bv); },
       10.5},
      {"convolve:kernel=1,2,0;-1,0.5,3;0,1,-2,flip=true,delta=0.5",
       [mat3](auto& in, Border b, double bv) {
         const std::vector<double> flipped(mat3.rbegin(), mat3.rend());
         return ref::correlate(in, flipped, 3, 3, b, bv, 0.5);
       },
       10.5},
      {"convolve:kernel=" + rank1_9 + ",normalize=true",
       [binom9, tri9](auto& in, Border b, double bv) {
         double sum = 0;
         for (double r : binom9)
           for (double c : tri9) sum += r * c;
         auto k = ref::outer(binom9, tri9);
         for (double& v : k) v /= sum;
         return ref::correlate(in, k, 9, 9, b, bv);
       }},
  };
}

const char* const borders[] = {"replicate", "reflect", "reflect101", "wrap", "constant"};

// Runs the case with that border on `device` (the shared test device by default) and checks it
// against the reference; returns its output.
clf::Image check_case(const FilterCase& fc, const std::string& border, const clf::Image& in,
                      const std::shared_ptr<clf::Device>& device = test::device()) {
  const double border_value = in.type() == clf::PixelType::u8    ? 7
                              : in.type() == clf::PixelType::u16 ? 300
                                                                 : 0.25;
  std::string spec =
      fc.spec + (fc.spec.find(':') == std::string::npos ? ":" : ",") + "border=" + border;
  if (border == "constant") spec += ",border_value=" + std::to_string(border_value);
  const clf::Tuning& t = device->tuning();
  INFO(spec << " on " << in.width() << "x" << in.height() << "x" << in.channels() << " "
            << clf::pixel_type_name(in.type()) << ", " << clf::variant_name(t.variant)
            << " separable rows " << t.separable_rows << " vector width " << t.vector_width);
  clf::Pipeline pipeline(device);
  pipeline.add(test::registry(), spec);
  clf::Image out;
  pipeline.run(in, out);
  test::check_matches(out,
                      fc.reference(test::to_ref(in), ref::border_from_name(border), border_value),
                      fc.kernel_l1);
  return out;
}

}  // namespace

TEST_CASE("every filter matches the reference for every border, type, channel count and variant") {
  const auto cases = filter_cases();
  for (const auto& layout : test::layouts()) {
    test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                             layout.columns_first);
    for (auto type :
         {clf::PixelType::f32, clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f16})
      for (int channels : {1, 3, 4}) {
        const clf::Image in = test::random_image(37, 23, channels, type, unsigned(channels));
        for (const auto& fc : cases)
          for (const char* border : borders) check_case(fc, border, in);
      }
  }
}

TEST_CASE("the device as it ships: every filter and border on the tuning it comes with") {
  // The other cases force layouts (and method=fast from sigma 5) on the shared device. This one
  // opens the device again, as the CLI and Python do, and keeps the tuning it comes with: each
  // device type's table runs as it ships (PoCL here, a GPU in a device run). method=fast below
  // a device's crossover is the exact kernel by design, so its case here is past every crossover.
  const clf::DeviceInfo& info = test::device()->info();
  const auto shipped = clf::Device::open(std::to_string(info.platform_index) + ":" +
                                         std::to_string(info.device_index));
  std::vector<FilterCase> cases;
  for (FilterCase& fc : filter_cases())
    if (fc.spec.find("method=fast") == std::string::npos) cases.push_back(std::move(fc));
  cases.push_back(
      {"gaussian:sigma_x=9.5,sigma_y=17,method=fast", [](auto& in, Border b, double bv) {
         return ref::correlate_phased(in, ref::multirate_gaussian_1d(9.5),
                                      ref::multirate_gaussian_1d(17), b, bv);
       }});
  for (auto type : {clf::PixelType::f32, clf::PixelType::u8, clf::PixelType::f16})
    for (int channels : {1, 3}) {
      // Wide enough for a GPU's tiles and vectors, with a partial tile at the edges.
      const clf::Image in = test::random_image(301, 67, channels, type, unsigned(11 + channels));
      for (const auto& fc : cases)
        for (const char* border : borders) check_case(fc, border, in, shipped);
    }
}

TEST_CASE("odd sizes: 1x1, single rows and columns, prime widths, radius larger than the image") {
  const auto cases = filter_cases();
  for (const auto& layout : test::layouts()) {
    test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                             layout.columns_first);
    for (auto [w, h] : {std::pair{1, 1}, {1, 9}, {9, 1}, {7, 3}, {131, 5}, {1000, 3}, {2, 2}}) {
      const clf::Image in = test::random_image(w, h, 1, clf::PixelType::f32, 3);
      for (const auto& fc : cases)
        for (const char* border : borders) check_case(fc, border, in);
    }
  }
}

TEST_CASE("a large radius on a small image still matches (gaussian sigma 3 = radius 12 on 7x3)") {
  const clf::Image in = test::random_image(7, 3, 2, clf::PixelType::f32, 5);
  const auto g = ref::gaussian_1d(3, 12);
  for (const char* border : {"reflect101", "reflect", "replicate", "wrap"}) {
    const clf::Image out = test::run_chain({std::string("gaussian:sigma=3,border=") + border}, in);
    test::check_matches(out, separable(test::to_ref(in), g, g, ref::border_from_name(border), 0));
  }
}

TEST_CASE("columns first at the GPUs' shape: 256 columns, 32-row groups, batches of 16",
          "[layout]") {
  // The shape core/src/device.cpp gives GPUs, whose register windows are 2 r + 16 rows long, on
  // an image 3 groups wide and 2 tall, the last of each partial (the lower groups' first batch
  // ends past the image's last row, their second never runs): radii 5, 12 and 16, every border.
  test::VariantScope scope(clf::Variant::tiled, 0, -1, true);
  clf::Tuning t = test::device()->tuning();
  t.separable_columns = {{0, 256, 16}};
  t.separable_columns_tile_rows = 32;
  t.radius_arg_above = -1;
  test::device()->set_tuning(t);
  const clf::Image in = test::random_image(530, 45, 2, clf::PixelType::f32, 13);
  const auto box = std::vector<double>(11, 1.0 / 11);
  const std::pair<std::string, std::vector<double>> cases[] = {
      {"box:radius=5", box},
      {"gaussian:sigma=3", ref::gaussian_1d(3, opencv_gaussian_radius(3))},
      {"gaussian:sigma=4", ref::gaussian_1d(4, opencv_gaussian_radius(4))}};
  for (const auto& [spec, taps] : cases)
    for (const char* border : borders) {
      INFO(spec << " border " << border);
      const bool constant = std::string(border) == "constant";
      clf::Pipeline p(test::device());
      p.add(test::registry(), spec + ",border=" + border + (constant ? ",border_value=0.25" : ""));
      REQUIRE_THAT(p.filter(0).describe(), Catch::Contains("columns first"));
      clf::Image out;
      p.run(in, out);
      test::check_matches(out, separable(test::to_ref(in), taps, taps,
                                         ref::border_from_name(border), constant ? 0.25 : 0));
    }
}

TEST_CASE("method=fast's kernels stay within the stated bound of OpenCV's, sigma 4 to 128") {
  // From the definitions alone: at every phase, the 1-D multirate kernel's L1 distance from
  // OpenCV's exact one. The 2-D distance is at most the sum of the axes' (all weights positive,
  // each kernel summing to 1), so half the stated 0.025% bounds each axis.
  double worst = 0, worst_sigma = 0;
  for (double sigma = 4; sigma <= 128; sigma += sigma < 16 ? 0.25 : sigma < 64 ? 1 : 4) {
    const int r = opencv_gaussian_radius(sigma);
    const std::vector<double> exact = ref::gaussian_1d(sigma, r);
    for (const std::vector<double>& k : ref::multirate_gaussian_1d(sigma)) {
      const int h = int(k.size() / 2);
      double l1 = 0;
      for (int n = -std::max(h, r); n <= std::max(h, r); ++n) {
        const double a = std::abs(n) <= h ? k[size_t(n + h)] : 0;
        const double b = std::abs(n) <= r ? exact[size_t(n + r)] : 0;
        l1 += std::abs(a - b);
      }
      if (l1 > worst) worst = l1, worst_sigma = sigma;
    }
  }
  INFO("worst 1-D L1 distance " << worst << " at sigma " << worst_sigma);
  CHECK(worst <= 0.000125);
  CHECK(worst > 0.0001);  // the figure the docs state (1.18e-4 at sigma 36)
}

TEST_CASE("gaussian method=fast stays within its stated bound of the exact blur, at any sigma") {
  // --list-filters states 0.025% of the image's value range: the L1 norm of the difference between
  // the 2-D kernels is at most the sum of the axes' 1-D ones, whose worst over sigma in [4, 128]
  // is 1.18e-4 at sigma 36 (the test above); float rounding fits in the rest. The fast kernel at
  // each pixel is checked against its definition in filter_cases.
  for (const double sigma : {5.0, 7.3, 20.0, 61.0}) {
    const clf::Image in = test::random_image(97, 71, 2, clf::PixelType::f32, 8);
    const std::string s = std::to_string(sigma);
    for (const char* border : {"reflect101", "wrap", "constant"}) {
      const std::string tail = std::string(",border=") + border;
      const clf::Image fast = test::run_chain({"gaussian:sigma=" + s + ",method=fast" + tail}, in);
      const clf::Image exact = test::run_chain({"gaussian:sigma=" + s + tail}, in);
      double worst = 0;
      for (size_t i = 0; i < size_t(97 * 71 * 2); ++i)
        worst = std::max(worst, std::abs(test::value(fast, i) - test::value(exact, i)));
      INFO("sigma " << sigma << ", " << border << ": worst difference " << worst);
      CHECK(worst <= 0.00025);
      CHECK(worst > 0);  // not the exact path in disguise
    }
  }
  // Below sigma 5 the exact kernel is as cheap: method=fast is exact there, and says so.
  clf::Pipeline small(test::device());
  small.add(test::registry(), "gaussian:sigma=2,method=fast");
  CHECK_THAT(small.filter(0).describe(), Catch::Contains("exact below sigma 5"));
  clf::Pipeline big(test::device());
  big.add(test::registry(), "gaussian:sigma=20,sigma_y=30,method=fast");
  CHECK_THAT(big.filter(0).describe(), Catch::Contains("fast: multirate"));
  CHECK_THROWS_WITH(big.add(test::registry(), "gaussian:sigma=20,radius=9,method=fast"),
                    Catch::Contains("method=fast takes none"));
  // A device whose exact kernel is faster up to a larger sigma takes it there.
  test::TuningScope scope;
  clf::Tuning t = test::device()->tuning();
  t.knobs["gaussian.fast_min_sigma"] = "24";
  test::device()->set_tuning(t);
  clf::Pipeline below(test::device()), above(test::device());
  below.add(test::registry(), "gaussian:sigma=20,sigma_y=30,method=fast");
  CHECK_THAT(below.filter(0).describe(), Catch::Contains("exact below sigma 24 on this device"));
  above.add(test::registry(), "gaussian:sigma=24,method=fast");
  CHECK_THAT(above.filter(0).describe(), Catch::Contains("fast: multirate"));
}

TEST_CASE("every variant gives the same answer") {
  const clf::Image in = test::random_image(300, 41, 3, clf::PixelType::f32, 9);
  for (const auto& fc : filter_cases()) {
    std::vector<clf::Image> results;
    for (const auto& layout : test::layouts()) {
      test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                               layout.columns_first);
      results.push_back(test::run_chain({fc.spec}, in));
    }
    INFO(fc.spec);
    for (size_t i = 1; i < results.size(); ++i) {
      INFO(test::layouts()[i].name << " against " << test::layouts()[0].name);
      test::check_matches(results[i], test::to_ref(results[0]), fc.kernel_l1);
    }
  }
}

TEST_CASE("poisoned planes: every filter and variant reads only what was written") {
  // RunOptions::poison fills each strip's planes with NaN first (see test_nonlinear).
  const clf::Image in = test::random_image(70, 29, 3, clf::PixelType::f32, 10);
  for (const auto& fc : filter_cases())
    for (const auto& layout : test::layouts()) {
      INFO(fc.spec << ", " << layout.name);
      test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                               layout.columns_first);
      test::check_poisoned({fc.spec}, in, 6);
    }
  // The FFT path's blocks: their padding must be written, not found zero (one strip: strips
  // give its bits only in multiples of its block rows).
  std::vector<double> k;
  test::check_poisoned({"convolve:kernel=" + test::full_rank_kernel(9, 7, k) + ",method=fft"}, in,
                       0);
}

TEST_CASE("taps of weight 0 are left out, as OpenCV's filter2D leaves them out") {
  // An inf pixel in a field of 1s under a 3x3 Laplacian: the 5 outputs whose nonzero taps see it
  // are inf or -inf; the 4 diagonal ones, where it sits under a 0 weight, stay 0 (0 * inf would
  // make them NaN). The same window 9x9 and 7x5 (zeros around it), 5x5 with zeros inside.
  clf::Image in = test::random_image(12, 10, 1, clf::PixelType::f32, 3);
  for (int i = 0; i < 12 * 10; ++i) in.pixels<float>()[i] = 1.f;
  in.pixels<float>()[4 * 12 + 5] = std::numeric_limits<float>::infinity();
  const std::vector<std::pair<std::string, int>> kernels = {
      {"0,1,0;1,-4,1;0,1,0", 4},
      {"0,0,0,0,0,0,0,0,0;0,0,0,0,0,0,0,0,0;0,0,0,0,0,0,0,0,0;0,0,0,0,1,0,0,0,0;"
       "0,0,0,1,-4,1,0,0,0;0,0,0,0,1,0,0,0,0;0,0,0,0,0,0,0,0,0;0,0,0,0,0,0,0,0,0;"
       "0,0,0,0,0,0,0,0,0",
       76},
      {"0,0,0,0,0,0,0;0,0,0,1,0,0,0;0,0,1,-4,1,0,0;0,0,0,1,0,0,0;0,0,0,0,0,0,0", 30},
      {"1,0,0,0,0;0,0,1,0,0;0,1,-4,1,0;0,0,1,0,0;0,0,0,0,0", 19}};
  for (const auto& [kernel, zeros] : kernels)
    for (const auto& layout : test::layouts()) {
      test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                               layout.columns_first);
      clf::Pipeline p(test::device());
      p.add(test::registry(), "convolve:kernel=" + kernel + ",method=direct");
      INFO(kernel << ", " << layout.name << ": " << p.filter(0).describe());
      CHECK_THAT(p.filter(0).describe(),
                 Catch::Contains(std::to_string(zeros) + " zero taps left out"));
      clf::Image out;
      p.run(in, out);
      const bool corner = kernel[0] == '1';  // the 5x5 also sees the inf 2 rows up, 2 left
      for (int y = 0; y < 10; ++y)
        for (int x = 0; x < 12; ++x) {
          const float v = out.pixels<float>()[y * 12 + x];
          const int dx = x - 5, dy = y - 4;
          const bool sees = std::abs(dx) + std::abs(dy) <= 1 || (corner && dx == 2 && dy == 2);
          INFO("(" << x << ", " << y << ") = " << v);
          CHECK(std::isinf(v) == sees);
          if (!sees) CHECK(v == (corner ? 1.f : 0.f));
        }
    }
}

TEST_CASE("a rank-1 matrix takes the separable path, a full-rank one does not", "[layout]") {
  clf::Pipeline rank1(test::device()), full(test::device());
  rank1.add(test::registry(), "convolve:kernel=1,2,1;2,4,2;1,2,1");
  full.add(test::registry(), "convolve:kernel=1,2,1;2,4,2;1,2,2");
  CHECK(rank1.filter(0).describe().find("rank 1: separable") != std::string::npos);
  CHECK(full.filter(0).describe().find("rank 1") == std::string::npos);
}

TEST_CASE(
    "a full-rank 31x31 kernel matches on every layout: blocked up to radius 16, 4 vectors per "
    "item",
    "[layout]") {
  std::string kernel;
  for (int r = 0; r < 31; ++r)
    for (int c = 0; c < 31; ++c)
      kernel += (c ? "," : r ? ";" : "") + std::to_string((r * 13 + c * 7) % 11 - 5);
  // 150 columns: CPUs' 4 x 16 outputs per work-item, then a partial vector and single outputs.
  const clf::Image in = test::random_image(150, 37, 2, clf::PixelType::f32, 13);
  const clf::Matrix m = clf::parse_matrix(kernel, "k");
  double l1 = 0;
  for (double v : m.values) l1 += std::abs(v);
  for (const auto& layout : test::layouts()) {
    test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                             layout.columns_first);
    clf::Tuning t = test::device()->tuning();
    t.blocked_max_radius = 16;
    test::device()->set_tuning(t);
    clf::Pipeline p(test::device());
    p.add(test::registry(), "convolve:kernel=" + kernel + ",border=reflect,method=direct");
    INFO(layout.name << ": " << p.filter(0).describe());
    if (layout.vector_width == 4) CHECK_THAT(p.filter(0).describe(), Catch::Contains("direct 4x"));
    const clf::Tuning& now = test::device()->tuning();
    if (now.variant == clf::Variant::direct && now.vector_width == 16 && now.vectors == 4)
      CHECK_THAT(p.filter(0).describe(), Catch::Contains("direct 4 vectors of 16"));
    clf::Image out;
    p.run(in, out);
    test::check_matches(out, ref::correlate(test::to_ref(in), m.values, 31, 31, Border::reflect),
                        l1);
  }
}

TEST_CASE("blocked 2-D windows take the tuning's rows per work-item by their row radius",
          "[layout]") {
  // GPUs' table has bands (6 rows at radius 3 and 4, 4 from 5, 8 from 9); this one has a band
  // too, and every block height leaves a partial last block on 37 rows.
  test::VariantScope scope(clf::Variant::direct, 4);
  clf::Tuning t = test::device()->tuning();
  t.tile_height = 2;
  t.block_rows = {{2, 5}, {3, 3}};
  test::device()->set_tuning(t);
  const clf::Image in = test::random_image(45, 37, 1, clf::PixelType::f32, 71);
  for (const auto& [w, h, rows] : std::vector<std::tuple<int, int, int>>{
           {3, 3, 2}, {7, 3, 2}, {5, 5, 5}, {3, 7, 3}, {9, 9, 3}}) {
    std::vector<double> values;
    const std::string kernel = test::full_rank_kernel(w, h, values);
    clf::Pipeline p(test::device());
    p.add(test::registry(), "convolve:kernel=" + kernel + ",border=reflect");
    INFO(w << "x" << h << ": " << p.filter(0).describe());
    CHECK_THAT(p.filter(0).describe(), Catch::Contains("direct 4x" + std::to_string(rows) + "/"));
    clf::Image out;
    p.run(in, out);
    test::check_matches(out, ref::correlate(test::to_ref(in), values, w, h, Border::reflect),
                        test::l1_norm(values));
  }
}

TEST_CASE("past the tuning's radius, one vector program serves every radius and matches",
          "[layout]") {
  // CPUs' tuning: radii past 12 are kernel arguments. Two sigmas of different radii after a
  // first one build no program of their own, and each matches the reference.
  test::VariantScope scope(clf::Variant::direct, 16);
  clf::Tuning t = test::device()->tuning();
  t.radius_arg_above = 12;
  t.vectors = 4;
  t.vectors_min_taps = 49;
  test::device()->set_tuning(t);
  const clf::Image in = test::random_image(90, 41, 1, clf::PixelType::f32, 17);
  auto run = [&](double sigma) {
    clf::Pipeline p(test::device());
    p.add(test::registry(), "gaussian:sigma=" + std::to_string(sigma) + ",border=reflect101");
    CHECK_THAT(p.filter(0).describe(), Catch::Contains("radii as arguments"));
    clf::Image out;
    p.run(in, out);
    const int r = opencv_gaussian_radius(sigma);
    const auto g = ref::gaussian_1d(sigma, r);
    test::check_matches(out, separable(test::to_ref(in), g, g, Border::reflect101, 0));
  };
  run(4.1);  // radius 16
  const size_t built = test::device()->programs_built();
  run(4.9);  // radius 20
  run(5.6);  // radius 23 (47 taps a pass: the same one-vector program)
  CHECK(test::device()->programs_built() == built);
}

TEST_CASE("kernels past the constant-memory and local-memory limits still run") {
  // 101x101 weights (40 KiB) and a window too wide for the staged tile on most devices.
  std::string row, kernel;
  for (int c = 0; c < 101; ++c) row += (c ? "," : "") + std::to_string((c * 7) % 5 - 2);
  for (int r = 0; r < 101; ++r) kernel += (r ? ";" : "") + row;
  kernel[0] = '3';  // break rank 1
  const clf::Image in = test::random_image(40, 30, 1, clf::PixelType::f32, 11);
  const clf::Matrix m = clf::parse_matrix(kernel, "k");
  for (const auto& layout : test::layouts()) {
    test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                             layout.columns_first);
    const clf::Image out = test::run_chain({"convolve:kernel=" + kernel}, in);
    const ref::Image want =
        ref::correlate(test::to_ref(in), m.values, 101, 101, Border::reflect101);
    const double scale = 1e3;  // sums of ~10^4 terms: compare relative to their size
    ref::Image scaled = want;
    clf::Image got = out;
    for (double& v : scaled.values) v /= scale;
    for (size_t i = 0; i < 40 * 30; ++i) got.pixels<float>()[i] /= float(scale);
    test::check_matches(got, scaled);
  }
}

TEST_CASE("the tiled single pass with radii as arguments: one program, the literal program's bits",
          "[layout]") {
  const clf::Image in = test::random_image(70, 45, 2, clf::PixelType::f32, 31);
  test::VariantScope tiled(clf::Variant::tiled);
  auto run = [&](const std::string& spec, int arg_above, std::string* how = nullptr) {
    clf::Tuning t = test::device()->tuning();
    t.radius_arg_above = arg_above;
    test::device()->set_tuning(t);
    clf::Pipeline p(test::device());
    p.add(test::registry(), spec);
    if (how) *how = p.filter(0).describe();
    clf::Image out;
    p.run(in, out);
    return out;
  };
  // Every alignment of the row window (radii 5, 8, 14, 9, 11 mod 4), rows of 3 taps and of 1 (a
  // 1x51 column).
  std::string column = "convolve:kernel=1";
  for (int i = 1; i < 51; ++i) column += ";" + std::to_string(i % 7 - 3);
  for (const std::string& spec :
       {std::string("gaussian:sigma=1.2,border=reflect"),
        std::string("gaussian:sigma_x=2,sigma_y=3.5,border=wrap"),
        std::string("box:radius=9,border=constant,border_value=0.5"),
        std::string("gaussian:sigma_x=0.3,sigma_y=4,border=replicate"), column}) {
    std::string how;
    const clf::Image literal = run(spec, -1), any = run(spec, 0, &how);
    INFO(spec << ": " << how);
    CHECK_THAT(how, Catch::Contains("radii as arguments"));
    CHECK(test::identical(any, literal));
  }
  // A radius not built before reuses the program.
  run("gaussian:sigma=2.2", 0);
  const size_t built = test::device()->programs_built();
  std::string how;
  const clf::Image out = run("gaussian:sigma=2.7,border=reflect101", 0, &how);
  CHECK_THAT(how, Catch::Contains("radii as arguments"));
  CHECK(test::device()->programs_built() == built);
  const int r = opencv_gaussian_radius(2.7);
  const auto g = ref::gaussian_1d(2.7, r);
  test::check_matches(out, separable(test::to_ref(in), g, g, Border::reflect101, 0));
}

TEST_CASE("the staging helper's own loads give the bits of its async copies, and the reference's") {
  // Tuning::stage_with_loads: the tiled 2-D kernels (the tests' 32x4 tiles) and Sobel's stage
  // their windows with work-items' float4 loads instead of async_work_group_copy. Groups of 16
  // work-items take a window row (8 float4s and the halo's) and more at each step, groups of 4
  // part of one, as the GPUs' 64 do their 62 and the halo's; windows that the plane's edges cut
  // (odd widths and heights, 1 row) are among them.
  const auto cases = filter_cases();
  test::VariantScope scope(clf::Variant::tiled);
  for (int group : {16, 4})
    for (auto [w, h] : {std::pair{37, 23}, {131, 5}, {9, 1}})
      for (const auto& fc : cases) {
        const clf::Image in = test::random_image(w, h, 3, clf::PixelType::f32, unsigned(w + h));
        clf::Image out[2];
        for (int loads = 0; loads < 2; ++loads) {
          clf::Tuning t = test::device()->tuning();
          t.group_width = group;
          t.stage_with_loads = loads == 1;
          test::device()->set_tuning(t);
          out[loads] = check_case(fc, "reflect", in);
        }
        INFO(fc.spec << " on " << w << "x" << h << ", groups of " << group);
        CHECK(test::identical(out[0], out[1]));
      }
}

TEST_CASE("weights passed by value give the bits of weights in a buffer, on every layout",
          "[layout]") {
  const clf::Image in = test::random_image(70, 45, 2, clf::PixelType::f32, 37);
  auto run = [&](const std::string& spec, bool by_value, std::string* how) {
    clf::Tuning t = test::device()->tuning();
    t.taps_by_value = by_value;
    t.radius_arg_above = -1;  // literal radii: the structs are sized by them
    test::device()->set_tuning(t);
    clf::Pipeline p(test::device());
    p.add(test::registry(), spec);
    *how = p.filter(0).describe();
    clf::Image out;
    p.run(in, out);
    return out;
  };
  // Separable: rows of 2 to 9 float4s (the row pass takes 8 outputs per work-item up to 8);
  // 2-D: 7x7, and a 9x9 with zero taps.
  std::string nine = "convolve:kernel=";
  for (int i = 0; i < 81; ++i)
    nine += (i == 0 ? "" : i % 9 ? "," : ";") + std::to_string(i % 5 == 2 ? 0 : i % 7 - 3);
  const std::vector<std::string> specs = {"gaussian:sigma=1.2,border=reflect",
                                          "box:radius=9,border=constant,border_value=0.5",
                                          "gaussian:sigma_x=4,sigma_y=2,border=wrap",
                                          "gaussian:sigma=2.5",
                                          "box:radius=3",
                                          nine};
  for (int layout = 0; layout < 2; ++layout) {
    test::VariantScope scope(layout == 0 ? clf::Variant::tiled : clf::Variant::direct,
                             layout == 0 ? 0 : 4, layout == 0 ? -1 : 3);
    for (const std::string& spec : specs) {
      std::string how_value, how_buffer;
      const clf::Image value = run(spec, true, &how_value), buffer = run(spec, false, &how_buffer);
      INFO(spec.substr(0, 40) << ": " << how_value << " / " << how_buffer);
      CHECK_THAT(how_buffer, !Catch::Contains("weights by value"));
      // The one-output and vector kernels keep their buffers.
      if (how_value.find("single pass, direct x") == std::string::npos &&
          how_value.find("2-pass") == std::string::npos)
        CHECK_THAT(how_value, Catch::Contains("weights by value"));
      CHECK(test::identical(value, buffer));
    }
  }
}

TEST_CASE("separable kernels run in one pass where the tuning says so, else in two", "[layout]") {
  auto describe = [](const std::string& spec) {
    clf::Pipeline p(test::device());
    p.add(test::registry(), spec);
    return p.filter(0).describe();
  };
  {
    test::VariantScope one_pass(clf::Variant::direct, 4, 3);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, direct 4x3/8"));
    CHECK_THAT(describe("box:radius=8"), Catch::Contains("separable single pass"));
    CHECK_THAT(describe("box:radius=9"), Catch::Contains("separable 2-pass"));  // past the radius
    CHECK_THAT(describe("box:radius=3"),
               Catch::Contains("single pass, direct 4x2/8"));  // 7x7 in 2-D
  }
  {
    // Tiled: the row results of 32 x 12 tiles stay in local memory, any radius that fits it.
    test::VariantScope tiled(clf::Variant::tiled);
    clf::Tuning t = test::device()->tuning();
    t.radius_arg_above = -1;  // a program per radius (GPUs' default up to radius 32)
    test::device()->set_tuning(t);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, tiled 32x12/24"));
    CHECK_THAT(describe("gaussian:sigma=20"),
               Catch::Contains("separable single pass, tiled 32x12/24"));
    CHECK_THAT(describe("box:radius=3"), Catch::Contains("single pass, tiled 32x"));  // 7x7 in 2-D
    // Past radius_arg_above (CPUs' default: 12) the radii are arguments and the tile's rows of
    // work-items a multiple of 4, or 1 or 2: 2 rows, not 3.
    t.radius_arg_above = 12;
    test::device()->set_tuning(t);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, tiled 32x12/24"));
    CHECK_THAT(describe("gaussian:sigma=20"),
               Catch::Contains("separable single pass, tiled 32x8/16, radii as arguments"));
    // Literal radii may take tiles of their own height (GPUs: 128 rows, 256 as arguments).
    t.separable_literal_tile_rows = 4;
    test::device()->set_tuning(t);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, tiled 32x4/8"));
    CHECK_THAT(describe("gaussian:sigma=20"),
               Catch::Contains("separable single pass, tiled 32x8/16, radii as arguments"));
    // Radii as arguments may take rows per work-item of their own (GPUs: 5, literal radii 8).
    t.separable_arg_block_rows = 1;
    test::device()->set_tuning(t);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, tiled 32x4/8"));
    CHECK_THAT(describe("gaussian:sigma=20"),
               Catch::Contains("separable single pass, tiled 32x12/"));  // 12 rows of 1
  }
  {
    // Columns first (the tests' 64-column groups of 6 rows, batches of 2): a group stores
    // the columns its halo leaves, 64 - 2 x 8 at radius 6 (sigma 1.5), 64 - 2 x 12 at radius
    // 12; literal radii only, and radii whose halo leaves no pair of float4 columns take rows
    // first.
    test::VariantScope columns(clf::Variant::tiled, 0, -1, true);
    clf::Tuning t = test::device()->tuning();
    t.radius_arg_above = 12;
    test::device()->set_tuning(t);
    CHECK_THAT(describe("gaussian:sigma=1.5"),
               Catch::Contains("separable single pass, columns first 48x6/32"));
    CHECK_THAT(describe("box:radius=12"),
               Catch::Contains("separable single pass, columns first 40x6/32"));
    CHECK_THAT(describe("gaussian:sigma=4"), Catch::Contains("tiled 32x8/16, radii as arguments"));
    t.radius_arg_above = -1;
    test::device()->set_tuning(t);
    CHECK_THAT(describe("box:radius=28"),
               Catch::Contains("separable single pass, columns first 8x6/32"));
    CHECK_THAT(describe("box:radius=29"), Catch::Contains("separable single pass, tiled 32x12/24"));
  }
  // Fitting tiles into 48 KiB of local memory, 1024 work-items at most, from 128 x 128 tiles of
  // 8-row blocks: sigma 3 keeps the width (88 row results for 64 outputs); sigma 20's 160 halo
  // rows narrow it to 32 columns to be tall enough; a radius of 200 fits no tile.
  clf::Tuning t;
  t.separable_tile_width = 128;
  t.separable_tile_rows = 128;
  t.separable_block_rows = 8;
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 1024, 12).describe() == "tiled 128x64/256");
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 1024, 80).describe() == "tiled 32x216/216");
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 1024, 200).variant == clf::Variant::direct);
  // 64 work-items: 128 x 16 would repeat 2.5x the row work; 64 x 32 repeats 1.75x.
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 64, 12).describe() == "tiled 64x32/64");
  // Radius 180 from 32 x 256 tiles: 32 columns leave room for 16 rows (23.5x the row work); where
  // the tuning allows 16 columns, 392 rows (1.92x).
  t.separable_tile_width = 32;
  t.separable_tile_rows = 256;
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 1024, 180).describe() == "tiled 32x16/16");
  t.separable_min_tile_width = 16;
  CHECK(clf::fit_separable_tiling(t, 48 << 10, 1024, 180).describe() == "tiled 16x392/196");
  test::VariantScope two_pass(clf::Variant::direct, 4, 0);
  CHECK_THAT(describe("gaussian:sigma=1.5"), Catch::Contains("separable 2-pass"));
}

TEST_CASE("the FFT path matches the reference: every border, type, channel count, odd sizes") {
  // 7 wide x 11 tall: blocks of 128 x 256 (121 x 246 outputs each), so the 300 x 260 image takes
  // 3 x 2 blocks, and 1000 columns 9 blocks a row.
  std::vector<double> k;
  const std::string kernel = test::full_rank_kernel(7, 11, k);
  const double l1 = test::l1_norm(k);
  auto check = [&](const clf::Image& in, const std::string& border, double bv) {
    std::string spec = "convolve:kernel=" + kernel + ",method=fft,delta=0.5,border=" + border;
    if (border == "constant") spec += ",border_value=" + std::to_string(bv);
    INFO(spec << " on " << in.width() << "x" << in.height() << "x" << in.channels() << " "
              << clf::pixel_type_name(in.type()));
    clf::Pipeline p(test::device());
    p.add(test::registry(), spec);
    CHECK_THAT(p.filter(0).describe(), Catch::Contains("FFT"));  // method=fft: the user's choice
    clf::Image out;
    p.run(in, out);
    test::check_matches(
        out, ref::correlate(test::to_ref(in), k, 7, 11, ref::border_from_name(border), bv, 0.5),
        l1);
  };
  for (auto type :
       {clf::PixelType::f32, clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f16})
    for (int channels : {1, 3, 4}) {
      const clf::Image in = test::random_image(37, 23, channels, type, unsigned(channels) + 40);
      const double bv = type == clf::PixelType::u8 ? 7 : type == clf::PixelType::u16 ? 300 : 0.25;
      for (const char* border : borders) check(in, border, bv);
    }
  for (auto [w, h] : {std::pair{1, 1}, {1, 9}, {9, 1}, {7, 3}, {131, 5}, {1000, 3}, {300, 260}}) {
    const clf::Image in = test::random_image(w, h, 2, clf::PixelType::f32, 43);
    for (const char* border : borders) check(in, border, 0.25);
  }
}

TEST_CASE("one FFT filter serves images of several widths; one program per block size",
          "[layout]") {
  std::vector<double> k;
  const std::string kernel = test::full_rank_kernel(5, 5, k);
  clf::Pipeline p(test::device());
  p.add(test::registry(), "convolve:kernel=" + kernel + ",method=fft,border=reflect");
  for (int w : {130, 20, 260, 130}) {
    const clf::Image in = test::random_image(w, 40, 1, clf::PixelType::f32, unsigned(w));
    clf::Image out;
    p.run(in, out);
    INFO("width " << w);
    test::check_matches(out, ref::correlate(test::to_ref(in), k, 5, 5, Border::reflect),
                        test::l1_norm(k));
  }
  // The radii are arguments: a 7x7 window of the same 128x128 blocks builds no program of its own.
  const size_t built = test::device()->programs_built();
  clf::Pipeline seven(test::device());
  seven.add(test::registry(), "convolve:kernel=" + test::full_rank_kernel(7, 7, k) + ",method=fft");
  CHECK_THAT(seven.filter(0).describe(), Catch::Contains("FFT, 128x128 blocks"));
  CHECK(test::device()->programs_built() == built);
}

TEST_CASE("the cost model picks FFT for large windows by the device's tuning, and -v says so",
          "[layout]") {
  const test::TuningScope restore;
  const clf::Tuning saved = restore.saved;
  std::vector<double> k;
  const std::string small = test::full_rank_kernel(5, 5, k),
                    large = test::full_rank_kernel(41, 41, k);
  auto describe = [&](const std::string& kernel, const char* method = "auto") {
    clf::Pipeline p(test::device());
    p.add(test::registry(), "convolve:kernel=" + kernel + ",method=" + method);
    return p.filter(0).describe();
  };
  clf::Tuning t = saved;
  t.fft_tap_cost = 40;  // 41x41 = 1681 taps against 40 x 21.7 units; 5x5's 25 taps stay direct
  test::device()->set_tuning(t);
  CHECK(clf::fft_pays(t, 20, 20));
  CHECK_FALSE(clf::fft_pays(t, 2, 2));
  CHECK_THAT(describe(large), Catch::Contains("FFT, 1024x1024 blocks"));
  CHECK_THAT(describe(small), !Catch::Contains("FFT"));
  CHECK_THAT(describe(large, "direct"), !Catch::Contains("FFT"));
  CHECK_THAT(describe(small, "fft"), Catch::Contains("FFT"));
  t.fft_tap_cost = 0;  // never on its own
  test::device()->set_tuning(t);
  CHECK_FALSE(clf::fft_pays(t, 60, 60));
  CHECK_THAT(describe(large), !Catch::Contains("FFT"));
  // Blocks stop at 4096: past radius 1024 the path is refused, by the cost model too.
  t.fft_tap_cost = 1;
  CHECK(clf::fft_pays(t, clf::fft_max_radius, 0));
  CHECK_FALSE(clf::fft_pays(t, clf::fft_max_radius + 1, 0));
  CHECK(clf::fft_block_side(clf::fft_max_radius) == clf::fft_max_block);
  const std::vector<float> row(2 * clf::fft_max_radius + 3, 1.f);
  CHECK_THROWS_WITH(
      clf::FftCorrelation(*test::device(), clf::fft_max_radius + 1, 0, row, 0, "wide"),
      Catch::Contains("wide: radius 1025 is past the FFT path's 1024"));
  // A rank-1 matrix runs separably, which an FFT never beats: method=fft is refused, naming both.
  clf::Pipeline p(test::device());
  try {
    p.add(test::registry(), "convolve:kernel=1,2,1;2,4,2;1,2,1,method=fft");
    FAIL("method=fft on a rank-1 kernel was accepted");
  } catch (const clf::Error& e) {
    CHECK(e.kind() == clf::ErrorKind::usage);
    CHECK_THAT(e.what(), Catch::Contains("method=fft") && Catch::Contains("rank 1"));
  }
}

// Parameter parsing and validation: the --filter syntax, typed specs, and each filter's own checks.
#include "support.hpp"

using clf::Error;
using Catch::Matchers::Contains;

namespace {
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}
std::map<std::string, std::string> kv(std::initializer_list<std::pair<const std::string, std::string>> l) { return l; }
}  // namespace

TEST_CASE("filter specs split name and key=value pairs") {
  auto s = clf::parse_filter_spec("gaussian:sigma=2,border=wrap");
  CHECK(s.name == "gaussian");
  CHECK(s.params == kv({{"sigma", "2"}, {"border", "wrap"}}));
  CHECK(clf::parse_filter_spec("sobel").params.empty());
}

TEST_CASE("matrix values keep their commas without quoting") {
  auto s = clf::parse_filter_spec("convolve:kernel=1,2,1;2,4,2;1,2,1,normalize=true");
  CHECK(s.params.at("kernel") == "1,2,1;2,4,2;1,2,1");
  CHECK(s.params.at("normalize") == "true");
  auto m = clf::parse_matrix(s.params.at("kernel"), "k");
  CHECK(m.rows == 3);
  CHECK(m.cols == 3);
  CHECK(m.at(1, 1) == 4);
}

TEST_CASE("malformed filter specs are refused with the text quoted") {
  CHECK_THAT(error_of([] { clf::parse_filter_spec(":sigma=2"); }), Contains("expected NAME"));
  CHECK_THAT(error_of([] { clf::parse_filter_spec("gaussian:sigma"); }), Contains("'sigma' is not key=value"));
  CHECK_THAT(error_of([] { clf::parse_filter_spec("gaussian:=2"); }), Contains("missing parameter name"));
  CHECK_THAT(error_of([] { clf::parse_filter_spec("gaussian:sigma=1,sigma=2"); }), Contains("given twice"));
}

TEST_CASE("unknown filters and parameters are named with what is known") {
  CHECK_THAT(error_of([] { test::registry().get("gausian"); }),
             Contains("unknown filter 'gausian'") && Contains("gaussian"));
  auto gaussian = test::registry().get("gaussian");
  CHECK_THAT(error_of([&] { clf::validate_params("gaussian", gaussian->params(), kv({{"sigm", "2"}})); }),
             Contains("gaussian: unknown parameter 'sigm'") && Contains("sigma_x"));
}

TEST_CASE("numbers must be finite and in range") {
  auto specs = test::registry().get("gaussian")->params();
  auto check = [&](const std::string& v) {
    return error_of([&] { clf::validate_params("gaussian", specs, kv({{"sigma", v}})); });
  };
  CHECK_THAT(check("nan"), Contains("gaussian: sigma must be a finite number (got 'nan')"));
  CHECK_THAT(check("inf"), Contains("finite number"));
  CHECK_THAT(check("2x"), Contains("finite number"));
  CHECK_THAT(check(""), Contains("finite number"));
  CHECK_THAT(check("-1"), Contains("gaussian: sigma must be in [0.001, 128] (got -1)"));
  CHECK_THAT(check("1e9"), Contains("must be in"));
  CHECK(check("2.5") == "(no error)");
  auto box = test::registry().get("box")->params();
  CHECK_THAT(error_of([&] { clf::validate_params("box", box, kv({{"radius", "1.5"}})); }),
             Contains("box: radius must be a whole number"));
}

TEST_CASE("enums, bools and matrices are checked against their specs") {
  auto specs = test::registry().get("box")->params();
  CHECK_THAT(error_of([&] { clf::validate_params("box", specs, kv({{"border", "mirror"}})); }),
             Contains("box: border must be one of replicate|reflect|reflect101|wrap|constant (got 'mirror')"));
  CHECK_THAT(error_of([&] { clf::validate_params("box", specs, kv({{"normalize", "maybe"}})); }),
             Contains("box: normalize must be true or false"));
  auto conv = test::registry().get("convolve")->params();
  auto matrix = [&](const std::string& v) {
    return error_of([&] { clf::validate_params("convolve", conv, kv({{"kernel", v}})); });
  };
  CHECK_THAT(matrix(""), Contains("empty matrix"));
  CHECK_THAT(matrix("1,2;3"), Contains("row 2 has 1 values, row 1 has 2"));
  CHECK_THAT(matrix("1,a,3"), Contains("'a' in row 1 is not a finite number"));
  CHECK_THAT(matrix("1,nan,3"), Contains("not a finite number"));
}

TEST_CASE("defaults fill what the user left out") {
  auto p = clf::validate_params("box", test::registry().get("box")->params(), {});
  CHECK(p.get_int("radius") == 1);
  CHECK(p.get_bool("normalize"));
  CHECK(p.get_string("border") == "reflect101");
  CHECK_FALSE(p.given("radius"));
  CHECK_FALSE(p.has("size"));
}

TEST_CASE("filters refuse parameter combinations that make no kernel") {
  auto create = [](const std::string& spec) {
    return error_of([&] { test::run_chain({spec}, test::random_image(4, 4, 1, clf::PixelType::f32)); });
  };
  CHECK_THAT(create("convolve:kernel=1,2;3,4"), Contains("convolve: kernel 2x2 has no centre"));
  CHECK_THAT(create("convolve"), Contains("convolve: give exactly one of kernel"));
  CHECK_THAT(create("convolve:kernel=1,0,-1,normalize=true"), Contains("sums to 0"));
  CHECK_THAT(create("convolve:kernel=1,2,3,anchor=5;0"), Contains("anchor must be X;Y inside"));
  CHECK_THAT(create("convolve:kernel_file=/nonexistent/k.txt"), Contains("cannot read kernel_file '/nonexistent/k.txt'"));
  CHECK_THAT(create("sobel:mode=x,dx=3"), Contains("sobel: dx=3 is too high for ksize=3"));
  CHECK_THAT(create("sobel:mode=x,dx=0"), Contains("sobel: dx must be >= 1"));
  CHECK_THAT(create("sobel:scharr=true,ksize=5"), Contains("scharr is 3x3 only"));
  CHECK_THAT(create("box:size=4"), Contains("box: size must be odd"));
  CHECK_THAT(create("box:size=3,radius=1"), Contains("radius or size, not both"));
}

TEST_CASE("the core's border_interpolate agrees with the reference's period formulas") {
  const std::pair<clf::BorderMode, ref::Border> modes[] = {
      {clf::BorderMode::replicate, ref::Border::replicate}, {clf::BorderMode::reflect, ref::Border::reflect},
      {clf::BorderMode::reflect101, ref::Border::reflect101}, {clf::BorderMode::wrap, ref::Border::wrap},
      {clf::BorderMode::constant, ref::Border::constant}};
  for (auto [core, reference] : modes)
    for (int n : {1, 2, 3, 5, 8})
      for (int p = -40; p < 40; ++p) {
        INFO("mode " << clf::border_mode_name(core) << " n " << n << " p " << p);
        REQUIRE(clf::border_interpolate(p, n, core) == ref::border_index(p, n, reference));
      }
}

TEST_CASE("image sizes that overflow or are absurd are refused before allocating") {
  CHECK_THAT(error_of([] { clf::checked_image_bytes(int64_t(1) << 31, int64_t(1) << 31, 4, 4, "'x.exr'"); }),
             Contains("'x.exr': image of 2147483648x2147483648x4 pixels is too large"));
  CHECK_THAT(error_of([] { clf::checked_image_bytes(0, 5, 1, 1, "img"); }), Contains("invalid image size"));
  CHECK_THAT(error_of([] { clf::checked_image_bytes(5, 5, 1000, 1, "img"); }), Contains("1000 channels"));
  CHECK(clf::checked_image_bytes(7, 3, 4, 2, "img") == 7 * 3 * 4 * 2);
}

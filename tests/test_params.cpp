// Parameter parsing and validation: the --filter syntax, typed specs, and each filter's own checks.
#include <filesystem>
#include <fstream>

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

TEST_CASE("a mistyped filter, parameter or choice gets the nearest known name as a suggestion") {
  // One edit (a letter left out, a case, two letters swapped) within a third of the word's length.
  CHECK_THAT(error_of([] { test::registry().get("gausian"); }),
             Contains("unknown filter 'gausian'; did you mean 'gaussian'? (available: "));
  CHECK_THAT(error_of([] { test::registry().get("Median"); }),
             Contains("unknown filter 'Median'; did you mean 'median'?"));
  CHECK_THAT(error_of([] { test::registry().get("morpholgy"); }), Contains("did you mean 'morphology'?"));
  auto gaussian = test::registry().get("gaussian")->params();
  CHECK_THAT(error_of([&] { clf::validate_params("gaussian", gaussian, kv({{"sgima", "2"}})); }),
             Contains("gaussian: unknown parameter 'sgima'; did you mean 'sigma'? (known: "));
  auto box = test::registry().get("box")->params();
  CHECK_THAT(error_of([&] { clf::validate_params("box", box, kv({{"border", "refelct"}})); }),
             Contains("box: border must be one of replicate|reflect|reflect101|wrap|constant (got "
                      "'refelct'; did you mean 'reflect'?)"));
  // Nothing near: no guess.
  for (const std::string& e :
       {error_of([] { test::registry().get("blur"); }),
        error_of([&] { clf::validate_params("box", box, kv({{"border", "mirror"}})); }),
        error_of([&] { clf::validate_params("box", box, kv({{"colour", "1"}})); })}) {
    INFO(e);
    CHECK_THAT(e, !Contains("did you mean"));
  }
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
  CHECK_THAT(check("-1"), Contains("gaussian: sigma must be > 0 and <= 128 (got -1)"));
  CHECK_THAT(check("0"), Contains("must be > 0"));  // an open bound
  CHECK(check("1e-9") == "(no error)");
  CHECK(check("128") == "(no error)");
  CHECK_THAT(check("1e9"), Contains("must be > 0 and <= 128"));
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

TEST_CASE("numbers must fit the 32-bit float or int the kernels use") {
  auto sobel = test::registry().get("sobel")->params();
  CHECK_THAT(error_of([&] { clf::validate_params("sobel", sobel, kv({{"scale", "1e300"}})); }),
             Contains("sobel: scale must fit a 32-bit float, magnitude at most 3.4e38 (got 1e300)"));
  CHECK(error_of([&] { clf::validate_params("sobel", sobel, kv({{"scale", "-3e38"}})); }) == "(no error)");
  CHECK_THAT(error_of([&] { clf::validate_params("sobel", sobel, kv({{"delta", "-1e39"}})); }),
             Contains("sobel: delta must fit a 32-bit float"));
  // An int with no range of its own still has to fit an int (lround past 2^31 is undefined).
  std::vector<clf::ParamSpec> unbounded = {{"count", clf::ParamType::int_, "1", "no range"}};
  CHECK_THAT(error_of([&] { clf::validate_params("t", unbounded, kv({{"count", "2147483648"}})); }),
             Contains("t: count must fit a 32-bit int (got 2147483648)"));
  CHECK(clf::validate_params("t", unbounded, kv({{"count", "2147483647"}})).get_int("count") == 2147483647);
  CHECK(clf::validate_params("t", unbounded, kv({{"count", "-2147483648"}})).get_int("count") == -2147483647 - 1);
  std::vector<clf::ParamSpec> real = {{"x", clf::ParamType::float_, "1e30", "a float read as an int"}};
  CHECK_THAT(error_of([&] { clf::validate_params("t", real, {}).get_int("x"); }),
             Contains("t: x must be a whole number within 32 bits"));
  CHECK_THAT(error_of([] { clf::parse_matrix("1,1e39,1", "convolve: kernel"); }),
             Contains("convolve: kernel: '1e39' in row 1 does not fit a 32-bit float"));
}

TEST_CASE("weights that overflow float once scaled are refused, not run as inf") {
  auto create = [](const std::string& spec) {
    return error_of([&] { test::run_chain({spec}, test::random_image(8, 8, 1, clf::PixelType::f32)); });
  };
  CHECK_THAT(create("sobel:mode=x,ksize=7,scale=3e38"),
             Contains("sobel: kernel weights are not finite 32-bit floats after scaling"));
  CHECK(create("sobel:mode=x,scale=1e30") == "(no error)");
  // Finite weights whose sum over an input of 65535 passes float's range: every correlation path.
  for (const std::string spec : {"convolve:kernel=3e38,3e38,3e38", "convolve:kernel=1e34,2e34,0;3e34,1e34,0;0,0,1,method=direct",
                                 "convolve:kernel=1e34,2e34,0;3e34,1e34,0;0,0,1,method=fft", "sobel:ksize=7,scale=1e34",
                                 "sobel:mode=y,ksize=7,scale=1e34"}) {
    INFO(spec);
    CHECK_THAT(create(spec), Contains("past a 32-bit float's largest value"));
  }
  CHECK(create("convolve:kernel=1e30,1e30,1e30") == "(no error)");
}

TEST_CASE("a kernel_file that is not a kernel is named, its contents are not shown") {
  const std::string path = (std::filesystem::temp_directory_path() / "clf_secret_kernel.txt").string();
  std::ofstream(path) << "1 2 hunter2\n";
  const std::string message = error_of(
      [&] { test::run_chain({"convolve:kernel_file=" + path}, test::random_image(4, 4, 1, clf::PixelType::f32)); });
  std::filesystem::remove(path);
  CHECK_THAT(message, Contains("convolve: kernel_file '" + path + "': value 3 in row 1 is not a finite number"));
  CHECK_THAT(message, !Contains("hunter2"));
}

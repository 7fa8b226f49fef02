// clfilter end to end: generated EXR and PNG files through the real binary, checked pixel by pixel
// against the reference, and every error path (exit code, message, no output file left behind).
#include <pty.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <OpenImageIO/imagebufalgo.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <sstream>
#include <tuple>

#include "cli_support.hpp"
#include "image_io.hpp"
#include "jobs.hpp"
#include "jpeg_io.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using test::clfilter;
using test::no_leftovers;
using test::scratch;
using test::slurp;
using Result = test::CliResult;

void write_test_image(const fs::path& path, const clf::Image& img) {
  OIIO::ImageSpec spec(img.width(), img.height(), img.channels(), OIIO::TypeDesc::UNKNOWN);
  clf::write_image_file(path.string(), img, spec);
}

}  // namespace

TEST_CASE("clfilter runs sobel on a PNG and matches the reference pixel by pixel") {
  const clf::Image in = test::random_image(45, 31, 3, clf::PixelType::u8, 3);
  write_test_image(scratch() / "in.png", in);
  fs::remove(scratch() / "edges.png");
  Result r = clfilter("in.png edges.png --filter sobel");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("wrote edges.png (45x31, 3 channels, u8)"));
  const clf::ImageFile out = clf::read_image_file((scratch() / "edges.png").string());
  CHECK(out.image.type() == clf::PixelType::u8);
  test::check_matches(out.image, ref::sobel_magnitude(test::to_ref(in), ref::Border::reflect101));
}

TEST_CASE("the OpenCL compiler's chatter stays off stderr: a build PoCL warns about prints nothing") {
  // The tiled Gaussian past radius 12 on PoCL takes its radii as arguments, and clang warns that
  // a loop over them is not unrolled; the build is fresh in an empty PoCL cache (with clfilter's
  // off), where the warning count would be printed.
  const clf::Image in = test::random_image(64, 48, 1, clf::PixelType::u8, 5);
  write_test_image(scratch() / "chatter.png", in);
  const std::string cache = (scratch() / "chatter_cache").string();
  fs::remove_all(cache);
  const Result r = clfilter("chatter.png chatter_out.png -f gaussian:sigma=6 --variant tiled",
                            "CLF_DEVICE=cpu CLF_NO_DISK_CACHE=1 POCL_CACHE_DIR='" + cache + "'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.err, !Contains("generated"));
  fs::remove_all(cache);
}

TEST_CASE("clfilter keeps an EXR's half type, channel names and metadata through a chain") {
  clf::Image in = test::random_image(64, 40, 4, clf::PixelType::f16, 5);
  OIIO::ImageSpec spec(64, 40, 4, OIIO::TypeDesc::HALF);
  spec.channelnames = {"R", "G", "B", "A"};
  spec.attribute("clfilter:test", "kept");
  clf::write_image_file((scratch() / "in.exr").string(), in, spec);
  Result r = clfilter("in.exr out.exr -f gaussian:sigma=1 -f box:radius=1 --stats");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("overlap ratio"));
  const clf::ImageFile out = clf::read_image_file((scratch() / "out.exr").string());
  CHECK(out.image.type() == clf::PixelType::f16);
  CHECK(out.spec.channelnames == std::vector<std::string>{"R", "G", "B", "A"});
  CHECK(out.spec.get_string_attribute("clfilter:test") == "kept");
  // Reference: the chain in double, rounded to half only at the end.
  const auto g = ref::gaussian_1d(1, 4);
  auto mid = ref::correlate(test::to_ref(in), ref::outer(g, g), 9, 9, ref::Border::reflect101);
  auto want = ref::correlate(mid, std::vector<double>(9, 1.0 / 9), 3, 3, ref::Border::reflect101);
  test::check_matches(out.image, want);
}

TEST_CASE("metadata survives PNG, TIFF and JPEG through OpenImageIO; mixed EXR channel types stay") {
  const clf::Image img = test::random_image(40, 30, 3, clf::PixelType::u8, 14);
  for (const char* name : {"meta.png", "meta.tif", "meta.jpg"}) {
    OIIO::ImageSpec spec(40, 30, 3, OIIO::TypeDesc::UINT8);
    spec.attribute("ImageDescription", "a test card");
    spec.attribute("Artist", "clfilter tests");
    clf::write_image_file((scratch() / name).string(), img, spec);
    const std::string out = std::string("out_") + name;
    Result r = clfilter(std::string(name) + " " + out + " -f box -q --io oiio");
    INFO(name << ": " << r.err);
    REQUIRE(r.code == 0);
    const clf::ImageFile back = clf::read_image_file((scratch() / out).string());
    CHECK(back.spec.get_string_attribute("ImageDescription") == "a test card");
    CHECK(back.spec.get_string_attribute("Artist") == "clfilter tests");
  }
  // Per-channel formats: half colour, float depth, each written back in its own type.
  clf::Image mixed = test::random_image(24, 16, 4, clf::PixelType::f32, 15);
  OIIO::ImageSpec spec(24, 16, 4, OIIO::TypeDesc::FLOAT);
  spec.channelnames = {"R", "G", "B", "Z"};
  spec.channelformats = {OIIO::TypeDesc::HALF, OIIO::TypeDesc::HALF, OIIO::TypeDesc::HALF,
                         OIIO::TypeDesc::FLOAT};
  clf::write_image_file((scratch() / "mixed.exr").string(), mixed, spec);
  Result r = clfilter("mixed.exr mixed_out.exr -f box");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("(24x16, 4 channels, f16/f32)"));
  auto back = OIIO::ImageInput::open((scratch() / "mixed_out.exr").string());
  REQUIRE(back);
  REQUIRE(back->spec().channelformats.size() == 4);
  CHECK(back->spec().channelformats[0] == OIIO::TypeDesc::HALF);
  CHECK(back->spec().channelformats[3] == OIIO::TypeDesc::FLOAT);
  CHECK(back->spec().channelnames == std::vector<std::string>{"R", "G", "B", "Z"});
}

TEST_CASE("clfilter f32 EXR with convolve matches within 1e-5") {
  const clf::Image in = test::random_image(33, 17, 1, clf::PixelType::f32, 6);
  OIIO::ImageSpec spec(33, 17, 1, OIIO::TypeDesc::FLOAT);
  clf::write_image_file((scratch() / "gray.exr").string(), in, spec);
  Result r = clfilter("gray.exr conv.exr --filter 'convolve:kernel=0,-1,0;-1,5,-1;0,-1,0,border=replicate'");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const clf::ImageFile out = clf::read_image_file((scratch() / "conv.exr").string());
  test::check_matches(out.image, ref::correlate(test::to_ref(in), {0, -1, 0, -1, 5, -1, 0, -1, 0}, 3, 3,
                                                ref::Border::replicate));
}

TEST_CASE("IN == OUT is replaced atomically with the filtered image") {
  const clf::Image in = test::random_image(20, 20, 1, clf::PixelType::u8, 7);
  write_test_image(scratch() / "same.png", in);
  Result r = clfilter("same.png same.png --filter box:radius=1 -q");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.empty());
  const clf::ImageFile out = clf::read_image_file((scratch() / "same.png").string());
  test::check_matches(out.image, ref::correlate(test::to_ref(in), std::vector<double>(9, 1.0 / 9), 3, 3,
                                                ref::Border::reflect101));
  CHECK(no_leftovers());
}

TEST_CASE("--trace writes trace-event JSON that a JSON parser accepts") {
  const clf::Image in = test::random_image(300, 200, 1, clf::PixelType::f32, 7);
  clf::write_image_file((scratch() / "t.exr").string(), in, OIIO::ImageSpec(300, 200, 1, OIIO::TypeDesc::FLOAT));
  Result r = clfilter("t.exr t_out.exr -f sobel --strip-rows 40 --zero-copy off --trace trace.json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string json = slurp(scratch() / "trace.json");
  CHECK_THAT(json, Contains("\"traceEvents\""));
#ifdef CLF_TEST_PYTHON
  const std::string check = std::string("'") + CLF_TEST_PYTHON + "' -c \"import json,sys; d=json.load(open(sys.argv[1])); "
                            "ev=d['traceEvents']; cats={e.get('cat') for e in ev}; "
                            "sys.exit(0 if {'upload','compute','download'} <= cats else 1)\" '" +
                            (scratch() / "trace.json").string() + "'";
  CHECK(std::system(check.c_str()) == 0);
#endif
}

TEST_CASE("help, version and listings teach and exit 0") {
  Result help = clfilter("--help");
  CHECK(help.code == 0);
  CHECK_THAT(help.out, Contains("usage: clfilter IN OUT --filter") && Contains("--max-device-memory") &&
                           Contains("Examples:"));
  CHECK(clfilter("--version").code == 0);
  Result filters = clfilter("--list-filters");
  CHECK(filters.code == 0);
  CHECK_THAT(filters.out, Contains("gaussian") && Contains("sigma (float, default 1, > 0 and <= 128)") && Contains("convolve"));
  Result one = clfilter("--list-filters box");
  CHECK_THAT(one.out, Contains("box - ") && !Contains("gaussian"));
  Result devices = clfilter("--list-devices");
  CHECK(devices.code == 0);
  CHECK_THAT(devices.out, Contains(clf::list_devices()[0].name));
  // Each device says whether a tuning run's file is there for it, in the cache directory.
  const fs::path cache = scratch() / "list_cache";
  fs::remove_all(cache);
  const std::string env = "XDG_CACHE_HOME='" + cache.string() + "'";
  CHECK_THAT(clfilter("--list-devices", env).out,
             Contains("tuning: the database's (clfilter --tune measures this device)"));
  const std::string tuned = clf::tuned_file(clf::list_devices()[0], (cache / "clfilter").string());
  fs::create_directories(fs::path(tuned).parent_path());
  std::ofstream(tuned) << "[device " << clf::list_devices()[0].name << "]\n";
  CHECK_THAT(clfilter("--list-devices", env).out, Contains("tuning: tuned (" + tuned + ")"));
  fs::remove_all(cache);
}

TEST_CASE("every filter the help shows is one the registry builds") {
  // The help's --filter and -f examples, each as written (quotes dropped), into a pipeline.
  const std::string help = clfilter("--help").out;
  const std::regex example("(?:--filter|-f) '?([a-z]+(?::[^ '\n]+)?)");
  int count = 0;
  for (std::sregex_iterator it(help.begin(), help.end(), example), end; it != end; ++it, ++count) {
    const std::string spec = (*it)[1];
    INFO(spec);
    clf::Pipeline pipeline(test::device());
    CHECK_NOTHROW(pipeline.add(test::registry(), spec));
  }
  CHECK(count >= 15);
  for (const char* name : {"median", "morphology", "bilateral", "unsharp"})
    CHECK_THAT(help, Contains(std::string("--filter ") + name + ":"));
}

TEST_CASE("--tune refuses files and bad filters by name, and -v names where the tuning came from") {
  // The tuning run itself is test_device's (clf::tune, with and without a chain); here the
  // command line around it, refused before the device opens.
  const Result files = clfilter("--tune in.png out.png");
  CHECK(files.code == 2);
  CHECK_THAT(files.err, Contains("--tune takes no files"));
  // The options that apply pass (to the filters' check); the others are named.
  const Result unknown = clfilter("--tune -j 2 -q --device cpu -f sobel -f no_such_filter");
  CHECK(unknown.code == 2);
  CHECK_THAT(unknown.err, Contains("no_such_filter"));
  const Result elsewhere = clfilter("--tune -f sobel --output-dir out");
  CHECK(elsewhere.code == 2);
  CHECK_THAT(elsewhere.err, Contains("--output-dir does not apply to --tune"));
  CHECK_THAT(clfilter("--tune --variant=tiled").err, Contains("--variant does not apply"));
  const Result even = clfilter("--tune -f median:ksize=4");
  CHECK(even.code == 2);
  CHECK_THAT(even.err, Contains("ksize"));
  CHECK_THAT(clfilter("--help").out, Contains("clfilter --tune [--filter ...]"));
  const clf::Image in = test::random_image(40, 30, 1, clf::PixelType::f32, 3);
  clf::write_image_file((scratch() / "v.exr").string(), in,
                        OIIO::ImageSpec(40, 30, 1, OIIO::TypeDesc::FLOAT));
  const Result verbose = clfilter("v.exr v_out.exr -f sobel -v");
  CHECK(verbose.code == 0);
  CHECK_THAT(verbose.err, Contains("clfilter: tuning from the database ["));
}

TEST_CASE("--help and the shell's completion come from one option table") {
  const std::string help = clfilter("--help").out;
  const Result all = clfilter("--complete -");
  REQUIRE(all.code == 0);
  std::istringstream names(all.out);
  int count = 0;
  for (std::string name; names >> name; ++count) {
    INFO(name);
    CHECK_THAT(help, Contains("  " + name) || Contains(", " + name));
    CHECK(name.rfind("--", 0) == 0);
  }
  CHECK(count >= 24);  // every option, --io, --quality and --compression among them
  CHECK_THAT(all.out, Contains("--io") && Contains("--quality") && Contains("--compression") &&
                          !Contains("--complete"));
  CHECK(clfilter("--complete --variant").out == "tiled direct\n");
  CHECK(clfilter("--complete --zero-copy").out == "on off\n");
  CHECK_THAT(clfilter("--complete -f").out, Contains("gaussian") && Contains("median"));
  CHECK_THAT(clfilter("--complete --device").out, Contains("gpu cpu all 0:0"));
  CHECK(clfilter("--complete --output-dir").out == "@directories\n");
  CHECK(clfilter("--complete --slots").out == "@none\n");
  CHECK(clfilter("--complete photo.png").out == "\n");  // then the shell offers files
  // The bash script over those words, as bash runs it.
  const std::string script = std::string(CLF_TEST_SOURCE_DIR) + "/../scripts/clfilter-completion.bash";
  const std::string bin = fs::path(CLF_TEST_CLI).parent_path().string();
  auto complete = [&](const std::string& words, int at) {
    const std::string cmd = "PATH='" + bin + "':$PATH bash -c 'source \"" + script +
                            "\"; COMP_WORDS=(" + words + "); COMP_CWORD=" + std::to_string(at) +
                            "; _clfilter; echo \"${COMPREPLY[*]}\"' > '" +
                            (scratch() / "completion.txt").string() + "'";
    REQUIRE(std::system(cmd.c_str()) == 0);
    return slurp(scratch() / "completion.txt");
  };
  CHECK(complete("clfilter --qua", 1) == "--quality\n");
  CHECK(complete("clfilter -f gau", 2) == "gaussian\n");
  CHECK(complete("clfilter --io o", 2) == "oiio\n");
  // Values are parsed as declared: a flag takes none, a choice is one of its words.
  CHECK_THAT(clfilter("--stats=yes").err, Contains("--stats takes no value (got 'yes')"));
  CHECK_THAT(clfilter("--io=fast").err, Contains("--io expects auto or oiio (got 'fast')"));
}

TEST_CASE("OpenImageIO is loaded only by jobs that need it, as the dynamic loader reports") {
  // Evidence from outside clfilter: glibc's loader lists every library it opens (LD_DEBUG=files),
  // whatever clfilter itself says about it.
  auto opens_oiio = [](const std::string& args) {
    Result r = clfilter(args, "LD_DEBUG=files");
    INFO(args << ": exit " << r.code);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, Contains("file=libclfilter"));  // the loader's log is there at all
    return r.err.find("file=libOpenImageIO") != std::string::npos;
  };
  CHECK_FALSE(opens_oiio("--help"));
  CHECK_FALSE(opens_oiio("--version"));
  CHECK_FALSE(opens_oiio("--list-filters"));
  CHECK_FALSE(opens_oiio("--list-devices"));
  write_test_image(scratch() / "lazy.png", test::random_image(32, 24, 3, clf::PixelType::u8, 4));
  REQUIRE(clfilter("lazy.png lazy.jpg -f box -q").code == 0);
  CHECK_FALSE(opens_oiio("lazy.jpg lazy_out.jpg -f box -q"));  // JPEG to JPEG: libjpeg-turbo alone
  CHECK(opens_oiio("lazy.png lazy_out.png -f box -q"));
}

TEST_CASE("bad input gets a clear error, a non-zero exit and no output file") {
  write_test_image(scratch() / "ok.png", test::random_image(8, 8, 1, clf::PixelType::u8));
  write_test_image(scratch() / "wide.png", test::random_image(2000, 8, 1, clf::PixelType::u8));
  { std::ofstream(scratch() / "text.exr") << "this is not an EXR file\n"; }
  struct Bad {
    std::string args, message;
    int code;
  };
  const Bad cases[] = {
      {"missing.png x.png -f sobel", "cannot read 'missing.png': no such file", 1},
      {"text.exr x.png -f sobel", "cannot read 'text.exr'", 1},
      {"ok.png x.png -f nope", "unknown filter 'nope'", 2},
      {"ok.png x.png -f gaussian:sigma=nan", "gaussian: sigma must be a finite number (got 'nan')", 2},
      {"ok.png x.png -f gaussian:sigma=-2", "gaussian: sigma must be > 0 and <= 128 (got -2)", 2},
      {"ok.png x.png -f box:radius=99999", "box: radius must be >= 0 and <= 512 (got 99999)", 2},
      {"ok.png x.png -f 'convolve:kernel=1,2;3'", "convolve: kernel: row 2 has 1 values", 2},
      {"ok.png x.png -f box:colour=red", "box: unknown parameter 'colour'", 2},
      {"ok.png x.png", "no --filter given", 2},
      {"ok.png", "missing OUT", 2},
      {"ok.png x.png -f sobel --bogus", "unknown option '--bogus' (see --help)", 2},
      {"ok.png x.png -f sobel --strip-row 8",
       "unknown option '--strip-row'; did you mean '--strip-rows'? (see --help)", 2},
      {"ok.png x.png -f sobl", "unknown filter 'sobl'; did you mean 'sobel'?", 2},
      {"ok.png x.png -f sobel --queues 2", "--queues expects 1 or 3", 2},
      {"ok.png x.png -f sobel --tile 12x", "--tile expects WxH or WxH/G", 2},
      {"ok.png x.png -f sobel --variant fast", "unknown variant 'fast'", 2},
      {"ok.png x.png -f sobel --zero-copy maybe", "--zero-copy expects on or off", 2},
      {"ok.png x.png -f sobel --type u32", "--type expects u8 or u16 or f16 or f32 (got 'u32')", 2},
      {"ok.png x.png -f sobel --device no-such-device", "no OpenCL device matches 'no-such-device'", 1},
      {"ok.png nodir/x.png -f sobel", "directory 'nodir' does not exist", 1},
      {"ok.png x.unknownext -f sobel",
       "cannot write 'x.unknownext': no format OpenImageIO writes is named '.unknownext' (e.g. "
       ".exr, .png, .tif, .jpg)",
       1},
      {"ok.png x -f sobel", "cannot write 'x': no extension to choose a format by", 1},
      {"ok.png x.webp -f sobel",
       "cannot write 'x.webp': the webp format holds 3 or 4 channels (RGB, RGBA); this image has 1 "
       "(write .png, .tif or .exr)",
       1},
      {"ok.png . -f sobel", "cannot write '.': it is a directory (to write files into it: "
                            "--output-dir '.')",
       1},
      {"wide.png x.png -f sobel --max-device-memory 1K", "the smallest budget is 1M", 2},
  };
  // A device from the environment is named by it; --device overrides it.
  Result from_env = clfilter("ok.png x.png -f sobel", "CLF_DEVICE=no-such-device");
  CHECK(from_env.code == 1);
  CHECK_THAT(from_env.err, Contains("clfilter: error: CLF_DEVICE=no-such-device: no OpenCL device "
                                    "matches 'no-such-device'"));
  CHECK(clfilter("ok.png x.png -f sobel --device " + clf::list_devices()[0].label().substr(0, 3),
                 "CLF_DEVICE=no-such-device")
            .code == 0);
  for (const auto& c : cases) {
    fs::remove(scratch() / "x.png");
    Result r = clfilter(c.args);
    INFO("clfilter " << c.args << "\nstderr: " << r.err);
    CHECK(r.code == c.code);
    CHECK_THAT(r.err, Contains("clfilter: error: ") && Contains(c.message));
    CHECK_FALSE(fs::exists(scratch() / "x.png"));
    CHECK(no_leftovers());
  }
}

TEST_CASE("errors name the real cause once: corrupt PNG, unreadable input, --output-dir, budgets") {
  const clf::Image img = test::random_image(300, 40, 3, clf::PixelType::u8, 9);
  write_test_image(scratch() / "whole.png", img);
  const std::string png = slurp(scratch() / "whole.png");
  { std::ofstream(scratch() / "cut.png", std::ios::binary) << png.substr(0, png.size() / 2); }
  Result r = clfilter("cut.png cut_out.png -f box");
  CHECK(r.code == 1);
  const std::string cut_error = r.err.substr(r.err.find("clfilter: error: "));
  const auto first = cut_error.find("hit end of file");
  CHECK(first != std::string::npos);
  CHECK(cut_error.find("hit end of file", first + 1) == std::string::npos);  // said once
  CHECK_THAT(r.err, !Contains("libpng error"));  // libpng's own print, before clfilter's line
  CHECK_FALSE(fs::exists(scratch() / "cut_out.png"));

  // An input this user may not read (root reads anything: then run as nobody).
  fs::create_directories(scratch() / "open");
  fs::permissions(scratch() / "open", fs::perms::all);
  fs::permissions(scratch(), fs::perms::all);
  fs::copy_file(scratch() / "whole.png", scratch() / "open" / "secret.png", fs::copy_options::overwrite_existing);
  fs::permissions(scratch() / "open" / "secret.png", fs::perms::none);
  r = clfilter("open/secret.png open/secret_out.png -f box", test::as_other_user());
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("cannot read 'open/secret.png': Permission denied"));
  fs::permissions(scratch() / "open" / "secret.png", fs::perms::owner_all);

  // --output-dir: a missing one is created; a file is named as one.
  fs::remove_all(scratch() / "made");
  r = clfilter("whole.png --output-dir made/here -f box");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(fs::exists(scratch() / "made" / "here" / "whole.png"));
  CHECK_THAT(r.out, Contains("wrote 1 of 1 file in ") && Contains(" ms (1 job)"));
  r = clfilter("whole.png -o whole.png -f box");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--output-dir 'whole.png' is a file, not a directory"));

  // A budget below any strip is refused before anything opens; one too small for this image says
  // how much it needs in real units, the library naming no flag and the CLI adding them.
  r = clfilter("whole.png b.png -f box --max-device-memory 1");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--max-device-memory 1 is 1 bytes; the smallest budget is 1M"));
  write_test_image(scratch() / "wide.png", test::random_image(1000, 200, 3, clf::PixelType::u8, 9));
  r = clfilter("wide.png b.png -f box:border=wrap -f box --max-device-memory 1M");
  CHECK(r.code == 1);
  const std::string error_line = r.err.substr(0, r.err.find('\n'));
  CHECK_THAT(error_line, Contains("clfilter: error: ") && Contains("over the budget of 1.0 MiB") &&
                             Contains("a chain mixing wrap"));
  CHECK_THAT(error_line, !Contains("--"));
  CHECK_THAT(r.err, Contains("clfilter: hint: --max-device-memory"));
  CHECK_THAT(r.err, !Contains("libpng"));
  CHECK_FALSE(fs::exists(scratch() / "b.png"));
  CHECK(no_leftovers());
}

TEST_CASE("without a writable home, PoCL's kernel cache goes to a private temporary directory") {
  // PoCL offers no device when it cannot make its cache; clfilter then points it at
  // TMPDIR/clfilter-pocl-UID (0700), and refuses one that others may write. Run as another user
  // when root (root writes anywhere), with HOME gone and XDG_CACHE_HOME read-only.
  write_test_image(scratch() / "home_in.png", test::random_image(40, 30, 3, clf::PixelType::u8, 3));
  fs::permissions(scratch(), fs::perms::all);
  fs::permissions(scratch() / "home_in.png", fs::perms::all);
  const fs::path cache = scratch() / "ro_cache", tmp = scratch() / "tmp";
  fs::remove_all(tmp);
  fs::create_directories(cache);
  fs::create_directories(tmp);
  fs::permissions(cache, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read |
                             fs::perms::others_exec);
  fs::permissions(tmp, fs::perms::all);
  const bool root = ::geteuid() == 0;
  const unsigned uid = root ? 65534u : ::getuid();
  const std::string env = (root ? test::as_other_user() : std::string("env HOME=/nonexistent")) +
                          " XDG_CACHE_HOME=" + cache.string() + " TMPDIR=" + tmp.string();
  const fs::path own = tmp / ("clfilter-pocl-" + std::to_string(uid));
  Result r = clfilter("home_in.png home_out.png -f gaussian -v", env);
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Contains("clfilter: PoCL's kernel cache in " + own.string()) &&
                        Contains((cache / "pocl" / "kcache").string() + " not writable"));
  CHECK(fs::exists(scratch() / "home_out.png"));
  struct stat st {};
  REQUIRE(::stat(own.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0700);
  CHECK(st.st_uid == uid);
  // A directory of that name that others may write is not taken.
  fs::remove_all(own);
  fs::create_directories(own);
  fs::permissions(own, fs::perms::all);
  if (root) REQUIRE(::chown(own.c_str(), uid, uid) == 0);
  r = clfilter("home_in.png home_out2.png -f gaussian -v", env);
  CHECK_THAT(r.err, !Contains("clfilter: PoCL's kernel cache in"));
  REQUIRE(::stat(own.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0777);
  fs::permissions(cache, fs::perms::owner_all);
  fs::remove_all(tmp);
}

TEST_CASE("a failed write leaves an existing output and the input untouched") {
  write_test_image(scratch() / "keep_in.png", test::random_image(8, 8, 1, clf::PixelType::u8, 1));
  const std::string before_in = slurp(scratch() / "keep_in.png");
  fs::create_directories(scratch() / "ro");
  { std::ofstream(scratch() / "ro" / "old.png") << "previous contents"; }
  // A read-only directory; root writes through those, so as root the run is another user's
  // (nobody, through setpriv), whom the directory refuses as it refuses its owner otherwise.
  fs::permissions(scratch() / "ro", fs::perms::owner_read | fs::perms::owner_exec |
                                        fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(scratch(), fs::perms::all);
  fs::permissions(scratch() / "keep_in.png", fs::perms::all);
  Result r = clfilter("keep_in.png ro/old.png -f sobel", test::as_other_user());
  fs::permissions(scratch() / "ro", fs::perms::owner_all);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("is not writable"));
  CHECK(slurp(scratch() / "ro" / "old.png") == "previous contents");
  CHECK(slurp(scratch() / "keep_in.png") == before_in);
  CHECK(no_leftovers());
}

TEST_CASE("a replaced OUT keeps its mode; a linked OUT replaces the target and keeps the link") {
  write_test_image(scratch() / "m_in.png", test::random_image(16, 12, 1, clf::PixelType::u8, 2));
  fs::copy_file(scratch() / "m_in.png", scratch() / "private.png", fs::copy_options::overwrite_existing);
  fs::permissions(scratch() / "private.png", fs::perms::owner_read | fs::perms::owner_write);
  Result r = clfilter("private.png private.png -f box");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::status(scratch() / "private.png").permissions() ==
        (fs::perms::owner_read | fs::perms::owner_write));
  CHECK(slurp(scratch() / "private.png") != slurp(scratch() / "m_in.png"));
  if (::geteuid() == 0) {  // root may give the new file the old one's owner and group
    REQUIRE(::chown((scratch() / "private.png").c_str(), 65534, 65534) == 0);
    r = clfilter("private.png private.png -f box");
    REQUIRE(r.code == 0);
    struct stat st {};
    REQUIRE(::stat((scratch() / "private.png").c_str(), &st) == 0);
    CHECK(st.st_uid == 65534);
    CHECK(st.st_gid == 65534);
    CHECK((st.st_mode & 07777) == 0600);
  }

  // A hard-linked OUT: the name given becomes the new file; the other name keeps the old content,
  // as with mv (README).
  fs::copy_file(scratch() / "m_in.png", scratch() / "linked.png", fs::copy_options::overwrite_existing);
  fs::remove(scratch() / "other_name.png");
  fs::create_hard_link(scratch() / "linked.png", scratch() / "other_name.png");
  const std::string before = slurp(scratch() / "linked.png");
  r = clfilter("m_in.png linked.png -f box:radius=2");
  REQUIRE(r.code == 0);
  CHECK(slurp(scratch() / "other_name.png") == before);
  CHECK(slurp(scratch() / "linked.png") != before);

  fs::create_directories(scratch() / "targets");
  { std::ofstream(scratch() / "targets" / "t.png") << "old target"; }
  fs::remove(scratch() / "link.png");
  fs::create_symlink("targets/t.png", scratch() / "link.png");
  r = clfilter("m_in.png link.png -f box");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(fs::is_symlink(fs::symlink_status(scratch() / "link.png")));
  CHECK(fs::read_symlink(scratch() / "link.png") == "targets/t.png");
  const clf::ImageFile out = clf::read_image_file((scratch() / "targets" / "t.png").string());
  CHECK(out.image.width() == 16);
  CHECK(test::no_leftovers());
  for (const auto& e : fs::directory_iterator(scratch() / "targets"))
    CHECK(e.path().filename() == "t.png");  // no temporary file beside the target either
}

TEST_CASE("an OUT this user may not write is refused as cp refuses it, and left as it was") {
  write_test_image(scratch() / "w_in.png", test::random_image(16, 12, 1, clf::PixelType::u8, 2));
  fs::create_directories(scratch() / "shared");
  fs::permissions(scratch() / "shared", fs::perms::all);  // a world-writable directory
  fs::permissions(scratch(), fs::perms::all);
  { std::ofstream(scratch() / "shared" / "ro.png") << "read-only output"; }
  fs::permissions(scratch() / "shared" / "ro.png",
                  fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  // Root may write any file: the refused user is then another one (nobody), through setpriv.
  fs::permissions(scratch() / "w_in.png", fs::perms::all);
  Result r = clfilter("w_in.png shared/ro.png -f box", test::as_other_user());
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("cannot write 'shared/ro.png': permission denied"));
  CHECK(slurp(scratch() / "shared" / "ro.png") == "read-only output");
  CHECK(test::no_leftovers());
}

TEST_CASE("a MIP-mapped EXR comes out as one valid level, without a MIP header") {
  const clf::Image in = test::random_image(64, 64, 3, clf::PixelType::f16, 8);
  clf::write_image_file((scratch() / "flat.exr").string(), in, OIIO::ImageSpec(64, 64, 3, OIIO::TypeDesc::HALF));
  OIIO::ImageBuf flat((scratch() / "flat.exr").string());
  OIIO::ImageSpec config;
  config.tile_width = config.tile_height = 32;
  REQUIRE(OIIO::ImageBufAlgo::make_texture(OIIO::ImageBufAlgo::MakeTxTexture, flat,
                                           (scratch() / "mip.exr").string(), config));
  {
    auto mip = OIIO::ImageInput::open((scratch() / "mip.exr").string());
    REQUIRE(mip);
    REQUIRE(mip->seek_subimage(0, 1));  // the input really has levels
  }
  Result r = clfilter("mip.exr mip_out.exr -f gaussian:sigma=2");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("MIP levels"));  // the lost levels are named
  auto out = OIIO::ImageInput::open((scratch() / "mip_out.exr").string());
  REQUIRE(out);
  CHECK_FALSE(out->seek_subimage(0, 1));
  out->geterror();
  CHECK(out->seek_subimage(0, 0));
  CHECK(out->spec().get_string_attribute("textureformat").empty());
  std::vector<float> pixels(64 * 64 * 3);
  CHECK(out->read_image(0, 0, 0, 3, OIIO::TypeDesc::FLOAT, pixels.data()));
}

TEST_CASE("a broken plugin in --plugin-dir is a warning, not a failure") {
  write_test_image(scratch() / "p.png", test::random_image(8, 8, 1, clf::PixelType::u8, 1));
  Result r = clfilter(std::string("p.png p_out.png -f test_scale:factor=2 --plugin-dir '") + CLF_TEST_BAD_DIR +
                      "' --plugin-dir '" + CLF_TEST_GOOD_DIR + "'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.err, Contains("clfilter: warning: plugin ") && Contains("libabi_mismatch.so: ABI version"));
}

TEST_CASE("reading decodes the first rows apart and the rest into the image, exactly, for every layout") {
  // 600 x 1100 f32 RGB: 7200-byte rows, so the first read covers 145 rows (whole tiles when tiled)
  // and the second the other 955.
  const clf::Image img = test::random_image(600, 1100, 3, clf::PixelType::f32, 9);
  const clf::Image img8 = test::random_image(600, 1100, 3, clf::PixelType::u8, 9);
  struct Layout {
    const char* file;
    const clf::Image* image;
    int tile_w, tile_h;
  };
  for (const Layout& l : {Layout{"rows.exr", &img, 0, 0}, Layout{"tiles.exr", &img, 64, 48},
                          Layout{"tiles.tif", &img8, 32, 16}, Layout{"rows.png", &img8, 0, 0}}) {
    OIIO::ImageSpec spec(600, 1100, 3, OIIO::TypeDesc::UNKNOWN);
    if (l.tile_w) spec.tile_width = l.tile_w, spec.tile_height = l.tile_h;
    const fs::path path = scratch() / l.file;
    clf::write_image_file(path.string(), *l.image, spec);
    const clf::ImageFile back = clf::read_image_file(path.string());
    INFO(l.file);
    CHECK(back.spec.tile_width == l.tile_w);
    REQUIRE(back.image.byte_size() == l.image->byte_size());
    CHECK(std::memcmp(back.image.data(), l.image->data(), l.image->byte_size()) == 0);
  }
}

TEST_CASE("errors a plugin raises while creating its filter are printed whole, exit 2") {
  write_test_image(scratch() / "p.png", test::random_image(16, 12, 3, clf::PixelType::u8));
  const std::pair<std::string, std::string> cases[] = {
      {"-f box:radius=1,size=3", "box: give radius or size, not both"},
      {"-f sobel:scharr=true,ksize=5", "sobel: scharr is 3x3 only (got ksize=5)"},
      {"-f 'convolve:kernel=1,2,3,4'", "convolve: kernel 4x1 has no centre"},
      {"-f 'convolve:kernel=1,2;3,4'", "convolve: kernel 2x2 has no centre"},
  };
  for (const auto& [args, message] : cases) {
    Result r = clfilter("p.png pout.png " + args);
    INFO(args << "\nstderr: " << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Contains("clfilter: error: " + message));
    CHECK_FALSE(fs::exists(scratch() / "pout.png"));
  }
  // A plugin's own exception type: the plugin is unloaded before main prints it.
  Result own = clfilter("p.png pout.png --plugin-dir '" CLF_TEST_GOOD_DIR "' -f test_raises:kind=own");
  CHECK(own.code == 1);
  CHECK_THAT(own.err, Contains("clfilter: error: test_raises: create() failed: an exception type of the plugin's own"));
  CHECK(no_leftovers());
}

TEST_CASE("an EXR's data window inside its display window is kept") {
  const clf::Image img = test::random_image(64, 48, 1, clf::PixelType::f32, 31);
  OIIO::ImageSpec spec(64, 48, 1, OIIO::TypeDesc::FLOAT);
  spec.x = 10;
  spec.y = 20;
  spec.full_x = 0;
  spec.full_y = 0;
  spec.full_width = 200;
  spec.full_height = 100;
  clf::write_image_file((scratch() / "window.exr").string(), img, spec);
  Result r = clfilter("window.exr window_out.exr -f box:radius=1");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const clf::ImageFile out = clf::read_image_file((scratch() / "window_out.exr").string());
  CHECK(out.spec.x == 10);
  CHECK(out.spec.y == 20);
  CHECK(out.spec.full_width == 200);
  CHECK(out.spec.full_height == 100);
  test::check_matches(out.image, ref::correlate(test::to_ref(img), std::vector<double>(9, 1.0 / 9), 3, 3,
                                                ref::Border::reflect101));
}

TEST_CASE("no format crashes the writer for any channel count: a clear error, nothing left behind") {
  // OpenImageIO 2.4's WebP writer crashed on 1, 2 and 5 channels and its DPX writer aborted on 2
  // and 5, each leaving its temporary file; every writer is held to "written, or refused by name".
  // The writer is the command line's (FileRowSink), run in this process: a crash fails the suite.
  for (int channels : {1, 2, 5}) {
    const clf::Image img = test::random_image(8, 6, channels, clf::PixelType::u8, 20);
    for (const char* ext : {"png", "tif", "exr", "jpg", "bmp", "tga", "pnm", "dpx", "webp", "ico",
                            "hdr", "gif", "sgi", "jp2", "fits", "rla", "zfile", "iff", "heic"}) {
      const std::string out = "crash_" + std::to_string(channels) + "." + ext;
      INFO(out);
      try {
        clf::write_image_file((scratch() / out).string(), img,
                              OIIO::ImageSpec(8, 6, channels, OIIO::TypeDesc::UINT8));
        CHECK(fs::exists(scratch() / out));
      } catch (const clf::Error& e) {
        CHECK_THAT(e.what(), Contains("cannot write '" + (scratch() / out).string() + "': "));
        CHECK_FALSE(fs::exists(scratch() / out));
      }
      CHECK(no_leftovers());
    }
  }
  // The command line's error, exit code and files for each fenced writer.
  clf::write_image_file((scratch() / "ch2.tif").string(),
                        test::random_image(8, 6, 2, clf::PixelType::u8, 21),
                        OIIO::ImageSpec(8, 6, 2, OIIO::TypeDesc::UINT8));
  for (const auto& [out, message] :
       {std::pair{"two.dpx", "cannot write 'two.dpx': the dpx format holds 1, 3 or 4 channels "
                             "(grey, RGB, RGBA); this image has 2 (write .png, .tif or .exr)"},
        std::pair{"two.webp", "cannot write 'two.webp': the webp format holds 3 or 4 channels "
                              "(RGB, RGBA); this image has 2 (write .png, .tif or .exr)"}}) {
    Result r = clfilter(std::string("ch2.tif ") + out + " -f box");
    INFO(r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains(message));
    CHECK_FALSE(fs::exists(scratch() / out));
    CHECK(no_leftovers());
  }
}

TEST_CASE("every format reads back whole after a write, whatever format the input was") {
  // OpenImageIO's TIFF writer over an IOProxy once wrote a PNG's image without ImageLength.
  const clf::Image img = test::random_image(48, 40, 3, clf::PixelType::u8, 12);
  write_test_image(scratch() / "src.png", img);
  clf::write_image_file((scratch() / "src.tif").string(), img,
                        OIIO::ImageSpec(48, 40, 3, OIIO::TypeDesc::UINT8));
  for (const char* in : {"src.png", "src.tif"})
    for (const char* ext : {"png", "tif", "exr", "jpg", "bmp", "tga", "pnm", "dpx", "webp"}) {
      const std::string out = std::string("back_") + in[4] + "." + ext;
      Result r = clfilter(std::string(in) + " " + out + " -f box:radius=0 -q");
      INFO(in << " -> " << out << ": " << r.err);
      REQUIRE(r.code == 0);
      const clf::ImageFile back = clf::read_image_file((scratch() / out).string());
      CHECK(back.image.width() == 48);
      CHECK(back.image.height() == 40);
    }
}

TEST_CASE("JPEG quality: the input's own by default, --quality on both paths; --compression") {
  const clf::Image img = test::random_image(64, 48, 3, clf::PixelType::u8, 13);
  auto write_jpeg = [&](const char* name, int quality) {
    OIIO::ImageSpec spec(64, 48, 3, OIIO::TypeDesc::UINT8);
    spec.attribute("Compression", "jpeg:" + std::to_string(quality));
    clf::write_image_file((scratch() / name).string(), img, spec);
  };
  write_jpeg("q50.jpg", 50);
  write_jpeg("q90.jpg", 90);
  CHECK(clf::estimated_jpeg_quality((scratch() / "q50.jpg").string()) == 50);
  CHECK(clf::estimated_jpeg_quality((scratch() / "q90.jpg").string()) == 90);
  write_test_image(scratch() / "q_src.png", img);
  CHECK(clf::estimated_jpeg_quality((scratch() / "q_src.png").string()) == 0);
  // The output's tables are the quality asked for: the input's, or --quality, on both paths.
  for (const std::string io : {"", " --io oiio"}) {
    INFO("io:" << io);
    REQUIRE(clfilter("q50.jpg out50.jpg -f box -q" + io).code == 0);
    CHECK(clf::estimated_jpeg_quality((scratch() / "out50.jpg").string()) == 50);
    REQUIRE(clfilter("q50.jpg out75.jpg -f box -q --quality 75" + io).code == 0);
    CHECK(clf::estimated_jpeg_quality((scratch() / "out75.jpg").string()) == 75);
  }
  // Both paths give the same pixels at the input's quality.
  REQUIRE(clfilter("q90.jpg direct.jpg -f box -q").code == 0);
  REQUIRE(clfilter("q90.jpg oiio.jpg -f box -q --io oiio").code == 0);
  CHECK(test::identical(clf::read_image_file((scratch() / "direct.jpg").string()).image,
                        clf::read_image_file((scratch() / "oiio.jpg").string()).image));
  Result r = clfilter("q50.jpg bad.jpg -f box --quality 0");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Contains("--quality"));
  REQUIRE(clfilter("q_src.png lzw.tif -f box -q --compression lzw").code == 0);
  auto tif = OIIO::ImageInput::open((scratch() / "lzw.tif").string());
  REQUIRE(tif);
  CHECK(tif->spec().get_string_attribute("compression") == "lzw");
}

TEST_CASE("the report names the type and channels written; dropped alpha and CMYK are named") {
  const clf::Image rgba = test::random_image(40, 30, 4, clf::PixelType::f16, 6);
  OIIO::ImageSpec spec(40, 30, 4, OIIO::TypeDesc::HALF);
  spec.channelnames = {"R", "G", "B", "A"};
  clf::write_image_file((scratch() / "rgba.exr").string(), rgba, spec);
  Result r = clfilter("rgba.exr rgba.jpg -f box -q");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("clfilter: warning: 'rgba.jpg': the jpeg format holds 3 of the image's 4 "
                             "channels; A is not written"));
  r = clfilter("rgba.exr rgba_out.jpg -f box");
  CHECK_THAT(r.out, Contains("wrote rgba_out.jpg (40x30, 3 channels, u8)"));
  r = clfilter("rgba.exr rgba_out.exr -f box");
  CHECK_THAT(r.out, Contains("wrote rgba_out.exr (40x30, 4 channels, f16)"));
  CHECK_THAT(r.err, !Contains("warning"));
  // A type the format cannot hold is named with the type it became, under -q too; a type it
  // holds every value of (u8 as EXR's half, u16 as TIFF's u16) is not.
  CHECK_THAT(clfilter("rgba.exr rgba.png -f box -q").err,
             Contains("clfilter: warning: 'rgba.png': the png format does not hold f16 pixels; they "
                      "are written as u8 (0..1 as 0..255, values outside it clipped)"));
  write_test_image(scratch() / "u16.png", test::random_image(40, 30, 1, clf::PixelType::u16, 7));
  CHECK_THAT(clfilter("u16.png u16.jpg -f box -q").err,
             Contains("clfilter: warning: 'u16.jpg': the jpeg format does not hold u16 pixels; they "
                      "are written as u8 (with less range or precision)"));
  write_test_image(scratch() / "u8.png", test::random_image(40, 30, 3, clf::PixelType::u8, 8));
  for (const char* args : {"u8.png u8.exr -f box", "u16.png u16.tif -f box"}) {
    r = clfilter(args);
    INFO(args << ": " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.err, !Contains("warning"));
  }
  // --type: the type asked for, every channel, without a warning; a format that cannot hold it is
  // an error naming both types, on both JPEG paths, with nothing written.
  for (const auto& [args, out, wrote] :
       {std::tuple{"rgba.exr typed.png -f box --type u16", "typed.png", "4 channels, u16"},
        std::tuple{"u8.png typed.exr -f box --type f32", "typed.exr", "3 channels, f32"},
        std::tuple{"u16.png typed.tif -f box --type u8", "typed.tif", "1 channel, u8"}}) {
    r = clfilter(args);
    INFO(args << ": " << r.err);
    CHECK(r.code == 0);
    CHECK_THAT(r.out, Contains(std::string("wrote ") + out + " (40x30, " + wrote + ")"));
    CHECK_THAT(r.err, !Contains("warning"));
  }
  REQUIRE(clfilter("u8.png u8.jpg -f box -q").code == 0);
  for (const auto& [args, why] :
       {std::pair{"u16.png refused.jpg -f box --type u16", "(--type u16; it would write u8)"},
        std::pair{"u8.jpg refused.jpg -f box --type u16", "(--type u16; it holds u8)"},
        std::pair{"u8.png refused.exr -f box --type u8", "openexr format does not hold u8"}}) {
    r = clfilter(args);
    INFO(args << ": " << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("clfilter: error: cannot write 'refused.") && Contains(why));
    CHECK_FALSE(fs::exists(scratch() / "refused.jpg"));
    CHECK_FALSE(fs::exists(scratch() / "refused.exr"));
    CHECK(no_leftovers());
  }
  CHECK(clfilter("u8.jpg kept.jpg -f box --type u8 -q").code == 0);

  // A CMYK JPEG (tests/data/cmyk.jpg, written by Pillow; OpenImageIO reads it as RGB): named,
  // under -q too.
  fs::copy_file(fs::path(CLF_TEST_SOURCE_DIR) / "data" / "cmyk.jpg", scratch() / "cmyk.jpg",
                fs::copy_options::overwrite_existing);
  r = clfilter("cmyk.jpg cmyk.png -f box -q");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.err, Contains("'cmyk.jpg' is a CMYK JPEG: it is read as RGB and written as RGB"));
}

TEST_CASE("what the output cannot keep is warned about by name; other pixel types keep their type") {
  // Two parts: the second is dropped, with a warning naming the file.
  const clf::Image img = test::random_image(32, 24, 1, clf::PixelType::f32, 2);
  {
    OIIO::ImageSpec specs[2] = {OIIO::ImageSpec(32, 24, 1, OIIO::TypeDesc::FLOAT),
                                OIIO::ImageSpec(32, 24, 1, OIIO::TypeDesc::FLOAT)};
    specs[1].attribute("name", "second");
    specs[0].attribute("name", "first");
    auto out = OIIO::ImageOutput::create((scratch() / "parts.exr").string());
    REQUIRE(out->open((scratch() / "parts.exr").string(), 2, specs));
    REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, img.data()));
    REQUIRE(out->open((scratch() / "parts.exr").string(), specs[1], OIIO::ImageOutput::AppendSubimage));
    REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, img.data()));
    REQUIRE(out->close());
  }
  Result parts = clfilter("parts.exr parts_out.exr -f box");
  CHECK(parts.code == 0);
  CHECK_THAT(parts.err, Contains("clfilter: warning: 'parts.exr' has 2 parts (subimages); only the first"));
  // -q silences reports, never a warning that data is lost.
  Result quiet = clfilter("-q parts.exr parts_out.exr -f box");
  CHECK(quiet.out.empty());
  CHECK_THAT(quiet.err, Contains("clfilter: warning: 'parts.exr' has 2 parts"));
  // TIFF pages (and GIF frames) are not counted in the header: a second one is found and named.
  {
    OIIO::ImageSpec page(32, 24, 1, OIIO::TypeDesc::FLOAT);
    auto out = OIIO::ImageOutput::create((scratch() / "pages.tif").string());
    REQUIRE(out->supports("multiimage"));
    REQUIRE(out->open((scratch() / "pages.tif").string(), page));
    REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, img.data()));
    REQUIRE(out->open((scratch() / "pages.tif").string(), page, OIIO::ImageOutput::AppendSubimage));
    REQUIRE(out->write_image(OIIO::TypeDesc::FLOAT, img.data()));
    REQUIRE(out->close());
  }
  Result pages = clfilter("-q pages.tif pages_out.tif -f box");
  CHECK(pages.code == 0);
  CHECK_THAT(pages.err, Contains("clfilter: warning: 'pages.tif' has more than one subimage (pages "
                                 "or frames); only the first is filtered and written"));
  Result one_page = clfilter("-q pages_out.tif pages_again.tif -f box");
  CHECK(one_page.code == 0);
  CHECK_THAT(one_page.err, !Contains("warning"));

  // int16 is exact in float: filtered and written back as int16, no warning.
  {
    auto out = OIIO::ImageOutput::create((scratch() / "i16.tif").string());
    OIIO::ImageSpec spec(32, 24, 1, OIIO::TypeDesc::INT16);
    std::vector<int16_t> pixels(32 * 24);
    for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = int16_t(int(i * 97 % 60000) - 30000);
    REQUIRE(out->open((scratch() / "i16.tif").string(), spec));
    REQUIRE(out->write_image(OIIO::TypeDesc::INT16, pixels.data()));
    REQUIRE(out->close());
  }
  Result i16 = clfilter("i16.tif i16_out.tif -f box:radius=0");
  INFO(i16.err);
  CHECK(i16.code == 0);
  CHECK_THAT(i16.err, !Contains("warning"));
  {
    auto in = OIIO::ImageInput::open((scratch() / "i16_out.tif").string());
    REQUIRE(in);
    CHECK(in->spec().format == OIIO::TypeDesc::INT16);
    std::vector<int16_t> back(32 * 24);
    REQUIRE(in->read_image(0, 0, 0, 1, OIIO::TypeDesc::INT16, back.data()));
    for (size_t i = 0; i < back.size(); ++i) REQUIRE(back[i] == int16_t(int(i * 97 % 60000) - 30000));
  }
  // uint32 is not: kept as uint32, with a warning about the precision.
  {
    auto out = OIIO::ImageOutput::create((scratch() / "u32.tif").string());
    OIIO::ImageSpec spec(16, 8, 1, OIIO::TypeDesc::UINT32);
    std::vector<uint32_t> pixels(16 * 8, 123456789u);
    REQUIRE(out->open((scratch() / "u32.tif").string(), spec));
    REQUIRE(out->write_image(OIIO::TypeDesc::UINT32, pixels.data()));
    REQUIRE(out->close());
  }
  Result u32 = clfilter("u32.tif u32_out.tif -f box");
  CHECK(u32.code == 0);
  CHECK_THAT(u32.err, Contains("clfilter: warning: 'u32.tif': uint") && Contains("written back as uint"));
  auto back = OIIO::ImageInput::open((scratch() / "u32_out.tif").string());
  REQUIRE(back);
  CHECK(back->spec().format == OIIO::TypeDesc::UINT32);
  // The values too: 123456789 is not a float (the nearest is 123456792), so an identity filter
  // writes float's nearest value back in the file's own type. int32 and double likewise, with
  // values float holds exactly coming back exact.
  REQUIRE(clfilter("u32.tif u32_id.tif -f box:radius=0 -q").code == 0);
  auto identity = OIIO::ImageInput::open((scratch() / "u32_id.tif").string());
  REQUIRE(identity);
  std::vector<uint32_t> u32_back(16 * 8);
  REQUIRE(identity->read_image(0, 0, 0, 1, OIIO::TypeDesc::UINT32, u32_back.data()));
  for (uint32_t v : u32_back) REQUIRE(v == uint32_t(float(123456789u)));
  {
    std::vector<int32_t> ints(16 * 8);
    std::vector<double> doubles(16 * 8);
    for (size_t i = 0; i < ints.size(); ++i) {
      ints[i] = int32_t(i * 7919 % 2000000) - 1000000;  // within float's exact integers
      doubles[i] = double(i) / 8 - 3.25;                 // exact in float
    }
    for (const auto& [name, type, data] :
         {std::tuple{"i32.tif", OIIO::TypeDesc::INT32, static_cast<const void*>(ints.data())},
          std::tuple{"f64.tif", OIIO::TypeDesc::DOUBLE, static_cast<const void*>(doubles.data())}}) {
      auto out = OIIO::ImageOutput::create((scratch() / name).string());
      REQUIRE(out->open((scratch() / name).string(), OIIO::ImageSpec(16, 8, 1, type)));
      REQUIRE(out->write_image(type, data));
      REQUIRE(out->close());
    }
  }
  for (const auto& [in, out, type] : {std::tuple{"i32.tif", "i32_out.tif", OIIO::TypeDesc::INT32},
                                      std::tuple{"f64.tif", "f64_out.tif", OIIO::TypeDesc::DOUBLE}}) {
    Result r = clfilter(std::string(in) + " " + out + " -f box:radius=0");
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.err, Contains("written back as"));
    auto filtered = OIIO::ImageInput::open((scratch() / out).string());
    REQUIRE(filtered);
    CHECK(filtered->spec().format == type);
    std::vector<double> got(16 * 8), want(16 * 8);
    REQUIRE(filtered->read_image(0, 0, 0, 1, OIIO::TypeDesc::DOUBLE, got.data()));
    auto original = OIIO::ImageInput::open((scratch() / in).string());
    REQUIRE(original->read_image(0, 0, 0, 1, OIIO::TypeDesc::DOUBLE, want.data()));
    CHECK(got == want);
  }
}

TEST_CASE("streamed files equal the whole-image run, for every layout, chain, border and strip height") {
  // The reference: the file decoded whole, the chain run on it in one strip, encoded whole by the
  // same writer with the same spec. The CLI decodes, filters and encodes strip by strip.
  struct Layout {
    const char* file;
    int tile;  // 0: scanlines (strips for TIFF)
    clf::PixelType type;
  };
  const Layout layouts[] = {{"s.exr", 0, clf::PixelType::f16}, {"t.exr", 32, clf::PixelType::f32},
                            {"s.tif", 0, clf::PixelType::u16},  {"t.tif", 16, clf::PixelType::u8},
                            {"s.png", 0, clf::PixelType::u8},   {"s.jpg", 0, clf::PixelType::u8}};
  const std::vector<std::vector<std::string>> chains = {
      {"gaussian:sigma=1.5,border=reflect", "sobel:border=replicate"},
      {"box:radius=2,border=wrap"},
      {"convolve:kernel=1,2,1;2,4,2;1,2,1,normalize=true,border=constant,border_value=0.25", "box:radius=1"}};
  for (const auto& l : layouts) {
    const clf::Image img = test::random_image(75, 61, 3, l.type, 17);
    OIIO::ImageSpec spec(75, 61, 3, OIIO::TypeDesc::UNKNOWN);
    if (l.tile) spec.tile_width = spec.tile_height = l.tile;
    clf::write_image_file((scratch() / l.file).string(), img, spec);
    const clf::ImageFile in = clf::read_image_file((scratch() / l.file).string());
    for (const auto& chain : chains) {
      clf::RunOptions whole;
      whole.strip_rows = in.image.height();
      const std::string ext = fs::path(l.file).extension().string();
      clf::write_image_file((scratch() / ("want" + ext)).string(), test::run_chain(chain, in.image, whole), in.spec);
      const clf::Image want = clf::read_image_file((scratch() / ("want" + ext)).string()).image;
      std::string args;
      for (const auto& f : chain) args += " -f '" + f + "'";
      for (const char* rows : {"1", "7", "0"}) {
        Result r = clfilter(std::string(l.file) + " got" + ext + args +
                            (std::string(rows) == "0" ? "" : std::string(" --strip-rows ") + rows));
        INFO(l.file << ", chain starting " << chain[0] << ", strip rows " << rows << "\n" << r.err);
        REQUIRE(r.code == 0);
        const clf::ImageFile got = clf::read_image_file((scratch() / ("got" + ext)).string());
        CHECK(got.spec.tile_width == in.spec.tile_width);
        CHECK(test::identical(got.image, want));
      }
    }
  }
  CHECK(no_leftovers());
}

TEST_CASE("a file streams in bounded memory: peak RSS grows by far less than the image") {
  // 6000 x 12000 RGB u8: 206 MiB of pixels. Holding the image would add at least that to the
  // process (input and output, twice); streaming adds a few strips.
  // The image is freed before clfilter starts: a child's peak RSS counts what fork() copied.
  long image_kib = 0;
  {
    const clf::Image tall = test::random_image(6000, 12000, 3, clf::PixelType::u8, 4);
    clf::write_image_file((scratch() / "tall.tif").string(), tall, OIIO::ImageSpec(6000, 12000, 3, OIIO::TypeDesc::UINT8));
    image_kib = long(tall.byte_size() / 1024);
  }
  write_test_image(scratch() / "small.tif", test::random_image(64, 64, 3, clf::PixelType::u8, 4));
  auto peak_kib = [](const std::vector<std::string>& args) {
    const pid_t pid = test::spawn_clfilter(args, test::scratch() / "rss.log");
    int status = 0;
    struct rusage usage {};
    ::wait4(pid, &status, 0, &usage);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    return long(usage.ru_maxrss);
  };
  const long baseline = peak_kib({"small.tif", "small_out.tif", "-f", "box:radius=1"});
  const long streamed = peak_kib({"tall.tif", "tall_out.tif", "-f", "box:radius=1"});
  // wrap: the last rows come from a second reader of the file, not from holding the image.
  const long wrapped = peak_kib({"tall.tif", "tall_out.tif", "-f", "box:radius=1,border=wrap", "-f", "sobel:border=wrap"});
  INFO("baseline " << baseline << " KiB, streamed " << streamed << " KiB, wrap " << wrapped << " KiB, image "
                   << image_kib << " KiB");
#if defined(__SANITIZE_ADDRESS__)
  // AddressSanitizer's quarantine keeps up to 256 MiB of freed memory: peak RSS says nothing there.
  (void)baseline, (void)streamed, (void)wrapped, (void)image_kib;
#else
  CHECK(streamed - baseline < image_kib / 2);
  CHECK(wrapped - baseline < image_kib / 2);
#endif
  CHECK(clf::read_image_file((scratch() / "tall_out.tif").string()).image.height() == 12000);
  fs::remove(scratch() / "tall.tif");
  fs::remove(scratch() / "tall_out.tif");
}

// tests/tools/cl_buffer_meter, preloaded into clfilter: every device buffer the process creates
// through the OpenCL loader (the strips, temp planes, weights, the FFT path's blocks, VkFFT's
// own), and the host's writes to them and reads from them.
struct Metered {
  Result result;
  uint64_t peak = 0, buffers = 0, written = 0, read = 0;
};
Metered run_metered(const std::string& args) {
  fs::remove(scratch() / "meter.txt");
  // ASan checks that its runtime is loaded first; the meter comes before it here.
  const std::string env = "CLF_BUFFER_METER=meter.txt LD_PRELOAD='" CLF_TEST_BUFFER_METER
                          "' ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"";
  Metered m{clfilter(args, env)};
  std::istringstream meter(slurp(scratch() / "meter.txt"));
  std::string words[4];
  meter >> words[0] >> m.peak >> words[1] >> m.buffers >> words[2] >> m.written >> words[3] >> m.read;
  INFO(args << "\n" << m.result.err);
  REQUIRE(m.result.code == 0);
  REQUIRE(words[3] == "read");  // the meter was loaded and reported
  return m;
}

TEST_CASE("device memory counted outside the library stays within --max-device-memory") {
  write_test_image(scratch() / "budget.tif", test::random_image(1000, 700, 3, clf::PixelType::u8, 3));
  {
    std::ofstream kernel(scratch() / "k31.txt");
    for (int j = 0; j < 31; ++j)
      for (int i = 0; i < 31; ++i) kernel << (1 + (i * 7 + j * 3) % 11) / 6000.0 << (i < 30 ? " " : "\n");
  }
  const uint64_t budget = 8 << 20;
  for (const std::string chain : {"-f gaussian:sigma=2 -f sobel -f box:radius=1", "-f convolve:kernel_file=k31.txt",
                                  "-f median:ksize=5 -f morphology:op=open,shape=ellipse,ksize=15", "-f bilateral:d=9"}) {
    const Metered m = run_metered("budget.tif budget_out.tif --max-device-memory 8M " + chain);
    INFO(chain << ": peak " << m.peak << " bytes in " << m.buffers << " buffers");
    CHECK(m.peak <= budget);
    CHECK(m.peak > budget / 2);  // the strips take what the budget leaves: the meter saw them
  }
  CHECK(no_leftovers());
}

TEST_CASE("rows that neighbouring strips share cross the bus once, counted outside the library") {
  // Halo rows of 12 x 24,000 bytes: past the 256 KiB from which the device copies them from the
  // previous strip's upload (RunOptions::device_halo_copy_bytes). With one slot there is no
  // previous upload to copy from, and they are sent again.
  const clf::Image img = test::random_image(8000, 200, 3, clf::PixelType::u8, 6);
  write_test_image(scratch() / "halo.tif", img);
  const uint64_t image_bytes = img.byte_size();
  const Metered once = run_metered("halo.tif halo_out.tif -f gaussian:sigma=3 --strip-rows 30 --slots 3");
  INFO("written " << once.written << ", read " << once.read << ", image " << image_bytes);
  CHECK(once.written >= image_bytes);
  CHECK(once.written < image_bytes + 1024);  // besides the rows: the filter's 2 x 25 weights
  CHECK(once.read == image_bytes);
  const Metered again = run_metered("halo.tif halo_out.tif -f gaussian:sigma=3 --strip-rows 30 --slots 1");
  CHECK(again.written >= image_bytes + 6 * 2 * 12 * img.row_bytes());  // 6 strip seams, 12 rows each way
  CHECK(again.read == image_bytes);
  fs::remove(scratch() / "halo.tif");
  fs::remove(scratch() / "halo_out.tif");
}

TEST_CASE("one file over two devices: strips alternate, bytes as on one; -v names whole-image encoders") {
  const clf::Image img = test::random_image(90, 77, 3, clf::PixelType::u8, 9);
  write_test_image(scratch() / "two.png", img);
  Result one = clfilter("two.png one.png -f 'gaussian:sigma=2,border=wrap' -f 'sobel:border=wrap' --strip-rows 5 --device cpu");
  REQUIRE(one.code == 0);
  Result two = clfilter("two.png both.png -f 'gaussian:sigma=2,border=wrap' -f 'sobel:border=wrap' --strip-rows 5 --device cpu,cpu -v");
  INFO(two.err);
  REQUIRE(two.code == 0);
  CHECK_THAT(two.err, Contains("16 strips of 5 rows, 3 slots, over 2 devices"));
  CHECK(test::identical(clf::read_image_file((scratch() / "both.png").string()).image,
                        clf::read_image_file((scratch() / "one.png").string()).image));
  Result webp = clfilter("two.png two.webp -f box -v");
  INFO(webp.err);
  REQUIRE(webp.code == 0);
  CHECK_THAT(webp.err, Contains("'two.webp': the webp encoder holds the whole image"));
  CHECK_THAT(clfilter("two.png two.tif -f box -v").err, !Contains("holds the whole image"));
  CHECK(no_leftovers());
}

TEST_CASE("JPEG to JPEG runs on libjpeg-turbo alone: OpenImageIO's pixels, segments copied byte for byte") {
  // An application segment OpenImageIO does not know, and a comment: the direct path carries both
  // as they are (and the input's Exif); --io oiio re-encodes what it parses.
  const std::string app15 = std::string("\xFF\xEF\x00\x18", 4) +
                            std::string("clfilter test\0\x01\x02\xFF\x00\x7F" "xyz", 22);
  const std::string comment = std::string("\xFF\xFE\x00\x0A", 4) + std::string("a note!\0", 8);
  struct Case {
    const char* subsampling;  // nullptr: greyscale
    int channels;
  };
  for (const Case c : {Case{"4:2:0", 3}, Case{"4:2:2", 3}, Case{"4:4:4", 3}, Case{nullptr, 1}}) {
    const clf::Image img = test::random_image(83, 57, c.channels, clf::PixelType::u8, 21);
    OIIO::ImageSpec spec(83, 57, c.channels, OIIO::TypeDesc::UINT8);
    if (c.subsampling) spec.attribute("jpeg:subsampling", c.subsampling);
    clf::write_image_file((scratch() / "plain.jpg").string(), img, spec);
    const std::string plain = slurp(scratch() / "plain.jpg");
    std::ofstream(scratch() / "seg.jpg", std::ios::binary) << plain.substr(0, 2) + app15 + comment + plain.substr(2);
    const std::string input = slurp(scratch() / "seg.jpg");
    const size_t exif_at = input.find("Exif");
    REQUIRE(exif_at != std::string::npos);
    const size_t exif_length = (size_t(uint8_t(input[exif_at - 2])) << 8) | uint8_t(input[exif_at - 1]);
    const std::string exif = input.substr(exif_at - 4, exif_length + 2);
    INFO("subsampling " << (c.subsampling ? c.subsampling : "grey"));

    Result direct = clfilter("seg.jpg direct.jpg -f gaussian:sigma=2 -f sobel -v");
    INFO(direct.err);
    REQUIRE(direct.code == 0);
    CHECK_THAT(direct.err, Contains("through libjpeg-turbo (OpenImageIO not loaded)"));
    Result oiio = clfilter("seg.jpg oiio.jpg -f gaussian:sigma=2 -f sobel -v --io oiio");
    REQUIRE(oiio.code == 0);
    CHECK_THAT(oiio.err, !Contains("libjpeg-turbo"));
    const clf::ImageFile got = clf::read_image_file((scratch() / "direct.jpg").string());
    CHECK(test::identical(got.image, clf::read_image_file((scratch() / "oiio.jpg").string()).image));
    CHECK(got.spec.get_string_attribute("jpeg:subsampling") == (c.subsampling ? c.subsampling : ""));
    const std::string written = slurp(scratch() / "direct.jpg");
    CHECK(written.find(app15) != std::string::npos);
    CHECK(written.find(comment) != std::string::npos);
    CHECK(written.find(exif) != std::string::npos);
    // Rows go to the encoder as they land: the file does not depend on the strip height.
    for (const char* rows : {"1", "13"}) {
      REQUIRE(clfilter(std::string("seg.jpg strips.jpg -f gaussian:sigma=2 -f sobel --strip-rows ") + rows).code == 0);
      CHECK(slurp(scratch() / "strips.jpg") == written);
    }
  }
  CHECK(no_leftovers());
}

TEST_CASE("frame ranges and patterns follow oiiotool's conventions; batch plans name what is wrong") {
  CHECK(clf::parse_frames("1-5") == std::vector<int>{1, 2, 3, 4, 5});
  CHECK(clf::parse_frames("1-10x4,20") == std::vector<int>{1, 5, 9, 20});
  CHECK(clf::parse_frames("-2-1") == std::vector<int>{-2, -1, 0, 1});
  CHECK(clf::expand_frame("in.#.exr", 42) == "in.0042.exr");
  CHECK(clf::expand_frame("in.##.exr", 42) == "in.00000042.exr");
  CHECK(clf::expand_frame("in.@@@.exr", 7) == "in.007.exr");
  CHECK(clf::expand_frame("in.%05d.exr", 42) == "in.00042.exr");
  CHECK(clf::expand_frame("in.%d.exr", 42) == "in.42.exr");
  CHECK(clf::expand_frame("in.#.exr", -3) == "in.-0003.exr");
  CHECK(clf::expand_frame("plain.exr", 3) == "plain.exr");
  auto error_of = [](auto f) {
    try {
      f();
    } catch (const clf::Error& e) {
      CHECK(e.kind() == clf::ErrorKind::usage);
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK_THAT(error_of([] { clf::parse_frames("5-1"); }), Contains("range 5-1 runs backwards"));
  CHECK_THAT(error_of([] { clf::parse_frames("a-b"); }), Contains("--frames 'a-b': 'a-b' is not a frame number"));
  CHECK_THAT(error_of([] { clf::plan_jobs({"in.#.exr", "out.#.exr"}, "", ""); }), Contains("give --frames"));
  CHECK_THAT(error_of([] { clf::plan_jobs({"in.exr", "out.exr"}, "", "1-3"); }), Contains("has no frame pattern"));
  CHECK_THAT(error_of([] { clf::plan_jobs({"a/x.png", "b/x.png"}, "out", ""); }),
             Contains("'a/x.png' and 'b/x.png' would both be written to 'out/x.png'"));
  CHECK_THAT(error_of([] { clf::plan_jobs({"a", "b", "c"}, "", ""); }), Contains("several inputs need --output-dir"));
  CHECK_THAT(error_of([] { clf::plan_jobs({"a/x.png", "a/x.png"}, "out", ""); }), Contains("'a/x.png' is given twice"));
  fs::create_directories(scratch() / "a_folder");
  CHECK_THAT(error_of([] { clf::plan_jobs({(scratch() / "a_folder").string()}, "out", ""); }),
             Contains("a_folder' is a directory: give the files in it (e.g. '" + (scratch() / "a_folder" / "*.png").string() + "')"));
  const auto jobs = clf::plan_jobs({"shot.#.exr", "done.%03d.exr"}, "", "9-11");
  REQUIRE(jobs.size() == 3);
  CHECK(jobs[2].in == "shot.0011.exr");
  CHECK(jobs[2].out == "done.011.exr");
  const auto dir = clf::plan_jobs({"a/one.png", "two.jpg"}, "out", "");
  CHECK(dir[0].out == "out/one.png");
  CHECK(dir[1].out == "out/two.jpg");
}

TEST_CASE("a batch writes every good file, names the bad one, and exits 1") {
  fs::create_directories(scratch() / "batch_in");
  fs::remove_all(scratch() / "batch_out");
  fs::create_directories(scratch() / "batch_out");
  std::vector<clf::Image> images;
  for (int i = 0; i < 6; ++i) {
    images.push_back(test::random_image(40 + i, 30, 3, clf::PixelType::u8, unsigned(50 + i)));
    write_test_image(scratch() / "batch_in" / ("f" + std::to_string(i) + ".png"), images.back());
  }
  { std::ofstream(scratch() / "batch_in" / "f3.png") << "not a PNG"; }  // the corrupt one, mid-batch
  Result r = clfilter("batch_in/f0.png batch_in/f1.png batch_in/f2.png batch_in/f3.png batch_in/f4.png "
                      "batch_in/f5.png --output-dir batch_out -f sobel --jobs 2");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("clfilter: error: cannot read 'batch_in/f3.png'") &&
                        Contains("1 of 6 files failed"));
  CHECK_THAT(r.out, Contains("wrote 5 of 6 files"));
  CHECK_THAT(r.out, !Contains("batch:"));
  // --stats: the batch's files, pixels and throughput, each file's time, the queues' busy time.
  Result stats = clfilter("batch_in/f0.png batch_in/f3.png batch_in/f4.png --output-dir batch_out "
                          "-f sobel --stats -q");
  CHECK(stats.code == 1);
  INFO(stats.out);
  CHECK(std::regex_search(stats.out, std::regex("batch: 2 of 3 files, 0\\.0 MPix, wall [0-9.]+ ms "
                                                "\\([0-9.]+ files/s, [0-9.]+ MPix/s\\)\n"
                                                "a file \\(IN opened to OUT renamed\\): [0-9.]+ ms "
                                                "shortest, [0-9.]+ median, [0-9.]+ longest\n"
                                                "busy, all files: upload [0-9.]+ ms, compute [0-9.]+ "
                                                "ms, download [0-9.]+ ms\n")));
  for (int i : {0, 1, 2, 4, 5}) {
    const clf::ImageFile out = clf::read_image_file((scratch() / "batch_out" / ("f" + std::to_string(i) + ".png")).string());
    test::check_matches(out.image, ref::sobel_magnitude(test::to_ref(images[size_t(i)]), ref::Border::reflect101));
  }
  CHECK_FALSE(fs::exists(scratch() / "batch_out" / "f3.png"));
  for (const auto& e : fs::directory_iterator(scratch() / "batch_out"))
    CHECK(e.path().filename().string().rfind(".clfilter-", 0) != 0);
  // The same batch over two contexts of the device (--device with a list).
  fs::remove_all(scratch() / "batch_out2");
  fs::create_directories(scratch() / "batch_out2");
  const std::string self = clf::list_devices()[0].label().substr(0, 3);
  Result two = clfilter("batch_in/f0.png batch_in/f1.png batch_in/f2.png --output-dir batch_out2 -f sobel --device " +
                        self + "," + self);
  INFO(two.err);
  CHECK(two.code == 0);
  for (int i : {0, 1, 2})
    CHECK(test::identical(clf::read_image_file((scratch() / "batch_out2" / ("f" + std::to_string(i) + ".png")).string()).image,
                          clf::read_image_file((scratch() / "batch_out" / ("f" + std::to_string(i) + ".png")).string()).image));
  // A frame sequence, both pattern styles.
  for (int f = 1; f <= 3; ++f) fs::copy_file(scratch() / "batch_in" / ("f" + std::to_string(f) + ".png"),
                                             scratch() / "batch_in" / ("shot." + std::string(f < 10 ? "000" : "00") + std::to_string(f) + ".png"),
                                             fs::copy_options::overwrite_existing);
  Result frames = clfilter("'batch_in/shot.#.png' 'batch_out/edge.%02d.png' --frames 1-2 -f box -q");
  INFO(frames.err);
  CHECK(frames.code == 0);
  CHECK(fs::exists(scratch() / "batch_out" / "edge.01.png"));
  CHECK(fs::exists(scratch() / "batch_out" / "edge.02.png"));
  CHECK_FALSE(fs::exists(scratch() / "batch_out" / "edge.03.png"));
}

// Runs `clfilter ARGS...` with stdout and stderr (and stdin, with `input_too`) on a
// pseudo-terminal; its exit code and what it printed there. `watch` sees the text so far (and the
// pid) each time more comes.
std::pair<int, std::string> on_terminal(
    const std::vector<std::string>& args,
    const std::function<void(pid_t, const std::string&)>& watch = {}, bool input_too = false) {
  int master = -1, slave = -1;
  REQUIRE(::openpty(&master, &slave, nullptr, nullptr, nullptr) == 0);
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave, F_SETFD, FD_CLOEXEC);
  test::Spawn how;
  how.terminal = slave;
  if (input_too) how.input = slave;
  const pid_t pid = test::spawn_clfilter(args, scratch() / "terminal.log", how);
  ::close(slave);
  std::string seen;
  char buffer[4096];
  for (ssize_t n; (n = ::read(master, buffer, sizeof buffer)) > 0;) {  // EIO once the child is gone
    seen.append(buffer, size_t(n));
    if (watch) watch(pid, seen);
  }
  ::close(master);
  return {test::wait_exit(pid), seen};
}

// On a terminal a batch draws a bar of its files; a line printed meanwhile (an error, -v's reports,
// the summary) must start a line of its own, not run on after "5/12 files". The run is stopped
// for 0.6 s once its pipeline is built (-v names the filter then), so that the bar, drawn after
// half a second, is there for the files after, however fast the device.
TEST_CASE("on a terminal, no line runs on after the progress bar") {
  fs::create_directories(scratch() / "bar_in");
  fs::remove_all(scratch() / "bar_out");
  std::vector<std::string> args;
  for (int i = 0; i < 12; ++i) {
    const fs::path path = scratch() / "bar_in" / ("p" + std::to_string(i) + ".png");
    if (i == 6) std::ofstream(path) << "not a PNG";
    else write_test_image(path, test::random_image(256, 256, 1, clf::PixelType::u8, unsigned(i)));
    args.push_back(path.string());
  }
  for (const char* a : {"--output-dir", "bar_out", "-f", "box", "-v", "--jobs", "1"}) args.push_back(a);
  bool stopped = false;
  const auto [code, seen] = on_terminal(args, [&](pid_t pid, const std::string& seen) {
    if (!stopped && seen.find("clfilter: filter ") != std::string::npos) {
      stopped = true;
      ::kill(pid, SIGSTOP);
      ::usleep(600000);
      ::kill(pid, SIGCONT);
    }
  });
  CHECK(code == 1);
  INFO(seen);
  CHECK_THAT(seen, Contains("] 12/12 files") && Contains("clfilter: error: cannot read") &&
                       Contains("clfilter: wrote 11 of 12 files"));
  for (size_t at = seen.find("clfilter: "); at != std::string::npos; at = seen.find("clfilter: ", at + 1))
    CHECK((at == 0 || seen[at - 1] == '\n' || seen[at - 1] == '\r'));
}

// '-' as IN reads standard input, as OUT (or FORMAT:-) writes standard output: the same pixels as
// files give, the report on stderr, nothing on stdout from a run that fails, and no file left in
// TMPDIR whatever happens.
TEST_CASE("'-' reads standard input and writes standard output, as files do") {
  const fs::path tmp = scratch() / "stdio_tmp";
  fs::create_directories(tmp);
  const std::string env = "TMPDIR='" + tmp.string() + "'";
  auto tmp_is_empty = [&] { return fs::directory_iterator(tmp) == fs::directory_iterator(); };
  write_test_image(scratch() / "pipe_in.png", test::random_image(40, 30, 3, clf::PixelType::u8, 7));
  REQUIRE(clfilter("pipe_in.png pipe_file.png -f sobel").code == 0);
  const clf::Image want = clf::read_image_file((scratch() / "pipe_file.png").string()).image;
  auto image_of = [&](const std::string& bytes, const std::string& name) {
    std::ofstream(scratch() / name, std::ios::binary) << bytes;
    return clf::read_image_file((scratch() / name).string()).image;
  };
  Result in = clfilter("- pipe_stdin.png -f sobel", env, "pipe_in.png");
  INFO(in.err);
  CHECK(in.code == 0);
  CHECK(test::identical(clf::read_image_file((scratch() / "pipe_stdin.png").string()).image, want));
  Result out = clfilter("pipe_in.png - -f sobel", env);
  INFO(out.err);
  CHECK(out.code == 0);
  CHECK_THAT(out.err, Contains("clfilter: wrote - (40x30, 3 channels, u8)"));
  CHECK(out.out.compare(0, 8, "\x89PNG\r\n\x1a\n") == 0);
  CHECK(test::identical(image_of(out.out, "pipe_stdout.png"), want));
  Result both = clfilter("- tif:- -f sobel --stats", env, "pipe_in.png");  // a TIFF, by name
  INFO(both.err);
  CHECK(both.code == 0);
  CHECK(both.out.compare(0, 4, std::string("II*\0", 4)) == 0);
  CHECK_THAT(both.err, Contains("wall") && Contains("clfilter: wrote tif:-"));
  CHECK(test::identical(image_of(both.out, "pipe_both.tif"), want));
  CHECK(tmp_is_empty());
  // Refusals: empty input, bytes of no format, a truncated image (nothing reaches stdout), '-' in
  // a batch, standard output on a terminal.
  Result empty = clfilter("- - -f sobel", env);
  CHECK(empty.code == 1);
  CHECK_THAT(empty.err, Contains("cannot read standard input: it is empty"));
  { std::ofstream(scratch() / "pipe_text.txt") << "not an image at all"; }
  Result text = clfilter("- - -f sobel", env, "pipe_text.txt");
  CHECK(text.code == 1);
  CHECK_THAT(text.err, Contains("its first bytes are no format clfilter knows"));
  const std::string png = slurp(scratch() / "pipe_in.png");
  { std::ofstream(scratch() / "pipe_cut.png", std::ios::binary) << png.substr(0, png.size() / 2); }
  Result cut = clfilter("- - -f sobel", env, "pipe_cut.png");
  INFO(cut.err);
  CHECK(cut.code == 1);
  CHECK_THAT(cut.err, Contains("cannot read '-'"));
  CHECK(cut.out.empty());
  CHECK(tmp_is_empty());
  Result batch = clfilter("- pipe_in.png --output-dir pipe_out -f sobel", env, "pipe_in.png");
  CHECK(batch.code == 2);
  CHECK_THAT(batch.err, Contains("'-' (standard input) is one IN of IN OUT"));
  const auto [code, seen] =
      on_terminal({(scratch() / "pipe_in.png").string(), "-", "-f", "sobel"});
  CHECK(code == 2);
  CHECK_THAT(seen, Contains("OUT '-' writes standard output, which is a terminal"));
  const auto [in_code, in_seen] = on_terminal({"-", "pipe_tty.png", "-f", "sobel"}, {}, true);
  CHECK(in_code == 2);
  CHECK_THAT(in_seen, Contains("IN '-' reads standard input, which is a terminal"));
  CHECK_FALSE(fs::exists(scratch() / "pipe_tty.png"));
  // Faults. A full disk while standard input is copied (ulimit -f; clfilter ignores SIGXFSZ):
  // exit 1 naming the cause, OUT byte for byte as it was.
  const std::string before = slurp(scratch() / "pipe_stdin.png");
  Result full = clfilter("- pipe_stdin.png -f box", "ulimit -f 2; " + env, "pipe_in.png");
  INFO(full.err);
  CHECK(full.code == 1);
  CHECK_THAT(full.err, Contains("cannot spool standard input") && Contains("File too large"));
  CHECK(slurp(scratch() / "pipe_stdin.png") == before);
  CHECK(tmp_is_empty());
  // The child's TMPDIR, from the environment at the fork.
  const char* old_tmp = std::getenv("TMPDIR");
  const std::string kept = old_tmp ? old_tmp : "";
  auto spawn_in_tmp = [&](const std::vector<std::string>& args, const fs::path& log,
                          test::Spawn how) {
    ::setenv("TMPDIR", tmp.c_str(), 1);
    const pid_t pid = test::spawn_clfilter(args, log, how);
    if (old_tmp) ::setenv("TMPDIR", kept.c_str(), 1);
    else ::unsetenv("TMPDIR");
    return pid;
  };
  // Standard output a pipe whose reader is gone: exit 1 naming it, nothing left in TMPDIR.
  int closed[2];
  REQUIRE(::pipe2(closed, O_CLOEXEC) == 0);
  ::close(closed[0]);
  test::Spawn to_closed;
  to_closed.output = closed[1];
  const fs::path closed_log = scratch() / "pipe_closed.log";
  const pid_t writer = spawn_in_tmp({"pipe_in.png", "-", "-f", "sobel"}, closed_log, to_closed);
  ::close(closed[1]);
  CHECK(test::wait_exit(writer) == 1);
  INFO(slurp(closed_log));
  CHECK_THAT(slurp(closed_log), Contains("cannot write the image to standard output: Broken pipe"));
  CHECK(tmp_is_empty());
  // SIGTERM while standard input is a pipe nobody writes to: exit 130, nothing left in TMPDIR.
  int fds[2];
  REQUIRE(::pipe2(fds, O_CLOEXEC) == 0);
  test::Spawn how;
  how.input = fds[0];
  const fs::path log = scratch() / "pipe_wait.log";
  const pid_t pid = spawn_in_tmp({"-", "pipe_never.png", "-f", "sobel"}, log, how);
  ::close(fds[0]);
  ::kill(pid, SIGTERM);
  CHECK(test::wait_exit(pid) == 130);
  ::close(fds[1]);
  INFO(slurp(log));
  CHECK_THAT(slurp(log), Contains("interrupted"));
  CHECK_FALSE(fs::exists(scratch() / "pipe_never.png"));
  CHECK(tmp_is_empty());
}

// Hostile input and faults through the real clfilter binary: broken and lying files, no OpenCL at
// all, interruption. Each must end in a clear error, a non-zero exit and no output file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <random>
#include <thread>

#include "cli_support.hpp"
#include "image_io.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using Catch::Matchers::Contains;

namespace {

using test::clfilter;
using test::no_leftovers;
using test::slurp;
fs::path dir() { return test::scratch(); }

void write_bytes(const fs::path& p, const std::string& bytes) { std::ofstream(p, std::ios::binary) << bytes; }

void expect_refused(const std::string& input, const std::string& message,
                    const std::string& output = "out.png") {
  fs::remove(dir() / output);
  test::CliResult r = clfilter("'" + input + "' " + output + " -f sobel");
  INFO("input " << input << "\nstderr: " << r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("clfilter: error: cannot read '" + input + "'") && Contains(message));
  CHECK_FALSE(fs::exists(dir() / output));
  CHECK(no_leftovers());
}

}  // namespace

TEST_CASE("empty, truncated and corrupt images are refused naming the file") {
  const clf::Image img = test::random_image(64, 48, 3, clf::PixelType::u8, 2);
  OIIO::ImageSpec spec(64, 48, 3, OIIO::TypeDesc::UINT8);
  clf::write_image_file((dir() / "good.png").string(), img, spec);
  clf::write_image_file((dir() / "good.exr").string(), img, OIIO::ImageSpec(64, 48, 3, OIIO::TypeDesc::HALF));
  clf::write_image_file((dir() / "good.jpg").string(), img, spec);
  const std::string png = slurp(dir() / "good.png"), exr = slurp(dir() / "good.exr"), jpg = slurp(dir() / "good.jpg");

  write_bytes(dir() / "empty.png", "");
  expect_refused("empty.png", "");
  write_bytes(dir() / "cut.png", png.substr(0, png.size() / 2));
  expect_refused("cut.png", "");
  write_bytes(dir() / "cut.exr", exr.substr(0, exr.size() / 2));
  expect_refused("cut.exr", "");
  write_bytes(dir() / "cut.jpg", jpg.substr(0, jpg.size() / 3));
  expect_refused("cut.jpg", "");
  // JPEG to JPEG (libjpeg-turbo without OpenImageIO): the decoder's warnings refuse the file too.
  expect_refused("cut.jpg", "Premature end of JPEG file", "out.jpg");
  std::string bad_scan = jpg;
  for (size_t i = bad_scan.size() / 2; i < bad_scan.size() / 2 + 40; ++i) bad_scan[i] = '\xFF';
  write_bytes(dir() / "badscan.jpg", bad_scan);
  expect_refused("badscan.jpg", "Corrupt JPEG data", "out.jpg");
  std::string bad_crc = png;
  bad_crc[bad_crc.size() / 2] ^= 0x5a;  // inside the compressed IDAT: CRC and inflate both break
  write_bytes(dir() / "badcrc.png", bad_crc);
  expect_refused("badcrc.png", "");
  write_bytes(dir() / "notes.exr", "plain text, not an image\n");
  expect_refused("notes.exr", "");
  CHECK(slurp(dir() / "good.png") == png);  // inputs are never touched
}

TEST_CASE("a header claiming absurd dimensions is refused before allocating") {
  write_bytes(dir() / "huge.pgm", "P5\n2147483647 2147483647\n255\n");
  expect_refused("huge.pgm", "too large");
  write_bytes(dir() / "huge16.pgm", "P5\n100000 100000000\n65535\n");
  expect_refused("huge16.pgm", "too large");
}

TEST_CASE("JPEG metadata that OpenImageIO would read past its buffer is refused; sound metadata is read") {
  const clf::Image img = test::random_image(32, 24, 3, clf::PixelType::u8, 4);
  clf::write_image_file((dir() / "plain.jpg").string(), img, OIIO::ImageSpec(32, 24, 3, OIIO::TypeDesc::UINT8));
  const std::string jpg = slurp(dir() / "plain.jpg");
  // The JPEG with one more segment right after its start-of-image marker.
  auto with_segment = [&](uint8_t marker, const std::string& payload) {
    const size_t length = payload.size() + 2;
    return jpg.substr(0, 2) + '\xFF' + char(marker) + char(length >> 8) + char(length & 255) + payload + jpg.substr(2);
  };
  // Photoshop resources: one IPTC block (type 0x0404) holding a caption record, of `claimed` bytes.
  const std::string caption = std::string("\x1C\x02\x78\x00\x05", 5) + "hello";
  auto photoshop = [&](size_t claimed) {
    return std::string("Photoshop 3.0\0" "8BIM\x04\x04\0\0\0\0", 24) + char(claimed >> 8) + char(claimed & 255) +
           caption;
  };
  write_bytes(dir() / "iptc_ok.jpg", with_segment(0xED, photoshop(caption.size())));
  fs::remove(dir() / "out.png");
  test::CliResult ok = clfilter("iptc_ok.jpg out.png -f sobel");
  INFO("stderr: " << ok.err);
  CHECK(ok.code == 0);
  CHECK(fs::exists(dir() / "out.png"));

  write_bytes(dir() / "iptc_lies.jpg", with_segment(0xED, photoshop(caption.size() + 90)));
  expect_refused("iptc_lies.jpg", "damaged JPEG metadata at byte 2: an IPTC block that claims 100 bytes where its segment holds 10");
  write_bytes(dir() / "icc_short.jpg", with_segment(0xE2, std::string("ICC_PROFILE\0\x01", 13)));
  expect_refused("icc_short.jpg", "an ICC profile segment of 13 bytes");
  write_bytes(dir() / "exif_cut.jpg", with_segment(0xE1, "Exi"));
  expect_refused("exif_cut.jpg", "a 3-byte segment cut short inside its identifier 'Exif'");
  write_bytes(dir() / "segment_cut.jpg", jpg.substr(0, 2) + "\xFF\xE1\x10\x00Exif");
  expect_refused("segment_cut.jpg", "runs past the end of the file");
}

TEST_CASE("an OpenEXR attribute that claims more bytes than the file holds is refused before OpenEXR allocates it") {
  // OpenEXR allocates a string attribute's claimed size before reading it: the fuzzer's 445-byte
  // file claiming 2 GB took 2.1 GB and 7 s to refuse (tests/fuzz/corpus/image_read/
  // regress_exr_attribute_claims_2gb). Magic, version 2 (with the multi-part flag or not), then
  // name, type, 32-bit size, value.
  auto attribute = [](const std::string& name, const std::string& type, uint32_t size, const std::string& value) {
    std::string a = name + '\0' + type + '\0';
    for (int i = 0; i < 4; ++i) a += char((size >> (8 * i)) & 255);
    return a + value;
  };
  const std::string magic("\x76\x2f\x31\x01", 4);
  write_bytes(dir() / "claims.exr", magic + std::string("\x02\0\0\0", 4) +
                                        attribute("capDate", "string", 2000000000u, "2026:11:24") + '\0');
  expect_refused("claims.exr", "damaged OpenEXR header: attribute 'capDate' (string) at byte 23 claims 2000000000 "
                               "bytes where the file has 11 left");
  // The second part's header of a multi-part file, by any name (the guard reads content).
  write_bytes(dir() / "second_part.tif",
              magic + std::string("\x02\x10\0\0", 4) + attribute("name", "string", 1, "a") + '\0' +
                  attribute("owner", "string", 70000, "me") + '\0' + '\0');
  expect_refused("second_part.tif", "attribute 'owner' (string)");
  // A negative size is a lie too.
  write_bytes(dir() / "negative.exr", magic + std::string("\x02\0\0\0", 4) + attribute("comments", "string", 0xFFFFFFF0u, "") + '\0');
  expect_refused("negative.exr", "attribute 'comments' (string) at byte 24 claims -16 bytes");
  // A sound EXR still reads.
  const clf::Image img = test::random_image(8, 6, 3, clf::PixelType::f32, 9);
  clf::write_image_file((dir() / "sound.exr").string(), img, OIIO::ImageSpec(8, 6, 3, OIIO::TypeDesc::FLOAT));
  fs::remove(dir() / "out.exr");
  test::CliResult ok = clfilter("sound.exr out.exr -f sobel");
  INFO("stderr: " << ok.err);
  CHECK(ok.code == 0);
}

TEST_CASE("an EXR data window its file could not hold is refused; a wide one that fits streams") {
  // A 16x512 zip EXR whose data window is patched to 2,000,001 x 512: OpenEXR decodes it without
  // a word (zeros and stray values). Deflate shrinks at most 1032:1, so 2 GB of halfs cannot live
  // in a few kilobytes.
  const clf::Image narrow = test::random_image(16, 512, 1, clf::PixelType::f16, 5);
  OIIO::ImageSpec spec(16, 512, 1, OIIO::TypeDesc::HALF);
  spec.attribute("compression", "zip");
  clf::write_image_file((dir() / "narrow.exr").string(), narrow, spec);
  std::string bytes = slurp(dir() / "narrow.exr");
  const std::string key = std::string("dataWindow\0box2i\0", 17);
  const size_t at = bytes.find(key);
  REQUIRE(at != std::string::npos);
  const int32_t window[4] = {0, 0, 2000000, 511};
  std::memcpy(&bytes[at + key.size() + 4], window, sizeof window);
  write_bytes(dir() / "claims.exr", bytes);
  expect_refused("claims.exr", "its data window claims 2000001x512 pixels", "claims_out.exr");

  // A real 30000 x 40 zip EXR of one value (deflate near its limit) is not refused: it streams.
  OIIO::ImageSpec wide_spec(30000, 40, 1, OIIO::TypeDesc::HALF);
  wide_spec.attribute("compression", "zip");
  clf::Image flat(30000, 40, 1, clf::PixelType::f32);
  std::fill_n(reinterpret_cast<float*>(flat.data()), 30000 * 40, 0.5f);
  clf::write_image_file((dir() / "wide.exr").string(), flat, wide_spec);
  test::CliResult r = clfilter("wide.exr wide_out.exr -f box --strip-rows 8");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("(30000x40, 1 channel, f16)"));
}

TEST_CASE("a header that lies about a size this machine could hold costs an error, not memory") {
  // 8192 x 32768 RGB, read as f32: 3 GiB of pixels claimed by a 60-byte Radiance file whose data
  // ends after one broken run. The first rows are decoded before the image is allocated, so the
  // refusal fits under a 1.5 GiB data limit (reading straight into a 3 GiB buffer ran out of
  // memory there, or zero-filled 3 GiB without the limit). The data limit (private writable
  // memory), not the address-space one: GPU drivers reserve large address ranges at start-up.
  const uint64_t claimed = uint64_t(8192) * 32768 * 3 * 4;
  const uint64_t memory = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGE_SIZE));
  if (memory / 2 < claimed) {
    WARN("skipped: " << (memory >> 20) << " MiB of memory refuses a 3 GiB image from its header alone");
    return;
  }
  write_bytes(dir() / "lie.hdr", std::string("#?RADIANCE\nFORMAT=32-bit_rle_rgbe\n\n-Y 32768 +X 8192\n") +
                                     std::string("\x02\x02\x20\x00", 4));
#if defined(__SANITIZE_ADDRESS__)
  const std::string limit;  // AddressSanitizer reserves terabytes of address space for its shadow
#else
  const std::string limit = "ulimit -d 1572864;";
#endif
  fs::remove(dir() / "out.exr");
  test::CliResult r = clfilter("lie.hdr out.exr -f sobel", limit);
  INFO("stderr: " << r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("clfilter: error: cannot read 'lie.hdr'") && Contains("scanline"));
  CHECK_FALSE(fs::exists(dir() / "out.exr"));
  CHECK(no_leftovers());
}

TEST_CASE("a JPEG header that lies about its size costs an error, not memory, on the libjpeg path") {
  // A 32x24 JPEG whose frame header claims 65000 x 65000 (12 GB of RGB): JPEG to JPEG goes through
  // libjpeg-turbo alone, which decodes forward and fails at the end of the data; progressive, its
  // coefficients (25 GB) would be allocated at start, and are refused first.
  for (const bool progressive : {false, true}) {
    OIIO::ImageSpec spec(32, 24, 3, OIIO::TypeDesc::UINT8);
    if (progressive) spec.attribute("jpeg:progressive", 1);
    clf::write_image_file((dir() / "small.jpg").string(), test::random_image(32, 24, 3, clf::PixelType::u8, 6), spec);
    std::string jpg = slurp(dir() / "small.jpg");
    const size_t sof = jpg.find(progressive ? "\xFF\xC2" : "\xFF\xC0");
    REQUIRE(sof != std::string::npos);
    jpg.replace(sof + 5, 4, std::string("\xFD\xE8\xFD\xE8", 4));  // height, width: 65000
    write_bytes(dir() / "claims.jpg", jpg);
    fs::remove(dir() / "out.jpg");
#if defined(__SANITIZE_ADDRESS__)
    const std::string limit;
#else
    const std::string limit = "ulimit -d 1572864;";
#endif
    test::CliResult r = clfilter("claims.jpg out.jpg -f sobel -v", limit);
    INFO("progressive " << progressive << "\nstderr: " << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("through libjpeg-turbo"));
    CHECK_THAT(r.err, Contains("clfilter: error: cannot read 'claims.jpg'"));
    CHECK_FALSE(fs::exists(dir() / "out.jpg"));
    CHECK(no_leftovers());
  }
}

TEST_CASE("no OpenCL platform at all is a clear error with a hint") {
  const clf::Image img = test::random_image(8, 8, 1, clf::PixelType::u8, 2);
  clf::write_image_file((dir() / "small.png").string(), img, OIIO::ImageSpec(8, 8, 1, OIIO::TypeDesc::UINT8));
  fs::create_directories(dir() / "no_vendors");
  test::CliResult r = clfilter("small.png out.png -f sobel", "OCL_ICD_VENDORS='" + (dir() / "no_vendors").string() + "'");
  INFO(r.err);
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Contains("no OpenCL platform found") && Contains("pocl-opencl-icd"));
  CHECK_FALSE(fs::exists(dir() / "out.png"));
}

TEST_CASE("a plugin's halo past any image is refused; a halo far past the image runs and plans at once") {
  // Planning and the border fill once cost O(halo x rows) and O(halo^3): a halo of 4000 took
  // minutes on a 5x3 image, one of a million spun past SIGKILL. Both are O(1) per row now.
  const clf::Image tiny = test::random_image(5, 3, 1, clf::PixelType::u8, 3);
  clf::write_image_file((dir() / "tiny.png").string(), tiny, OIIO::ImageSpec(5, 3, 1, OIIO::TypeDesc::UINT8));
  const std::string plugins = std::string(" --plugin-dir '") + CLF_TEST_GOOD_DIR + "'";
  fs::remove(dir() / "huge.png");
  test::CliResult r = clfilter("tiny.png huge.png -f test_scale:halo=1048576" + plugins);
  CHECK(r.code != 0);
  CHECK_THAT(r.err, Contains("test_scale: a halo of 1048576x1048576 pixels is outside 0..65536"));
  CHECK_FALSE(fs::exists(dir() / "huge.png"));
  for (const char* halo : {"3000", "2999"}) {
    r = clfilter(std::string("tiny.png far.png -f test_scale:factor=1,halo=") + halo + plugins);
    INFO(r.err);
    REQUIRE(r.code == 0);
    CHECK(test::identical(clf::read_image_file((dir() / "far.png").string()).image, tiny));
  }
}

TEST_CASE("Ctrl-C during a long run stops promptly with no output and no temp file") {
  const clf::Image img = test::random_image(3000, 3000, 1, clf::PixelType::f32, 3);
  clf::write_image_file((dir() / "big.exr").string(), img, OIIO::ImageSpec(3000, 3000, 1, OIIO::TypeDesc::FLOAT));
  fs::remove(dir() / "big_out.exr");
  const pid_t pid = test::spawn_clfilter({"big.exr", "big_out.exr", "-f", "gaussian:sigma=20", "-f",
                                          "gaussian:sigma=20", "--strip-rows", "32", "--device", "cpu", "-v"},
                                         dir() / "long.log");
  REQUIRE(pid > 0);
  // Running: the last filter is built (-v names it) and the strips follow.
  REQUIRE(test::wait_for_log(pid, dir() / "long.log", "clfilter: filter gaussian sigma 20x20"));
  ::kill(pid, SIGINT);
  const auto sent = std::chrono::steady_clock::now();
  const int code = test::wait_exit(pid);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count();
  INFO("exited " << code << " after " << seconds << " s: " << slurp(dir() / "long.log"));
  CHECK(code == 130);
  CHECK_THAT(slurp(dir() / "long.log"), Contains("clfilter: error: interrupted"));
  CHECK(seconds < 30);  // promptly: a strip, a chunk of rows, not the rest of the job
  CHECK_FALSE(fs::exists(dir() / "big_out.exr"));
  CHECK(no_leftovers());
}

TEST_CASE("SIGHUP stops a run as Ctrl-C does; a signal inherited as ignored stays ignored") {
  const clf::Image img = test::random_image(2000, 1500, 1, clf::PixelType::f32, 4);
  clf::write_image_file((dir() / "hup.exr").string(), img, OIIO::ImageSpec(2000, 1500, 1, OIIO::TypeDesc::FLOAT));
  const std::vector<std::string> job = {"hup.exr", "hup_out.exr", "-f", "gaussian:sigma=20", "-f",
                                        "gaussian:sigma=20", "--strip-rows", "16", "--device", "cpu", "-v"};
  fs::remove(dir() / "hup_out.exr");
  pid_t pid = test::spawn_clfilter(job, dir() / "hup.log");
  REQUIRE(test::wait_for_log(pid, dir() / "hup.log", "clfilter: filter gaussian sigma 20x20"));
  ::kill(pid, SIGHUP);
  int code = test::wait_exit(pid);
  INFO(slurp(dir() / "hup.log"));
  CHECK(code == 130);
  CHECK_FALSE(fs::exists(dir() / "hup_out.exr"));
  CHECK(no_leftovers());

  // nohup's way: SIGINT ignored from the start. It arrives while the strips run and is not taken.
  test::Spawn ignoring;
  ignoring.ignored = SIGINT;
  pid = test::spawn_clfilter(job, dir() / "ign.log", ignoring);
  REQUIRE(test::wait_for_log(pid, dir() / "ign.log", "clfilter: filter gaussian sigma 20x20"));
  CHECK(::kill(pid, SIGINT) == 0);
  code = test::wait_exit(pid);
  INFO(slurp(dir() / "ign.log"));
  CHECK(code == 0);
  CHECK(fs::exists(dir() / "hup_out.exr"));
}

TEST_CASE("Ctrl-C before main runs (signals not blocked) ends the job as 130 and leaves OUT as it was") {
  // The window a shell leaves open: the dynamic loader, static initialisers. The signal's default
  // action ends the process there, which a shell reports as 130; from main on, clfilter exits 130.
  const clf::Image img = test::random_image(64, 64, 1, clf::PixelType::f32, 5);
  clf::write_image_file((dir() / "early.exr").string(), img, OIIO::ImageSpec(64, 64, 1, OIIO::TypeDesc::FLOAT));
  write_bytes(dir() / "early_out.exr", "the previous output");
  test::Spawn open_window;
  open_window.unblocked = true;
  for (int delay_us : {0, 200, 1000, 5000, 20000}) {
    const pid_t pid = test::spawn_clfilter({"early.exr", "early_out.exr", "-f", "box"}, dir() / "early.log",
                                           open_window);
    ::usleep(useconds_t(delay_us));
    ::kill(pid, SIGINT);
    const int code = test::wait_exit(pid);
    INFO("signal after " << delay_us << " us: exit " << code << ": " << slurp(dir() / "early.log"));
    CHECK((code == 130 || code == -SIGINT || code == 0));
    if (code != 0) CHECK(slurp(dir() / "early_out.exr") == "the previous output");
    CHECK(no_leftovers());
    if (code == 0) write_bytes(dir() / "early_out.exr", "the previous output");
  }
}

TEST_CASE("a signal at any moment of a run leaves OUT as it was (exit 130) or complete (exit 0)") {
  // Start-up, module and device loading, reading, building, strips, writing, renaming: 20 SIGINTs
  // (and SIGTERMs) spread from 0 to past the length of an uninterrupted run.
  const clf::Image img = test::random_image(1200, 900, 3, clf::PixelType::u16, 8);
  clf::write_image_file((dir() / "sig.tif").string(), img, OIIO::ImageSpec(1200, 900, 3, OIIO::TypeDesc::UINT16));
  const std::vector<std::string> job = {"sig.tif", "sig_out.tif", "-f", "gaussian:sigma=3", "-f", "sobel",
                                        "--strip-rows", "64"};
  std::vector<std::string> reference_job = job;
  reference_job[1] = "sig_ref.tif";
  // Two runs fill the program caches (a program goes to disk at its second build); the third,
  // timed, is what the signalled runs repeat.
  for (int warm = 0; warm < 2; ++warm)
    REQUIRE(test::wait_exit(test::spawn_clfilter(reference_job, dir() / "sig_ref.log")) == 0);
  const auto start = std::chrono::steady_clock::now();
  REQUIRE(test::wait_exit(test::spawn_clfilter(reference_job, dir() / "sig_ref.log")) == 0);
  const double run_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const clf::Image complete = clf::read_image_file((dir() / "sig_ref.tif").string()).image;

  std::mt19937 rng(2026);
  std::uniform_real_distribution<double> when(0, run_ms * 1.2);
  int interrupted = 0, finished = 0;
  for (int i = 0; i < 20; ++i) {
    write_bytes(dir() / "sig_out.tif", "the previous output");
    const int delay_ms = int(when(rng));
    const pid_t pid = test::spawn_clfilter(job, dir() / "sig.log");
    REQUIRE(pid > 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    ::kill(pid, i % 4 == 3 ? SIGTERM : SIGINT);
    const int code = test::wait_exit(pid);
    INFO("signal " << i << " at " << delay_ms << " ms of ~" << int(run_ms) << ": exit " << code << ", "
                   << slurp(dir() / "sig.log"));
    REQUIRE((code == 130 || code == 0));
    if (code == 130) {
      ++interrupted;
      CHECK(slurp(dir() / "sig_out.tif") == "the previous output");
    } else {
      ++finished;
      CHECK(test::identical(clf::read_image_file((dir() / "sig_out.tif").string()).image, complete));
    }
    REQUIRE(no_leftovers());
  }
  INFO(interrupted << " interrupted, " << finished << " finished");
  CHECK(interrupted > 0);
}

TEST_CASE("Ctrl-C while kernels build (cold caches) exits 130 and leaves the caches usable") {
  const clf::Image img = test::random_image(300, 200, 1, clf::PixelType::f32, 5);
  clf::write_image_file((dir() / "cold.exr").string(), img, OIIO::ImageSpec(300, 200, 1, OIIO::TypeDesc::FLOAT));
  // Fresh program caches, clfilter's and PoCL's own: every kernel compiles from source.
  const fs::path cache = dir() / "cold_cache";
  fs::remove_all(cache);
  fs::create_directories(cache / "pocl");
  ::setenv("XDG_CACHE_HOME", cache.c_str(), 1);
  ::setenv("POCL_CACHE_DIR", (cache / "pocl").c_str(), 1);
  const std::vector<std::string> job = {"cold.exr", "cold_out.exr", "-v", "-f", "gaussian:sigma=4", "-f",
                                        "convolve:kernel=1,2,3;4,5,6;7,8,10", "--device", "cpu"};
  const pid_t pid = test::spawn_clfilter(job, dir() / "cold.log");
  REQUIRE(pid > 0);
  // The device line comes just before the filters are built.
  for (int waited = 0; waited < 60000 && slurp(dir() / "cold.log").find("clfilter: device") == std::string::npos;
       waited += 5)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ::kill(pid, SIGINT);
  const int code = test::wait_exit(pid);
  INFO(slurp(dir() / "cold.log"));
  CHECK(code == 130);
  CHECK_THAT(slurp(dir() / "cold.log"), Contains("clfilter: error: interrupted"));
  CHECK_FALSE(fs::exists(dir() / "cold_out.exr"));
  CHECK(no_leftovers());
  // The same caches serve the next run, which gives the right pixels.
  const int again = test::wait_exit(test::spawn_clfilter(job, dir() / "cold2.log"));
  INFO(slurp(dir() / "cold2.log"));
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("POCL_CACHE_DIR");
  REQUIRE(again == 0);
  const clf::Image out = clf::read_image_file((dir() / "cold_out.exr").string()).image;
  CHECK(out.width() == 300);
  const clf::Image direct = test::run_chain({"gaussian:sigma=4", "convolve:kernel=1,2,3;4,5,6;7,8,10"}, img);
  CHECK(test::identical(out, direct));
}

TEST_CASE("a full disk fails every writer: exit 1 naming OUT, OUT as it was, no temporary file") {
  // A file-size limit makes every write past 64 KiB fail as a full disk would (EFBIG); clfilter
  // ignores SIGXFSZ, so the write itself reports it. Noise does not compress, so each output is
  // far past the limit. PNG's writer ignores failed writes, and libjpeg's exits the process on one:
  // the check must not depend on the writer.
  const clf::Image u8 = test::random_image(400, 300, 3, clf::PixelType::u8, 4);
  const clf::Image u16 = test::random_image(400, 300, 3, clf::PixelType::u16, 5);
  clf::write_image_file((dir() / "df8.png").string(), u8, OIIO::ImageSpec(400, 300, 3, OIIO::TypeDesc::UINT8));
  clf::write_image_file((dir() / "df16.png").string(), u16, OIIO::ImageSpec(400, 300, 3, OIIO::TypeDesc::UINT16));
  clf::write_image_file((dir() / "df.jpg").string(), u8, OIIO::ImageSpec(400, 300, 3, OIIO::TypeDesc::UINT8));
  // Compile first without the limit, twice (a program goes to disk at its second build), for each
  // pixel type below (each has its own conversion program), without PoCL's kernel cache: a build
  // from source writes PoCL's files (its cache, the preprocessed source), and LLVM aborts when
  // those hit the limit, where clfilter's binaries are only read (this test is about the image
  // write).
  const std::string no_pocl_cache = "POCL_KERNEL_CACHE=0";
  for (int warm = 0; warm < 2; ++warm)
    for (const char* in : {"df8.png", "df16.png"}) {
      REQUIRE(clfilter(std::string(in) + " warm.png -f box", no_pocl_cache).code == 0);
      fs::remove(dir() / "warm.png");
    }
  struct Case {
    std::string in, out, options;
  };
  const Case cases[] = {
      {"df8.png", "full.png", ""},         {"df16.png", "full16.png", ""},
      {"df16.png", "full.tif", ""},        {"df16.png", "full.exr", ""},
      {"df.jpg", "full.jpg", ""},          // libjpeg-turbo alone
      {"df.jpg", "full_oiio.jpg", "--io oiio"}, {"df8.png", "from_png.jpg", ""},
  };
  for (const Case& c : cases) {
    write_bytes(dir() / c.out, "the previous output");
    const std::string before = slurp(dir() / c.in);
    test::CliResult r =
        clfilter(c.in + " " + c.out + " -f box " + c.options, "ulimit -f 64; " + no_pocl_cache);
    INFO(c.in << " -> " << c.out << " " << c.options << "\nstderr: " << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("clfilter: error: cannot write '" + c.out + "': File too large"));
    CHECK(slurp(dir() / c.out) == "the previous output");
    CHECK(slurp(dir() / c.in) == before);
    CHECK(no_leftovers());
  }
}

TEST_CASE("a late write failure (fsync, close, rename) fails the run naming OUT, OUT as it was") {
  // tests/tools/io_faults, preloaded: the call fails with ENOSPC for the temporary output only,
  // after every write() succeeded, as a full disk or a quota reports it late.
  const clf::Image u8 = test::random_image(120, 90, 3, clf::PixelType::u8, 8);
  clf::write_image_file((dir() / "late.png").string(), u8, OIIO::ImageSpec(120, 90, 3, OIIO::TypeDesc::UINT8));
  clf::write_image_file((dir() / "late.jpg").string(), u8, OIIO::ImageSpec(120, 90, 3, OIIO::TypeDesc::UINT8));
  struct Case {
    std::string call, in, out, why;
  };
  const Case cases[] = {
      {"fsync", "late.png", "late_out.png", "No space left on device"},
      {"fsync", "late.jpg", "late_out.jpg", "No space left on device"},  // libjpeg-turbo alone
      {"close", "late.png", "late_out.exr", "No space left on device"},  // OpenImageIO's writer
      {"rename", "late.png", "late_out.tif", "rename from temporary file failed: No space left on device"},
      {"rename", "late.jpg", "late_out.jpg", "rename from temporary file failed: No space left on device"},
  };
  for (const Case& c : cases) {
    write_bytes(dir() / c.out, "the previous output");
    const std::string before = slurp(dir() / c.in);
    const std::string env = "CLF_FAULT=" + c.call + " CLF_FAULT_PATH=.clfilter- LD_PRELOAD='" CLF_TEST_IO_FAULTS
                            "' ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"";
    const test::CliResult r = clfilter(c.in + " " + c.out + " -f box", env);
    INFO(c.call << ": " << c.in << " -> " << c.out << "\nstderr: " << r.err);
    CHECK(r.code == 1);
    CHECK_THAT(r.err, Contains("clfilter: error: cannot write '" + c.out + "': " + c.why));
    CHECK(slurp(dir() / c.out) == "the previous output");
    CHECK(slurp(dir() / c.in) == before);
    CHECK(no_leftovers());
  }
  // Without the fault, the same runs write OUT.
  REQUIRE(clfilter("late.png late_out.png -f box", "CLF_FAULT_PATH=.clfilter- LD_PRELOAD='" CLF_TEST_IO_FAULTS
                                                 "' ASAN_OPTIONS=\"$ASAN_OPTIONS:verify_asan_link_order=0\"")
              .code == 0);
  CHECK(slurp(dir() / "late_out.png") != "the previous output");
}

TEST_CASE("Ctrl-C in the middle of a batch leaves finished outputs whole and the others as they were") {
  fs::remove_all(dir() / "cb_in");
  fs::remove_all(dir() / "cb_out");
  fs::create_directories(dir() / "cb_in");
  fs::create_directories(dir() / "cb_out");
  std::vector<std::string> args;
  for (int i = 0; i < 40; ++i) {
    const std::string name = "cb_in/f" + std::to_string(i) + ".exr";
    clf::write_image_file((dir() / name).string(), test::random_image(600, 400, 1, clf::PixelType::f32, unsigned(i)),
                          OIIO::ImageSpec(600, 400, 1, OIIO::TypeDesc::FLOAT));
    args.push_back(name);
    // Every output but the first exists already: those not finished must keep their bytes.
    if (i > 0) write_bytes(dir() / "cb_out" / ("f" + std::to_string(i) + ".exr"), "previous f" + std::to_string(i));
  }
  const clf::Image expect0 = test::run_chain({"gaussian:sigma=6"}, test::random_image(600, 400, 1, clf::PixelType::f32, 0));
  for (const char* a : {"--output-dir", "cb_out", "-f", "gaussian:sigma=6", "--jobs", "2"}) args.push_back(a);
  const pid_t pid = test::spawn_clfilter(args, dir() / "cb.log");
  // Wait for the first finished file, then interrupt.
  for (int waited = 0; waited < 120000 && !fs::exists(dir() / "cb_out" / "f0.exr"); waited += 10)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGINT);
  const int code = test::wait_exit(pid);
  INFO(slurp(dir() / "cb.log"));
  int finished = 0, untouched = 0;
  for (const auto& e : fs::directory_iterator(dir() / "cb_out")) {
    const std::string name = e.path().filename().string();
    REQUIRE(name.rfind(".clfilter-", 0) != 0);  // no temporary file
    if (slurp(e.path()) == "previous " + name.substr(0, name.size() - 4)) {
      ++untouched;  // exactly as it was
      continue;
    }
    const clf::ImageFile out = clf::read_image_file(e.path().string());  // the others read whole
    CHECK(out.image.height() == 400);
    if (name == "f0.exr") CHECK(test::identical(out.image, expect0));
    ++finished;
  }
  CHECK(finished >= 1);
  CHECK(finished + untouched == 40);
  if (finished < 40) {
    CHECK(code == 130);
    CHECK_THAT(slurp(dir() / "cb.log"), Contains("clfilter: error: interrupted after"));
  }
}

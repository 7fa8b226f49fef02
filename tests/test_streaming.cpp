// Streaming: strips, slots and queues never change a bit of the result; the device-memory budget
// holds; allocation failures shrink the strips; the trace has every command on its queue's track.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "support.hpp"
#include "testing.hpp"

namespace {
clf::Image whole(const std::vector<std::string>& chain, const clf::Image& in) {
  clf::RunOptions o;
  o.strip_rows = in.height();
  return test::run_chain(chain, in, o);
}
}  // namespace

TEST_CASE("streamed output equals whole-image output for any strip height, slot count and chain") {
  const clf::Image in = test::random_image(67, 53, 3, clf::PixelType::f32, 21);
  const std::vector<std::vector<std::string>> chains = {
      {"box:radius=3"},
      {"gaussian:sigma=1.2", "sobel"},
      {"gaussian:sigma=2,border=reflect", "sobel:mode=y,border=replicate",
       "box:radius=1,border=constant,border_value=0.5"},
      {"convolve:kernel=1,0,-1;2,0,-2;1,0,-1,border=reflect", "box:radius=4,border=reflect101"},
      {"box:radius=2,border=wrap", "sobel"},
      {"gaussian:sigma=6,method=fast,border=reflect",
       "sobel"},  // multirate, coarse planes in temps
      {"gaussian:sigma=5.5,method=fast,border=wrap"},
  };
  for (const auto& chain : chains) {
    const clf::Image expect = whole(chain, in);
    int halo = 0;
    {
      clf::Pipeline p(test::device());
      for (const auto& s : chain) p.add(test::registry(), s);
      halo = p.halo().y;
    }
    for (int rows : {1, 2, std::max(1, halo - 1), halo, 5, 7, 13, 52, 53})
      for (int slots : {1, 2, 3, 5})
        for (bool zero_copy : {true, false}) {  // in place (CPU devices) and through copies
          clf::RunOptions o;
          o.strip_rows = rows;
          o.slots = slots;
          o.zero_copy = zero_copy;
          INFO("chain of " << chain.size() << " starting " << chain[0] << ", strip rows " << rows
                           << ", slots " << slots << ", zero copy " << zero_copy);
          REQUIRE(test::identical(test::run_chain(chain, in, o), expect));
        }
  }
}

TEST_CASE("every kernel layout streams bit-identically, the tiled single pass included") {
  const clf::Image in = test::random_image(61, 47, 2, clf::PixelType::f32, 23);
  const std::vector<std::string> chain = {"gaussian:sigma=2.5,border=reflect",
                                          "box:radius=5,border=wrap",
                                          "convolve:kernel=1,2,1;0,0,0;-1,-2,-1"};
  for (const auto& layout : test::layouts()) {
    test::VariantScope scope(layout.variant, layout.vector_width, layout.separable_rows,
                             layout.columns_first);
    const clf::Image expect = whole(chain, in);
    for (int rows : {1, 3, 16, 46})
      for (int slots : {1, 3}) {
        clf::RunOptions o;
        o.strip_rows = rows;
        o.slots = slots;
        INFO(layout.name << ", strip rows " << rows << ", slots " << slots);
        REQUIRE(test::identical(test::run_chain(chain, in, o), expect));
      }
  }
}

TEST_CASE("unpack and pack give the same bits with several rows a work-item, any type and layout") {
  // stream.conversion_rows rows a work-item, loads before stores: every pixel type and channel
  // count, one pixel a work-item and vectors of 4 and 16 (a partial vector at the row's end),
  // strips of 5 rows (not a multiple of 3; rows shared with the previous strip's upload) and one
  // strip, against one row a work-item.
  const std::vector<std::string> chain = {"box:radius=1,border=reflect"};
  for (const clf::PixelType type :
       {clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f16, clf::PixelType::f32})
    for (const int channels : {1, 2, 3, 4})
      for (const int vector_width : {1, 4, 16}) {
        // Vectors take one channel, and three or four at 16 wide; other pairs repeat width 1.
        if (vector_width > 1 && channels != 1 && (channels == 2 || vector_width == 4)) continue;
        const clf::Image in = test::random_image(37, 23, channels, type, 3);
        for (const int strip_rows : {5, 23}) {
          INFO(clf::pixel_type_name(type) << " x" << channels << ", vector width " << vector_width
                                          << ", strips of " << strip_rows);
          clf::RunOptions o;
          o.strip_rows = strip_rows;
          o.zero_copy = false;
          o.device_halo_copy_bytes = 0;  // shared rows read on the device, however few
          clf::Image want;
          for (const char* rows : {"1", "3"}) {
            test::VariantScope scope(clf::Variant::direct, vector_width);
            clf::Tuning t = test::device()->tuning();
            t.knobs["stream.conversion_rows"] = rows;
            test::device()->set_tuning(t);
            const clf::Image out = test::run_chain(chain, in, o);
            if (want.empty())
              want = out;
            else
              CHECK(test::identical(out, want));
          }
        }
      }
}

TEST_CASE(
    "the FFT path streams its whole-image bits in its own strips, and matches in any others") {
  // A 9x9 full-rank window: 128 x 128 blocks of 120 x 120 outputs, 4 block rows in 400.
  std::vector<double> k;
  const std::string kernel = test::full_rank_kernel(9, 9, k);
  const double l1 = test::l1_norm(k);
  const clf::Image in = test::random_image(150, 400, 3, clf::PixelType::f32, 29);
  const std::vector<std::string> chain = {"convolve:kernel=" + kernel +
                                          ",method=fft,border=reflect"};
  const clf::Image expect = whole(chain, in);
  clf::RunStats stats;
  clf::RunOptions own;
  own.zero_copy = false;
  const clf::Image streamed = test::run_chain(chain, in, own, &stats);
  INFO("strips of " << stats.strip_rows);
  CHECK(stats.strips > 1);
  CHECK(stats.strip_rows % 120 == 0);
  CHECK(test::identical(streamed, expect));
  const ref::Image want = ref::correlate(test::to_ref(in), k, 9, 9, ref::Border::reflect);
  for (int rows : {1, 7, 120, 240})
    for (int slots : {1, 3}) {
      clf::RunOptions o;
      o.strip_rows = rows;
      o.slots = slots;
      INFO("strip rows " << rows << ", slots " << slots);
      const clf::Image out = test::run_chain(chain, in, o);
      test::check_matches(out, want, l1);
      if (rows % 120 == 0) CHECK(test::identical(out, expect));
    }
  // A chain whose last filter is not the FFT still matches.
  test::check_matches(test::run_chain({chain[0], "convolve:kernel=1"}, in, {}), want, l1);
}

TEST_CASE(
    "the fast Gaussian's strips equal its whole image at sigma 9, 20 and 40, any strip height") {
  // The multirate grid is anchored at image row 0: a strip of 1, 7 or 13 rows starts off it.
  const clf::Image in = test::random_image(61, 97, 1, clf::PixelType::f32, 22);
  for (const char* spec :
       {"gaussian:sigma=9,method=fast", "gaussian:sigma=20,method=fast,border=reflect",
        "gaussian:sigma=40,method=fast,border=wrap"}) {
    const clf::Image expect = whole({spec}, in);
    for (int rows : {1, 7, 13}) {
      clf::RunOptions o;
      o.strip_rows = rows;
      INFO(spec << ", strip rows " << rows);
      REQUIRE(test::identical(test::run_chain({spec}, in, o), expect));
    }
  }
}

TEST_CASE("the largest parameters run end to end: sigma 128, box radius 512, a 63x63 kernel") {
  const clf::Image in = test::random_image(70, 45, 1, clf::PixelType::f32, 23);
  const auto image = test::to_ref(in);
  const auto border = ref::Border::reflect101;
  // Separable references as two 1-D passes (a 1025x1025 outer product would take minutes).
  auto separable = [&](const std::vector<double>& taps) {
    const int n = int(taps.size());
    return ref::correlate(ref::correlate(image, taps, n, 1, border), taps, 1, n, border);
  };
  const auto g = ref::gaussian_1d(128, 512);  // OpenCV's radius for sigma 128: (8 sigma + 1) / 2
  test::check_matches(test::run_chain({"gaussian:sigma=128"}, in), separable(g));
  test::check_matches(test::run_chain({"box:radius=512"}, in),
                      separable(std::vector<double>(1025, 1.0 / 1025)));
  std::string matrix;
  std::vector<double> k(63 * 63);
  for (size_t i = 0; i < k.size(); ++i) {
    k[i] = std::sin(0.37 * double(i)) / 63;
    matrix += (i % 63 ? "," : (i ? ";" : "")) + std::to_string(k[i]);
  }
  std::vector<double> parsed;  // the values as the spec states them (to_string's 6 decimals)
  for (double v : k) parsed.push_back(std::stod(std::to_string(v)));
  double l1 = 0;
  for (double v : parsed) l1 += std::abs(v);
  test::check_matches(test::run_chain({"convolve:kernel=" + matrix}, in),
                      ref::correlate(image, parsed, 63, 63, border), l1);
}

TEST_CASE("one queue and three queues give identical output") {
  const clf::Image in = test::random_image(120, 90, 1, clf::PixelType::u8, 4);
  clf::RunOptions one, three;
  one.queues = 1;
  one.zero_copy = three.zero_copy = false;
  one.strip_rows = three.strip_rows = 11;
  CHECK(test::identical(test::run_chain({"gaussian:sigma=2", "sobel"}, in, one),
                        test::run_chain({"gaussian:sigma=2", "sobel"}, in, three)));
}

TEST_CASE("device memory stays within the budget for an image 20x larger than it") {
  const clf::Image in = test::random_image(1024, 2048, 1, clf::PixelType::f32, 8);  // 8 MiB
  const uint64_t budget = in.byte_size() / 20;
  const std::vector<std::string> chain = {"gaussian:sigma=2", "sobel", "box:radius=1"};
  clf::RunOptions o;
  o.max_device_memory = budget;
  clf::RunStats stats;
  const clf::Image out = test::run_chain(chain, in, o, &stats);
  INFO(stats.summary());
  CHECK(stats.strips > 20);
  CHECK(stats.device_bytes_peak <= budget);
  CHECK(test::identical(out, whole(chain, in)));
}

TEST_CASE("a budget too small for even one row is a clear error") {
  const clf::Image in = test::random_image(4096, 8, 1, clf::PixelType::f32, 8);
  clf::RunOptions o;
  o.max_device_memory = 4096;
  try {
    test::run_chain({"box"}, in, o);
    FAIL("expected an error");
  } catch (const clf::Error& e) {
    // In the library's terms, in real units: no program's flags, no "0 MiB".
    CHECK_THAT(e.what(), Catch::Matchers::Contains("over the budget of") &&
                             Catch::Matchers::Contains("max_device_memory") &&
                             !Catch::Matchers::Contains("--") &&
                             !Catch::Matchers::Contains(" 0 MiB"));
  }
}

TEST_CASE("an allocation failure leads to smaller strips and a correct result") {
  const clf::Image in = test::random_image(512, 512, 1, clf::PixelType::f32, 2);
  const std::vector<std::string> chain = {"gaussian:sigma=1", "sobel"};
  const clf::Image expect = whole(chain, in);
  clf::RunOptions o;
  o.strip_rows = 256;
  auto device = test::device();
  clf::detail::DeviceTesting::set_alloc_limit(
      *device, device->bytes_in_use() + 2 * 1024 * 1024);  // fits 64-row strips, not 256
  clf::RunStats stats;
  clf::Image out;
  try {
    out = test::run_chain(chain, in, o, &stats);
  } catch (...) {
    clf::detail::DeviceTesting::set_alloc_limit(*device, 0);
    throw;
  }
  clf::detail::DeviceTesting::set_alloc_limit(*device, 0);
  INFO(stats.summary());
  CHECK(stats.retries >= 1);
  CHECK(stats.strip_rows < 256);
  CHECK(test::identical(out, expect));
}

TEST_CASE(
    "the trace has begin/end events for every command on upload, compute and download tracks") {
  const clf::Image in = test::random_image(200, 100, 1, clf::PixelType::f32, 2);
  clf::RunOptions o;
  o.profile = true;
  o.strip_rows = 25;
  o.zero_copy =
      false;  // CPU devices would otherwise read the image in place: no transfers to trace
  clf::RunStats stats;
  test::run_chain({"box"}, in, o, &stats);
  CHECK(stats.profiled);
  CHECK(stats.compute_busy_ms > 0);
  CHECK(stats.overlap_ratio() > 0);
  const auto path = std::filesystem::temp_directory_path() / "clf_test_trace.json";
  clf::write_trace_json(stats, path.string());
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  const std::string json = text.str();
  for (const char* track : {"upload", "compute", "download"}) {
    INFO(track);
    CHECK(json.find(std::string("\"cat\":\"") + track + "\",\"ph\":\"B\"") != std::string::npos);
    CHECK(json.find(std::string("\"cat\":\"") + track + "\",\"ph\":\"E\"") != std::string::npos);
  }
  size_t begins = 0, ends = 0;
  for (size_t p = 0; (p = json.find("\"ph\":\"B\"", p)) != std::string::npos; ++p) ++begins;
  for (size_t p = 0; (p = json.find("\"ph\":\"E\"", p)) != std::string::npos; ++p) ++ends;
  CHECK(begins == ends);
  CHECK(begins == stats.trace.size());
  CHECK(json.front() == '{');
  std::filesystem::remove(path);
}

namespace {
// The commands a run enqueues, in order, as core/src/testing.hpp's log writes them.
std::vector<std::string> commands_of(const std::function<void()>& run) {
  std::vector<std::string> log;
  clf::detail::StreamTesting::set_command_log(&log);
  try {
    run();
  } catch (...) {
    clf::detail::StreamTesting::set_command_log(nullptr);
    throw;
  }
  clf::detail::StreamTesting::set_command_log(nullptr);
  return log;
}
bool has(const std::vector<std::string>& log, const std::string& command) {
  return std::find(log.begin(), log.end(), command) != log.end();
}
}  // namespace

TEST_CASE("profiling changes no command: the same run, profiled and not, enqueues the same") {
  // Every transport (staged, pinned, in place, device images) and the commands a filter adds (an
  // FFT's span between markers, the pads of a second stage, an f32 output with no pack).
  std::vector<double> taps;
  const std::vector<std::vector<std::string>> chains = {
      {"gaussian:sigma=1.5", "sobel"},
      {"convolve:kernel=" + test::full_rank_kernel(5, 5, taps) + ",method=fft,border=reflect"},
      {"box:radius=2,border=wrap"}};
  enum { staged, pinned, in_place, resident };
  for (int channels : {1, 3})
    for (const auto& chain : chains)
      for (int transport : {staged, pinned, in_place, resident}) {
        INFO(chain.front() << " x" << channels << ", transport " << transport);
        const clf::Image in = test::random_image(41, 37, channels, clf::PixelType::f32, 5);
        clf::Pipeline p(test::device());
        for (const auto& spec : chain) p.add(test::registry(), spec);
        clf::Image pinned_in = test::device()->pinned_image(41, 37, channels, clf::PixelType::f32);
        clf::Image pinned_out = test::device()->pinned_image(41, 37, channels, clf::PixelType::f32);
        std::memcpy(pinned_in.data(), in.data(), in.byte_size());
        clf::DeviceImage device_in(test::device(), 41, 37, channels, clf::PixelType::f32),
            device_out;
        device_in.write(in);
        clf::Image out;
        auto run = [&](bool profile) {
          clf::RunOptions o;
          o.profile = profile;
          o.strip_rows = 9;
          o.slots = 2;
          o.zero_copy = transport == in_place;
          return commands_of([&] {
            if (transport == resident)
              p.run(device_in, device_out, o);
            else if (transport == pinned)
              p.run(pinned_in, pinned_out, o);
            else
              p.run(in, out, o);
            if (transport == resident) device_out.wait();
          });
        };
        run(false);  // the images' first run waits for less (no earlier run wrote the output)
        const std::vector<std::string> plain = run(false), profiled = run(true);
        CHECK(plain == profiled);
        CHECK(!plain.empty());
        if (chain.front().find("wrap") != std::string::npos) continue;  // cyclic, or one strip
        // Five strips of 9 rows, each with a last command that orders what follows.
        for (int strip = 0; strip < 5; ++strip) {
          const std::string tag = "strip " + std::to_string(strip) + " ";
          CHECK(has(plain, "compute: " + tag + "clf_pack after 0") !=
                has(plain, "compute: " + tag + "computed after 0"));
          // zero_copy is in place on CPU devices only; elsewhere it stages.
          const bool moved = transport == staged || transport == pinned ||
                             (transport == in_place && !test::device()->info().is_cpu);
          CHECK(has(plain, "download: " + tag + "download after 1") == moved);
        }
      }
}

TEST_CASE("a cancelled run stops with a cancelled error") {
  const clf::Image in = test::random_image(64, 64, 1, clf::PixelType::f32, 2);
  std::atomic<bool> cancel{true};
  clf::RunOptions o;
  o.cancel = &cancel;
  o.strip_rows = 8;
  try {
    test::run_chain({"box"}, in, o);
    FAIL("expected cancellation");
  } catch (const clf::Error& e) {
    CHECK(e.kind() == clf::ErrorKind::cancelled);
  }
}

TEST_CASE(
    "a cancel set mid-run stops at the next strip; a progress callback that throws ends the run") {
  const clf::Image in = test::random_image(64, 256, 1, clf::PixelType::f32, 2);
  auto device = test::device();
  clf::Pipeline p(device);
  p.add(test::registry(), "box:radius=2");
  std::atomic<bool> cancel{false};
  int reported = 0, total = 0;
  clf::RunOptions o;
  o.cancel = &cancel;
  o.strip_rows = 8;  // 32 strips; the cancel comes with the first one landed
  o.progress = [&](int done, int all) {
    reported = done;
    total = all;
    cancel = true;
  };
  clf::Image out;
  try {
    p.run(in, out, o);
    FAIL("expected cancellation");
  } catch (const clf::Error& e) {
    CHECK(e.kind() == clf::ErrorKind::cancelled);
  }
  CHECK(total == 32);
  CHECK(reported < total);  // stopped within the strips in flight, not after the last

  // A callback that throws: the run ends with its exception, and the pipeline runs again.
  o.cancel = nullptr;
  int calls = 0;
  o.progress = [&](int, int) {  // `done` rises, but not by one each call: throw on the first
    ++calls;
    throw std::runtime_error("progress display went away");
  };
  CHECK_THROWS_WITH(p.run(in, out, o), Catch::Matchers::Contains("progress display went away"));
  CHECK(calls == 1);
  o.progress = nullptr;
  p.run(in, out, o);
  clf::Image whole;
  clf::RunOptions one;
  one.strip_rows = 256;
  p.run(in, whole, one);
  CHECK(test::identical(out, whole));
}

TEST_CASE("pinned images stream straight from and to their memory with the same result") {
  const clf::Image heap = test::random_image(301, 97, 3, clf::PixelType::u16, 12);
  clf::Image pinned_in = test::device()->pinned_image(301, 97, 3, clf::PixelType::u16);
  std::memcpy(pinned_in.data(), heap.data(), heap.byte_size());
  CHECK(pinned_in.pinned());
  clf::Image pinned_out = test::device()->pinned_image(301, 97, 3, clf::PixelType::u16);
  clf::Pipeline pipeline(test::device());
  pipeline.add(test::registry(), "gaussian:sigma=1.5");
  pipeline.add(test::registry(), "sobel:mode=x");
  const clf::Image expect = test::run_chain({"gaussian:sigma=1.5", "sobel:mode=x"}, heap);
  // Through transfers too (zero_copy off): with pinned images and no host copies the device alone
  // orders the reuse of each slot, the host enqueueing strips ahead of the ring.
  for (bool zero_copy : {true, false})
    for (int slots : {1, 2, 3})
      for (int rows : {1, 3, 10}) {
        clf::RunOptions o;
        o.strip_rows = rows;
        o.slots = slots;
        o.zero_copy = zero_copy;
        o.device_halo_copy_bytes = 0;  // shared halo rows copied on the device, however few
        std::memset(pinned_out.data(), 0, pinned_out.byte_size());
        pipeline.run(pinned_in, pinned_out, o);
        INFO("zero copy " << zero_copy << ", slots " << slots << ", strip rows " << rows);
        CHECK(pinned_out.pinned());  // written in place, not reallocated
        CHECK(test::identical(pinned_out, expect));
      }
  const clf::Image copy = pinned_out;  // copies are deep and ordinary
  CHECK_FALSE(copy.pinned());
  CHECK(test::identical(copy, pinned_out));
}

TEST_CASE(
    "rows shared by neighbouring strips cross the bus once: the unpack reads them on the device",
    "[layout]") {
  const clf::Image in = test::random_image(64, 100, 2, clf::PixelType::u8, 21);
  const clf::Image expect = test::run_chain({"gaussian:sigma=3"}, in);  // radius 12
  for (int rows : {5, 8, 30}) {
    uint64_t resent = 0;  // one slot: no previous strip's buffer, each strip uploads its halo again
    for (int slots : {1, 2, 3}) {
      clf::RunOptions o;
      o.zero_copy = false;
      o.strip_rows = rows;
      o.slots = slots;
      o.device_halo_copy_bytes = 0;  // however small (these rows are 128 bytes)
      clf::RunStats stats;
      const clf::Image out = test::run_chain({"gaussian:sigma=3"}, in, o, &stats);
      INFO("slots " << slots << ", strip rows " << rows);
      CHECK(test::identical(out, expect));
      if (slots == 1) {
        resent = stats.bytes_uploaded;
        CHECK(resent > in.byte_size());
      } else if (rows >= 24) {  // strips at least twice the halo: every row exactly once
        CHECK(stats.bytes_uploaded == in.byte_size());
      } else {  // shorter strips share only rows the previous strip uploaded itself
        CHECK(stats.bytes_uploaded < resent);
        CHECK(stats.bytes_uploaded > in.byte_size());
      }
    }
  }
}

namespace {
// A source that holds the streamer to the RowSource contract as a sequential file reader needs
// it: discard points never go back, reads never ask for discarded rows; it counts the rows it
// must keep, and its sink checks that rows come once, in order.
class StrictRows final : public clf::RowSource, public clf::RowSink {
 public:
  StrictRows(const clf::Image& in, clf::Image& out, bool second_reader = true)
      : in_(in), out_(out), second_(second_reader) {}
  clf::ImageShape shape() const override {
    return {in_.width(), in_.height(), in_.channels(), in_.type()};
  }
  // A wrap chain's far rows; without one, such a chain runs as one strip with the border rule.
  std::unique_ptr<clf::RowSource> second_reader() const override {
    return second_ ? std::make_unique<StrictRows>(in_, out_, false) : nullptr;
  }
  void discard_before(int row) override {
    if (row < discarded_)
      broken = "discard point went back from " + std::to_string(discarded_) + " to " +
               std::to_string(row);
    discarded_ = row;
  }
  void read(int begin, int end, std::byte* rows) override {
    if (begin < discarded_)
      broken = "read from " + std::to_string(begin) + " after discarding to " +
               std::to_string(discarded_);
    read_end_ = std::max(read_end_, end);
    max_kept = std::max(max_kept, read_end_ - discarded_);
    std::memcpy(rows, in_.row(begin), in_.row_bytes() * size_t(end - begin));
  }
  void write(int begin, int end, const std::byte* rows) override {
    if (begin != written_)
      broken = "wrote rows from " + std::to_string(begin) + " after " + std::to_string(written_);
    written_ = end;
    std::memcpy(out_.row(begin), rows, out_.row_bytes() * size_t(end - begin));
  }
  std::string broken;
  int max_kept = 0;

 private:
  const clf::Image& in_;
  clf::Image& out_;
  bool second_;
  int discarded_ = 0, read_end_ = 0, written_ = 0;
};
}  // namespace

TEST_CASE(
    "an allocation failure as the strips are made retries with smaller ones for a row source") {
  // A file being decoded cannot rewind; the strip buffers are made before its first row is read,
  // so a failure there retries as it does for an image in memory (EMBEDDING.md).
  const clf::Image in = test::random_image(512, 512, 1, clf::PixelType::f32, 2);
  const std::vector<std::string> chain = {"gaussian:sigma=1", "sobel"};
  clf::Image out(512, 512, 1, clf::PixelType::f32);
  StrictRows rows(in, out);
  auto device = test::device();
  clf::Pipeline p(device);
  for (const auto& s : chain) p.add(test::registry(), s);
  clf::RunOptions o;
  o.strip_rows = 256;
  clf::detail::DeviceTesting::set_alloc_limit(*device, device->bytes_in_use() + 2 * 1024 * 1024);
  clf::RunStats stats;
  try {
    stats = p.run(rows, rows, o);
  } catch (...) {
    clf::detail::DeviceTesting::set_alloc_limit(*device, 0);
    throw;
  }
  clf::detail::DeviceTesting::set_alloc_limit(*device, 0);
  INFO(stats.summary() << rows.broken);
  CHECK(rows.broken.empty());
  CHECK(stats.retries >= 1);
  CHECK(stats.strip_rows < 256);
  CHECK(test::identical(out, whole(chain, in)));
}

TEST_CASE(
    "a row source and sink stream the bytes of a whole-image run, reading forward with a bounded "
    "window") {
  const clf::Image in = test::random_image(53, 71, 2, clf::PixelType::u16, 33);
  const std::vector<std::vector<std::string>> chains = {
      {"gaussian:sigma=1.5,border=reflect"},
      {"box:radius=2,border=constant,border_value=9", "sobel:border=replicate"},
      {"convolve:kernel=1,2,1;0,0,0;-1,-2,-1", "gaussian:sigma=1,border=reflect101",
       "box:radius=1"},
      {"box:radius=1,border=wrap"},
      {"gaussian:sigma=1,border=wrap", "sobel:mode=x,border=wrap", "box:radius=2,border=wrap"},
  };
  for (const auto& chain : chains) {
    const clf::Image expect = whole(chain, in);
    {  // wrap chains run cyclically; without a second reader, as one strip with the border rule
      clf::Image one(in.width(), in.height(), in.channels(), in.type());
      StrictRows no_second(in, one, false);
      clf::Pipeline p(test::device());
      for (const auto& s : chain) p.add(test::registry(), s);
      p.run(no_second, no_second);
      REQUIRE(test::identical(one, expect));
    }
    clf::Pipeline p(test::device());
    for (const auto& s : chain) p.add(test::registry(), s);
    const int halo = p.halo().y;
    for (int rows : {1, 2, 5, 16, 71})
      for (int slots : {1, 2, 3}) {
        INFO("chain starting " << chain[0] << ", strip rows " << rows << ", slots " << slots);
        clf::Image out(in.width(), in.height(), in.channels(), in.type());
        StrictRows rows_io(in, out);
        clf::RunOptions o;
        o.strip_rows = rows;
        o.slots = slots;
        o.device_halo_copy_bytes =
            (rows + slots) % 2 ? 0 : uint64_t(1) << 40;  // shared rows on and off
        p.run(rows_io, rows_io, o);
        CHECK(rows_io.broken.empty());
        INFO(rows_io.broken);
        REQUIRE(test::identical(out, expect));
        CHECK(rows_io.max_kept <= rows + 2 * halo);  // a strip and its halo above and below
      }
  }
}

TEST_CASE("one image's strips spread over two devices give the one-device bytes, rows in order") {
  // A second GPU where the machine has one, else a second context on this device.
  const auto second = test::second_device();
  INFO("second device " << second->info().label());
  const clf::Image in = test::random_image(61, 97, 3, clf::PixelType::u8, 5);
  const std::vector<std::vector<std::string>> chains = {
      {"gaussian:sigma=1.5", "sobel"},
      {"box:radius=2,border=wrap", "sobel:border=wrap"},
      {"convolve:kernel=1,2,1;2,4,2;1,2,1,border=constant,border_value=3"},
  };
  for (const auto& chain : chains) {
    const clf::Image expect = whole(chain, in);
    clf::Pipeline both({test::device(), second});
    for (const auto& s : chain) both.add(test::registry(), s);
    REQUIRE(both.devices().size() == 2);
    for (int rows : {1, 4, 9, 40})
      for (int slots : {1, 2, 3}) {
        INFO("chain starting " << chain[0] << ", strip rows " << rows << ", slots " << slots);
        clf::RunOptions o;
        o.strip_rows = rows;
        o.slots = slots;
        clf::Image out;
        const clf::RunStats stats = both.run(in, out, o);
        CHECK(stats.devices == 2);
        CHECK_FALSE(stats.zero_copy);
        REQUIRE(test::identical(out, expect));
        clf::Image streamed(in.width(), in.height(), in.channels(), in.type());
        StrictRows rows_io(in, streamed);
        both.run(rows_io, rows_io, o);
        CHECK(rows_io.broken.empty());
        INFO(rows_io.broken);
        REQUIRE(test::identical(streamed, expect));
      }
  }
  clf::Pipeline by_hand({test::device(), second});
  const auto box = test::registry().get("box");
  auto filter = box->create(clf::validate_params("box", box->params(), {}), *test::device());
  CHECK_THROWS_WITH(by_hand.add(std::move(filter)),
                    Catch::Contains("runs on one device; this pipeline has 2"));
}

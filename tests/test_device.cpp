// Device choice, program building and the program cache.
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "support.hpp"
#include "tuning_database.hpp"

using Catch::Matchers::Contains;

TEST_CASE("at least one OpenCL device is listed") {
  auto devices = clf::list_devices();
  REQUIRE_FALSE(devices.empty());
  CHECK_FALSE(devices[0].name.empty());
  CHECK(devices[0].global_mem_bytes > 0);
}

TEST_CASE("an unknown device selector is a clear error listing the devices") {
  try {
    clf::Device::open("no-such-device-xyz");
    FAIL("expected an error");
  } catch (const clf::Error& e) {
    CHECK(e.kind() == clf::ErrorKind::device);
    CHECK_THAT(e.what(), Contains("no OpenCL device matches 'no-such-device-xyz'"));
    CHECK_THAT(e.what(), Contains(clf::list_devices()[0].name));
  }
  CHECK_THROWS_AS(clf::Device::open("7:7"), clf::Error);
}

TEST_CASE("devices are found by index, type and name") {
  auto first = clf::list_devices()[0];
  auto by_index = clf::Device::open(std::to_string(first.platform_index) + ":" +
                                    std::to_string(first.device_index));
  CHECK(by_index->info().name == first.name);
  auto by_name = clf::Device::open(first.name.substr(0, 6));
  CHECK(by_name->info().name == first.name);
  auto any = clf::Device::open();
  CHECK((any->info().is_gpu || any->info().is_cpu));
}

TEST_CASE("a kernel that fails to build reports the build log") {
  try {
    test::device()->build(
        "broken.cl", "__kernel void broken(__global float* p) { p[0] = undefined_thing; }", "");
    FAIL("expected a build error");
  } catch (const clf::Error& e) {
    CHECK(e.kind() == clf::ErrorKind::build);
    CHECK_THAT(e.what(), Contains("building OpenCL program 'broken.cl'"));
    CHECK_THAT(e.what(), Contains("undefined_thing"));
  }
}

TEST_CASE("programs are cached in memory and on disk", "[layout]") {
  // Unique per process, so that a cache left by an earlier run cannot answer for this one.
  const std::string source =
      "__kernel void cached_probe(__global float* p) { p[get_global_id(0)] += " +
      std::to_string(::getpid()) + ".0f; }";
  auto device = test::device();
  device->build("probe.cl", source, "-D PROBE=1");
  const size_t built = device->programs_built();
  device->build("probe.cl", source, "-D PROBE=1");
  CHECK(device->programs_built() == built);  // memory hit
  REQUIRE_FALSE(device->cache_dir().empty());
  // A program goes to disk from its second build on: each Device object (an empty memory cache)
  // builds it from source until a second has, and written it; later ones read it from disk. PoCL's
  // programs do so only without its own kernel cache (pocl_kernel_cache false, as
  // POCL_KERNEL_CACHE=0 gives); with it (the default) they are built from source every time (its
  // cache answers) and no binary is written.
  const std::string selector = std::to_string(device->info().platform_index) + ":" +
                               std::to_string(device->info().device_index);
  const bool pocl = device->info().platform_name == "Portable Computing Language";
  auto built_by_another = [&](const std::string& options, bool pocl_kernel_cache) {
    auto another = clf::Device::open(selector, {device->cache_dir(), 0, "", pocl_kernel_cache});
    another->build("probe.cl", source, options);
    return another->programs_built();
  };
  for (const bool pocl_kernel_cache : {false, true}) {
    const std::string options = pocl_kernel_cache ? "-D PROBE=2" : "-D PROBE=3";
    const bool on_disk = !(pocl && pocl_kernel_cache);
    CHECK(built_by_another(options, pocl_kernel_cache) == 1);
    CHECK(built_by_another(options, pocl_kernel_cache) == 1);
    CHECK(built_by_another(options, pocl_kernel_cache) == (on_disk ? 0u : 1u));
    CHECK(built_by_another(options + " -D PROBE_OTHER", pocl_kernel_cache) == 1);  // other options
  }
  // Without a cache directory (the library's default: it reads no environment), memory only.
  auto memory_only = clf::Device::open(selector);
  CHECK(memory_only->cache_dir().empty());
  memory_only->build("probe.cl", source, "-D PROBE=1");
  CHECK(memory_only->programs_built() == 1);
  // A cache directory nothing can be written to, root included (/proc/self): neither the marker
  // nor the binary lands, each Device builds from source, and no build fails for it.
  for (int twice = 0; twice < 2; ++twice) {
    auto unwritable = clf::Device::open(selector, {"/proc/self", 0, "", false});
    CHECK_NOTHROW(unwritable->build("probe.cl", source, "-D PROBE=5"));
    CHECK(unwritable->programs_built() == 1);
  }
}

TEST_CASE("a tuning set while other threads read it and make filters: each sees one whole tuning") {
  auto device = clf::Device::open(std::to_string(test::device()->info().platform_index) + ":" +
                                  std::to_string(test::device()->info().device_index));
  clf::Tuning a = device->tuning(), b = device->tuning();
  a.knobs["someplugin.value"] = "1";
  b.knobs["someplugin.value"] = "2";
  device->set_tuning(a);
  std::atomic<bool> done{false};
  std::atomic<int> odd{0}, reads{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 3; ++t)
    readers.emplace_back([&] {
      while (!done) {
        const clf::Tuning& seen = device->tuning();  // stays valid after later sets
        const double value = device->knob_number("someplugin.value", 0);
        odd += (value != 1 && value != 2) + (seen.knobs.at("someplugin.value").size() != 1);
        clf::Pipeline pipeline(device);
        pipeline.add(test::registry(), "box:radius=1");
        ++reads;
      }
    });
  // From the readers' first filter (its program built), 200 sets at least, and on, a
  // millisecond apart, until the readers have made 30 filters between them.
  while (reads < 1) std::this_thread::yield();
  for (int i = 0; i < 200 || reads < 30; ++i) {
    device->set_tuning(i % 2 ? a : b);
    if (i >= 200) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  device->set_tuning(a);
  done = true;
  for (std::thread& thread : readers) thread.join();
  CHECK(odd == 0);
  CHECK(device->knob_number("someplugin.value", 0) == 1);
  CHECK_THAT(device->tuning_source(), Catch::EndsWith(", then set by the program"));
}

TEST_CASE("threads building programs at once: each program is built once, errors reach all") {
  // Memory only (no cache directory): every build below is from source.
  auto device = clf::Device::open(std::to_string(test::device()->info().platform_index) + ":" +
                                  std::to_string(test::device()->info().device_index));
  const std::string source = "__kernel void many(__global float* p) { p[0] = P; }";
  constexpr int threads = 6;
  std::vector<cl_program> same(threads), own(threads);
  std::vector<std::string> errors(threads);
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      same[t] = device->build("same.cl", source, "-D P=1.f")();
      own[t] = device->build("own.cl", source, "-D P=" + std::to_string(t + 2) + ".f")();
      try {
        device->build("broken.cl", source, "-D P=no_such_value");
      } catch (const clf::Error& e) {
        errors[t] = e.what();
      }
    });
  for (std::thread& thread : pool) thread.join();
  for (int t = 0; t < threads; ++t) {
    CHECK(same[t] == same[0]);
    CHECK((t == 0 || own[t] != own[0]));
    CHECK_THAT(errors[t], Contains("building OpenCL program 'broken.cl'"));
  }
  // One "same", one "own" a thread; a failed build is not kept, so those count nothing.
  CHECK(device->programs_built() == size_t(1 + threads));
}

TEST_CASE("POCL_KERNEL_CACHE=0 puts PoCL's programs on disk as every other driver's") {
  const char* before = std::getenv("POCL_KERNEL_CACHE");
  const std::string saved = before ? before : "";
  ::setenv("POCL_KERNEL_CACHE", "0", 1);
  CHECK_FALSE(clf::read_environment().device_options().pocl_kernel_cache);
  ::setenv("POCL_KERNEL_CACHE", "1", 1);
  CHECK(clf::read_environment().device_options().pocl_kernel_cache);
  ::unsetenv("POCL_KERNEL_CACHE");
  CHECK(clf::read_environment().device_options().pocl_kernel_cache);
  if (before) ::setenv("POCL_KERNEL_CACHE", saved.c_str(), 1);
}

TEST_CASE("allocations are counted while they live") {
  auto device = test::device();
  const uint64_t before = device->bytes_in_use();
  {
    auto a = device->alloc(1 << 20, "probe");
    CHECK(device->bytes_in_use() == before + (1 << 20));
  }
  CHECK(device->bytes_in_use() == before);
}

TEST_CASE("a program gets clf/contract.h and only the helpers it names") {
  auto device = test::device();
  const std::string source =
      "__kernel void uses_border(__global int* p) { p[0] = clf_border_interpolate(p[1], 9, "
      "CLF_BORDER_WRAP); }";
  CHECK_NOTHROW(device->build("helpers.cl", source, "", clf::Helpers::border));
  CHECK_NOTHROW(device->build("helpers.cl", source, ""));  // all, by default
  // contract.h's numbers are there without any helper; border.clh's function is not.
  CHECK_NOTHROW(device->build("contract.cl",
                              "__kernel void k(__global int* p) { p[0] = CLF_PIXEL_F16; }", "",
                              clf::Helpers::none));
  CHECK_THROWS_AS(device->build("helpers.cl", source, "", clf::Helpers::stage), clf::Error);
}

TEST_CASE("tuning fields by name: every field's text sets it back, bad names and values refused") {
  const clf::Tuning device_tuning = test::device()->tuning();
  clf::Tuning t = device_tuning;
  const std::vector<std::string> names = clf::tuning_field_names();
  CHECK(names.size() == 26);  // every field of clf::Tuning (clf/device.hpp)
  for (const std::string& name : names) {
    INFO(name);
    const std::string text = clf::tuning_field(t, name);
    clf::set_tuning_field(t, name, text);
    CHECK(clf::tuning_field(t, name) == text);
  }
  CHECK(clf::tuning_text(t) == clf::tuning_text(device_tuning));
  // The whole text applied to defaults gives the device's tuning back.
  clf::Tuning fresh;
  clf::apply_tuning_text(fresh, clf::tuning_text(device_tuning));
  CHECK(clf::tuning_text(fresh) == clf::tuning_text(device_tuning));
  clf::apply_tuning_text(t, "separable_columns=5:256:16 21:0:0,variant=tiled,fft_tap_cost=12.5");
  REQUIRE(t.separable_columns.size() == 2);
  CHECK(t.separable_columns[0].width == 256);
  CHECK(t.separable_columns[1].min_radius == 21);
  CHECK(t.variant == clf::Variant::tiled);
  CHECK(t.fft_tap_cost == 12.5);
  clf::set_tuning_field(t, "block_rows", "");
  CHECK(t.block_rows.empty());
  const std::pair<const char*, const char*> bad[] = {
      {"no_such_field=1", "unknown tuning field 'no_such_field'"},
      {"tile_width=-3", "tuning tile_width: expected a whole number >= 0 (got '-3')"},
      {"variant=fast", "tuning variant: expected direct or tiled (got 'fast')"},
      {"taps_by_value=yes", "tuning taps_by_value: expected 0 or 1"},
      {"separable_columns=5:256", "tuning separable_columns: expected entries"},
      {"fft_tap_cost=nan", "tuning fft_tap_cost: expected a number >= 0"},
      {"variant", "tuning: expected NAME=VALUE (got 'variant')"},
  };
  for (const auto& [text, words] : bad) {
    INFO(text);
    try {
      clf::apply_tuning_text(t, text);
      FAIL("accepted");
    } catch (const clf::Error& e) {
      CHECK(e.kind() == clf::ErrorKind::usage);
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  }
}

namespace {
clf::DeviceInfo device_named(const std::string& name, bool gpu, const std::string& platform) {
  clf::DeviceInfo info;
  info.name = name;
  info.vendor = gpu ? "NVIDIA Corporation" : "GenuineIntel";
  info.platform_name = platform;
  info.is_gpu = gpu;
  info.is_cpu = !gpu && platform == "Portable Computing Language";
  return info;
}
}  // namespace

TEST_CASE("the tuning database: each device takes its sections, general to particular") {
  using clf::detail::apply_tuning_database;
  using clf::detail::tuning_database;
  clf::Tuning h200, h100, pocl, other;
  CHECK(apply_tuning_database(h200, device_named("NVIDIA H200", true, "NVIDIA CUDA"),
                              tuning_database()) == std::vector<std::string>{"gpu", "device H200"});
  CHECK(apply_tuning_database(h100, device_named("NVIDIA H100 80GB HBM3", true, "NVIDIA CUDA"),
                              tuning_database()) == std::vector<std::string>{"gpu", "device H100"});
  CHECK(apply_tuning_database(
            pocl, device_named("cpu-haswell-AMD EPYC", false, "Portable Computing Language"),
            tuning_database()) == std::vector<std::string>{"cpu"});
  CHECK(apply_tuning_database(other, device_named("Some DSP", false, "Vendor X"), tuning_database())
            .empty());
  CHECK(h200.separable_columns_tile_rows == 64);  // the H200's own measurement
  CHECK(h100.separable_columns_tile_rows == 32);
  CHECK(h100.vector_width == 4);
  CHECK(h100.knobs.at("bilateral.pair_outputs_1ch") == "4");  // the H100's tuning run
  CHECK(h200.knobs.at("bilateral.pair_outputs_1ch") == "8");
  CHECK(pocl.vector_width == 16);
  CHECK(clf::tuning_text(other) == clf::tuning_text(clf::Tuning()));
  CHECK(h200.knobs.at("gaussian.fast_min_sigma") == "9");  // a plugin's knob, kept as text
  CHECK(pocl.knobs.count("gaussian.fast_min_sigma") == 0);

  // A more particular section applies later wherever it is written; one rank in file order.
  clf::Tuning t;
  apply_tuning_database(t, device_named("NVIDIA H200", true, "NVIDIA CUDA"),
                        "[device H200]\ntile_width = 7\n[gpu]\ntile_width = 5\nvectors = 2\n"
                        "[vendor nvidia]\nvectors = 3\n[gpu]\nvectors = 4\n");
  CHECK(t.tile_width == 7);
  CHECK(t.vectors == 3);

  const std::pair<const char*, const char*> bad[] = {
      {"[gpu]\n[tpu]\n", "tuning database line 2: unknown section [tpu]"},
      {"vector_width = 4\n", "tuning database line 1: a value before any [section]"},
      {"[gpu]\nvector_width 4\n", "tuning database line 2: expected NAME = VALUE"},
      {"[device]\n", "tuning database line 1: [device TEXT] needs the text"},
      // Checked even where no device here matches it.
      {"# c\n[device nothing here]\n\nvector_with = 4\n",
       "tuning database line 4: unknown tuning field 'vector_with'"},
      {"[cpu]\ngaussian.fast_min_sigma = fast\n",
       "tuning database line 2: tuning gaussian.fast_min_sigma: expected a number"},
  };
  for (const auto& [text, words] : bad) {
    INFO(text);
    try {
      apply_tuning_database(t, device_named("NVIDIA H200", true, "NVIDIA CUDA"), text);
      FAIL("accepted");
    } catch (const clf::Error& e) {
      CHECK(e.kind() == clf::ErrorKind::usage);
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  }
}

TEST_CASE("a device says where its tuning came from, and plugins read it by name") {
  auto device = clf::Device::open(test::device()->info().is_gpu ? "gpu" : "cpu");
  CHECK_THAT(device->tuning_source(), Catch::StartsWith("database ["));
  CHECK(device->knob("vector_width") == std::to_string(device->tuning().vector_width));
  CHECK(device->knob_number("vector_width", -1) == device->tuning().vector_width);
  CHECK(device->knob("variant") == clf::variant_name(device->tuning().variant));
  CHECK(device->knob("someplugin.knob", "fallback") == "fallback");
  CHECK(device->knob_number("someplugin.knob", 2.5) == 2.5);
  CHECK_THROWS_WITH(device->knob_number("variant", 0), Contains("not a number"));
  CHECK_THROWS_WITH(device->knob("no_such_field"), Contains("unknown tuning field"));
  clf::Tuning t = device->tuning();
  t.knobs["someplugin.knob"] = "7";
  device->set_tuning(t);
  CHECK(device->knob_number("someplugin.knob", 2.5) == 7);
  CHECK_THAT(device->tuning_source(), Catch::EndsWith(", then set by the program"));
}

namespace {
// The test's kind of device with a cache directory of its own, `name` under the temporary
// directory, emptied first.
std::shared_ptr<clf::Device> device_with_cache(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() / (name + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  clf::DeviceOptions options;
  options.cache_dir = dir.string();
  return clf::Device::open(test::device()->info().is_gpu ? "gpu" : "cpu", options);
}
}  // namespace

TEST_CASE("a tuning run stopped while it builds (the CLI's Ctrl-C) stops its threads, keeps nothing") {
  auto device = device_with_cache("clf_tune_stop_");
  const std::string before = clf::tuning_text(device->tuning());
  clf::TuneOptions small;
  small.sizes = {{64, 48}};
  small.build_threads = 2;
  std::vector<std::string> lines;
  small.progress = [&](const std::string& line) {
    lines.push_back(line);
    if (line.find(" built 1/") != std::string::npos) throw std::runtime_error("interrupted");
  };
  CHECK_THROWS_WITH(clf::tune(device, test::registry(), small), "interrupted");
  REQUIRE(lines.size() == 2);  // "window building ...", "window built 1/N": nothing after
  CHECK_THAT(lines[0], Catch::StartsWith("window building "));
  CHECK(clf::tuning_text(device->tuning()) == before);
  CHECK_FALSE(std::filesystem::exists(clf::tuned_file(*device)));
  std::filesystem::remove_all(device->cache_dir());
}

TEST_CASE("a tuning run for a chain measures every family on it too and says so in its file") {
  auto device = device_with_cache("clf_tune_chain_");
  clf::TuneOptions chain;
  chain.sizes = {{80, 64}};
  chain.chain = {"gaussian:sigma=2", "sobel"};
  const auto results = clf::tune(device, test::registry(), chain);
  CHECK(results.size() == clf::tune_families(device->info()).size());
  for (const clf::TuneResult& r : results) CHECK(r.chosen_ms > 0);
  std::ifstream file(clf::tuned_file(*device));
  const std::string text((std::istreambuf_iterator<char>(file)), {});
  CHECK_THAT(text, Contains("per run of the family's workloads and the chain gaussian:sigma=2 + "
                            "sobel at 80x64."));
  // A filter the registry does not have is named, and nothing is kept.
  std::filesystem::remove(clf::tuned_file(*device));
  chain.chain = {"sobel", "no_such_filter"};
  CHECK_THROWS_WITH(clf::tune(device, test::registry(), chain), Contains("no_such_filter"));
  CHECK_FALSE(std::filesystem::exists(clf::tuned_file(*device)));
  std::filesystem::remove_all(device->cache_dir());
}

TEST_CASE("a tuning run keeps each family's fastest layout, and later devices open with it") {
  const auto dir = std::filesystem::temp_directory_path() / ("clf_tune_" + std::to_string(getpid()));
  std::filesystem::remove_all(dir);
  clf::DeviceOptions options;
  options.cache_dir = dir.string();
  options.alloc_limit = 32 << 20;
  const std::string selector = test::device()->info().is_gpu ? "gpu" : "cpu";
  auto device = clf::Device::open(selector, options);
  const std::string database = clf::tuning_text(device->tuning());
  clf::TuneOptions small;
  // A candidate's time is summed over the sizes measured: 4096^2 has no room and is left out.
  small.sizes = {{96, 80}, {64, 48}, {4096, 4096}};
  // Each family's programs built on two threads before any candidate is timed: the programs
  // built so far, at each line.
  small.build_threads = 2;
  std::vector<std::string> lines;
  std::vector<size_t> built;
  size_t changed = 0;  // lines at which the device's own tuning was not what it was
  small.progress = [&](const std::string& line) {
    lines.push_back(line);
    built.push_back(device->programs_built());
    changed += clf::tuning_text(device->tuning()) != database;
  };
  const std::vector<clf::TuneResult> results = clf::tune(device, test::registry(), small);
  const std::vector<clf::TuneFamily> families = clf::tune_families(device->info());
  REQUIRE(results.size() == families.size());
  CHECK(changed == 0);  // candidates are measured on a twin: the device changes once, at the end
  size_t measured = 0;
  for (size_t f = 0; f < results.size(); ++f) {
    INFO(results[f].family);
    CHECK(results[f].family == families[f].name);
    CHECK(results[f].candidates == int(families[f].candidates.size()));
    CHECK(results[f].chosen_ms > 0);
    CHECK(results[f].chosen_ms <= results[f].database_ms);
    CHECK_THAT(results[f].summary(),
               Catch::StartsWith(results[f].family + ": ") &&
                   Contains(results[f].chosen.empty() ? "the database's layout" : results[f].chosen));
    const auto& c = families[f].candidates;
    CHECK((results[f].chosen.empty() || std::count(c.begin(), c.end(), results[f].chosen) == 1));
    measured += c.size() + 1;
    // Timing the candidates at the first size built nothing: from the database's line to the
    // last candidate's, the count stands.
    const std::string name = results[f].family + " ";
    auto line_of = [&](const std::string& start) {
      return size_t(std::find_if(lines.begin(), lines.end(),
                                 [&](const std::string& l) { return l.rfind(name + start, 0) == 0; }) -
                    lines.begin());
    };
    const size_t building = line_of("building "), first = line_of("0/"),
                 last = line_of(std::to_string(c.size()) + "/");
    REQUIRE(last < lines.size());
    if (building < lines.size()) {
      // "building N layouts' programs on 2 threads", then "built 1/N" to "built N/N".
      const size_t layouts = std::stoul(lines[building].substr(name.size() + 9));
      CHECK_THAT(lines[building], Contains(" layouts' programs on 2 threads"));
      CHECK(building + layouts + 1 == first);
      for (size_t k = 1; k <= layouts && building + k < lines.size(); ++k)
        CHECK(lines[building + k] ==
              name + "built " + std::to_string(k) + "/" + std::to_string(layouts));
      CHECK(built[first] == built[last]);
      measured += layouts + 1;
    }
  }
  // A line per candidate, the database's included, one for the fastest measured again, and for
  // each family whose programs were built first (every family with a candidate not the
  // database's layout) one and one per layout built.
  CHECK(lines.size() == measured + results.size());
  const std::string path = clf::tuned_file(*device);
  CHECK(path.rfind(dir.string(), 0) == 0);
  REQUIRE(std::filesystem::exists(path));
  {
    std::ifstream file(path);
    const std::string text((std::istreambuf_iterator<char>(file)), {});
    CHECK_THAT(text, Contains("per run of the family's workloads at 96x80 64x48."));
  }
  // The bilateral's families measured on their own images, u8 of 1 and 3 channels: the device
  // already has the programs a pipeline of those needs.
  for (const int channels : {1, 3}) {
    INFO(channels << " channels");
    const auto family = std::find_if(families.begin(), families.end(), [&](const auto& f) {
      return f.type == clf::PixelType::u8 && f.channels == channels &&
             f.workloads.front().rfind("bilateral:", 0) == 0;
    });
    if (family == families.end()) {  // CPUs tune three channels only
      CHECK(channels == 1);
      CHECK_FALSE(device->info().is_gpu);
      continue;
    }
    const size_t before = device->programs_built();
    clf::DeviceImage in(device, 64, 48, channels, clf::PixelType::u8);
    clf::DeviceImage out(device, 64, 48, channels, clf::PixelType::u8);
    in.write(test::random_image(64, 48, channels, clf::PixelType::u8, 3));
    clf::Pipeline pipeline(device);
    pipeline.add(test::registry(), family->workloads.front());
    pipeline.run(in, out);
    out.wait();
    CHECK(device->programs_built() == before);
  }
  // The device now runs the winners; a device opened later starts from them.
  clf::Tuning expect;
  clf::apply_tuning_text(expect, database);
  for (const auto& r : results) clf::apply_tuning_text(expect, r.chosen);
  CHECK(clf::tuning_text(device->tuning()) == clf::tuning_text(expect));
  auto later = clf::Device::open(selector, options);
  CHECK(clf::tuning_text(later->tuning()) == clf::tuning_text(expect));
  CHECK_THAT(later->tuning_source(), Contains("tuned (" + path + ")"));
  {
    // A second run that cannot write its results (its temporary file's name is taken by a
    // directory; a disk-full limit here would also stop the OpenCL compiler's own cache): the
    // first run's file stays as it was, byte for byte, and the device keeps the tuning it had.
    // (On the first run's device, whose programs are built: the run costs no compiling.)
    std::ifstream kept_file(path, std::ios::binary);
    const std::string kept((std::istreambuf_iterator<char>(kept_file)), {});
    const std::string tuning_before = clf::tuning_text(device->tuning());
    std::filesystem::create_directory(path + ".tmp");
    std::string error;
    try {
      clf::tune(device, test::registry(), small);
    } catch (const clf::Error& e) {
      CHECK(e.kind() == clf::ErrorKind::io);
      error = e.what();
    }
    CHECK_THAT(error, Contains("cannot write the tuning run's results to " + path));
    std::ifstream after_file(path, std::ios::binary);
    CHECK(std::string((std::istreambuf_iterator<char>(after_file)), {}) == kept);
    CHECK_FALSE(std::filesystem::exists(path + ".tmp"));
    CHECK(clf::tuning_text(device->tuning()) == tuning_before);
  }
  // A file that no longer parses is named, with what to do.
  std::ofstream(path, std::ios::app) << "vector_width = many\n";
  CHECK_THROWS_WITH(clf::Device::open(selector, options),
                    Contains("tuned file " + path) && Contains("clfilter --tune again"));
  std::filesystem::remove_all(dir);
  // Without a cache directory there is nowhere to keep the results.
  CHECK_THROWS_WITH(clf::tune(clf::Device::open(selector), test::registry(), small),
                    Contains("cache directory"));
}

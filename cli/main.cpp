// clfilter: run a chain of OpenCL image filters over an image file.
//   clfilter IN OUT --filter NAME[:key=value,...] [--filter ...] [options]
// Exit codes: 0 done, 1 failed (file, device, plugin), 2 bad command line, 130 interrupted.
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <future>
#include <iostream>
#include <mutex>
#include <new>
#include <optional>
#include <sstream>
#include <thread>

#include "batch.hpp"
#include "clf/clf.hpp"
#include "io_module.hpp"
#include "jobs.hpp"
#include "jpeg_io.hpp"
#include "row_files.hpp"

namespace {

std::atomic<bool> interrupted{false};

// SIGINT, SIGTERM and SIGHUP are blocked in every thread from the first line of main (threads
// inherit the mask, so no library thread takes them) and taken by one thread in sigwait, which
// sets `interrupted`. A signal handler would not do: LLVM, which PoCL loads while the device
// opens, installs its own handlers over ours, and a Ctrl-C in that window was lost. A signal sent
// before main runs stays pending (when the sender blocked it) or ends the process before any file
// is touched. Every stage checks `interrupted`: exit 130, OUT untouched, no temporary file.
// A signal the parent left ignored stays ignored (nohup's SIGHUP, SIGINT in a script's `cmd &`).
void watch_signals() {
  static sigset_t set;
  sigemptyset(&set);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction inherited {};
    if (sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler != SIG_IGN)
      sigaddset(&set, sig);
  }
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  std::thread([] {
    for (;;) {
      int sig = 0;
      if (sigwait(&set, &sig) == 0) interrupted = true;
    }
  }).detach();
}

void check_interrupted(const std::string& where) {
  if (interrupted) throw clf::Error(clf::ErrorKind::cancelled, "interrupted " + where);
}

const char* const usage_text =
    R"(usage: clfilter IN OUT --filter NAME[:key=value,...] [--filter ...] [options]
       clfilter IN... --output-dir DIR --filter ... [--jobs N]
       clfilter IN_PATTERN OUT_PATTERN --frames LIST --filter ...
       clfilter --list-filters [NAME] | --list-devices | --help | --version

Runs OpenCL image filters over IN and writes OUT (any format OpenImageIO reads and
writes: EXR, PNG, TIFF, JPEG, ...). Filters apply in the order given, fused on the
device. Files stream through in strips: memory stays at a few strips whatever
the image size. OUT keeps IN's pixel type, channels and metadata; it is written
to a temporary file and renamed, so a failed run never leaves a partial OUT, and
IN == OUT is safe.

Batches (one process, the device opened once, pipelines kept warm):
  -o, --output-dir DIR     every argument is an input, written to DIR/<its name>
  --frames LIST            IN and OUT are frame patterns (# = 4 digits, @ = 1 digit,
                           %04d); LIST is 1-100, 1-100x5 (every 5th) or 1,5,9
  -j, --jobs N             files in flight (default: one per core, at most 4)
                           A file that fails is named and the others go on (exit 1).

Filters (see --list-filters for every parameter):
  -f, --filter SPEC        NAME or NAME:key=value,key=value
                             --filter gaussian:sigma=2
                             --filter gaussian:sigma=60,method=fast
                             --filter sobel:mode=x,ksize=5
                             --filter box:radius=3,border=wrap
                             --filter 'convolve:kernel=0,-1,0;-1,5,-1;0,-1,0'
                           Borders (every filter): border=replicate|reflect|
                           reflect101|wrap|constant (default reflect101, as OpenCV)

Device:
  --device SEL             gpu, cpu, P:D (platform:device index from --list-devices)
                           or part of a device name; env CLF_DEVICE. Default: the
                           first GPU, else the CPU (PoCL). Several: a comma-separated
                           list, or all (every GPU, else every device). A batch gives
                           each device whole files; one file sends its strips to
                           each device in turn.
  --variant tiled|direct   kernel variant. tiled: 2-D windows are staged in local
                           memory, separable filters run in one pass that keeps its
                           row results there; direct: global-memory reads, separable
                           filters in two passes. Default per device, as measured:
                           GPUs direct 2-D and tiled separable, CPUs direct;
                           env CLF_VARIANT
  --tile WxH[/G]           tiled: W x H outputs per work-group of G work-items; direct
                           on GPUs: H rows of 4 outputs per work-item, G per group.
                           W a multiple of 4. Default 248x4/64; env CLF_TILE

Streaming:
  --strip-rows N           rows per strip (default: 4 MiB of pixels on GPUs, of
                           float planes on CPUs, at least 4x the chain's halo
                           on GPUs, 2x on CPUs, within the memory budget)
  --slots N                strips in flight, ring of N buffers (default 3)
  --queues 1|3             3 = separate upload/compute/download queues (default);
                           1 = one in-order queue, for comparison
  --max-device-memory SZ   device memory budget, e.g. 64M, 2G (default: half the
                           device's memory)
  --zero-copy on|off       on CPU devices, kernels read and write the images in
                           place instead of copying strips (default on)

Output and diagnostics:
  --quality N              JPEG (and WebP, HEIF) quality 1-100 (default: a JPEG
                           input's own, estimated from its quantization tables,
                           else 98). JPEGs are written baseline: a progressive
                           encoder would hold every coefficient of the image
  --compression NAME       the output's compression as oiiotool names it: zip,
                           piz, dwaa, lzw, none, jpeg:85, ... (default: the
                           input's); goes through OpenImageIO (--io oiio)
  --io auto|oiio           auto (default): JPEG to JPEG through libjpeg-turbo alone,
                           0.4 s sooner (no OpenImageIO to load), same pixels,
                           metadata segments copied byte for byte; every other
                           file through OpenImageIO. oiio: every file through it
  --stats                  print wall time, per-queue busy time and overlap ratio
  --trace FILE.json        write a Chrome trace-event file (open in ui.perfetto.dev)
  --plugin-dir DIR         load plugins from DIR first (repeatable); also env
                           CLF_PLUGIN_PATH (colon list)
  -v, --verbose            print the device, each filter as built, the strip layout
  -q, --quiet              print nothing but errors and warnings of what the output
                           loses (parts, MIP levels, channels)
  -h, --help               this text
  --version                print the version

Exit status: 0 done, 1 failed (file, device, plugin), 2 bad command line,
130 interrupted (Ctrl-C, SIGTERM: OUT is left exactly as it was).

Examples:
  clfilter photo.png edges.png --filter sobel
  clfilter in.exr out.exr -f gaussian:sigma=2 -f sobel -f box:radius=1 --stats
  clfilter big.tif big.tif --filter gaussian:sigma=8 --device cpu --max-device-memory 64M
  clfilter shots/*.jpg --output-dir soft/ -f gaussian:sigma=3 --jobs 2
  clfilter 'plate.#.exr' 'plate_dx.#.exr' --frames 1001-1100 -f sobel:mode=x
)";

struct Options {
  std::vector<std::string> positional, filters, plugin_dirs;
  std::string device, variant, tile, trace, output_dir, frames, io = "auto";
  std::string variant_from = "--variant", tile_from = "--tile";  // named in errors
  clf::Environment env;  // read once, in main's thread, before any other
  int jobs = 0;          // 0: one per core, at most 4
  std::optional<std::string> list_filters;
  clf::OutputOptions output;
  bool list_devices = false, help = false, version = false, stats = false, quiet = false,
       verbose = false;
  clf::RunOptions run;
};

clf::Error usage_error(const std::string& message) {
  return clf::Error(clf::ErrorKind::usage, message);
}

int parse_int(const std::string& option, const std::string& value, int min, int max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || v < min || v > max)
    throw usage_error(option + " expects a whole number in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "] (got '" + value + "')");
  return int(v);
}

uint64_t parse_size(const std::string& option, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  std::string unit = end ? end : "";
  double scale = 1;
  if (unit == "K" || unit == "k" || unit == "KiB")
    scale = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB")
    scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty())
    scale = 0;
  if (value.empty() || errno || scale == 0 || !(v > 0) || v * scale > 1e15)
    throw usage_error(option + " expects a size such as 64M or 2G (got '" + value + "')");
  // Below 1 MiB no strip of any useful image fits: refused here, not after the file is opened.
  if (v * scale < 1024.0 * 1024)
    throw usage_error(option + " " + value + " is " + std::to_string(uint64_t(v * scale)) +
                      " bytes; the smallest budget is 1M (e.g. 64M, 2G; a unit K, M or G)");
  return uint64_t(v * scale);
}

Options parse_args(int argc, char** argv) {
  Options o;
  // The environment gives defaults; the command line overrides them.
  o.env = clf::read_environment();
  o.device = o.env.device;
  if (!o.env.variant.empty()) o.variant = o.env.variant, o.variant_from = "CLF_VARIANT";
  if (!o.env.tile.empty()) o.tile = o.env.tile, o.tile_from = "CLF_TILE";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i], value;
    bool has_inline = false;
    if (arg.rfind("--", 0) == 0)
      if (auto eq = arg.find('='); eq != std::string::npos) {
        value = arg.substr(eq + 1);
        arg = arg.substr(0, eq);
        has_inline = true;
      }
    auto next = [&]() -> std::string {
      if (has_inline) return value;
      if (i + 1 >= argc) throw usage_error(arg + " needs a value (see --help)");
      return argv[++i];
    };
    if (arg == "-f" || arg == "--filter")
      o.filters.push_back(next());
    else if (arg == "--device")
      o.device = next();
    else if (arg == "--plugin-dir")
      o.plugin_dirs.push_back(next());
    else if (arg == "--variant")
      o.variant = next(), o.variant_from = "--variant";
    else if (arg == "--tile")
      o.tile = next(), o.tile_from = "--tile";
    else if (arg == "--strip-rows")
      o.run.strip_rows = parse_int(arg, next(), 1, 1 << 30);
    else if (arg == "--slots")
      o.run.slots = parse_int(arg, next(), 1, 64);
    else if (arg == "--queues") {
      o.run.queues = parse_int(arg, next(), 1, 3);
      if (o.run.queues == 2) throw usage_error("--queues expects 1 or 3 (got 2)");
    } else if (arg == "--quality") {
      o.output.quality = parse_int(arg, next(), 1, 100);
    } else if (arg == "--compression") {
      o.output.compression = next();
    } else if (arg == "--max-device-memory")
      o.run.max_device_memory = parse_size(arg, next());
    else if (arg == "--zero-copy") {
      const std::string v = next();
      if (v != "on" && v != "off")
        throw usage_error("--zero-copy expects on or off (got '" + v + "')");
      o.run.zero_copy = v == "on";
    } else if (arg == "--io") {
      o.io = next();
      if (o.io != "auto" && o.io != "oiio")
        throw usage_error("--io expects auto or oiio (got '" + o.io + "')");
    } else if (arg == "--stats")
      o.stats = true;
    else if (arg == "--trace")
      o.trace = next();
    else if (arg == "-o" || arg == "--output-dir")
      o.output_dir = next();
    else if (arg == "--frames")
      o.frames = next();
    else if (arg == "-j" || arg == "--jobs")
      o.jobs = parse_int(arg, next(), 1, 256);
    else if (arg == "--list-filters") {
      o.list_filters = "";
      if (has_inline)
        o.list_filters = value;
      else if (i + 1 < argc && argv[i + 1][0] != '-')
        o.list_filters = argv[++i];
    } else if (arg == "--list-devices")
      o.list_devices = true;
    else if (arg == "-q" || arg == "--quiet")
      o.quiet = true;
    else if (arg == "-v" || arg == "--verbose")
      o.verbose = true;
    else if (arg == "-h" || arg == "--help")
      o.help = true;
    else if (arg == "--version")
      o.version = true;
    else if (arg.size() > 1 && arg[0] == '-')
      throw usage_error("unknown option '" + arg + "' (see --help)");
    else
      o.positional.push_back(arg);
  }
  return o;
}

void print_filters(const clf::Registry& registry, const std::string& only) {
  auto factories = registry.factories();
  if (!only.empty()) factories = {registry.get(only)};
  for (const auto& f : factories) {
    std::cout << f->name() << " - " << f->summary() << "\n";
    for (const auto& p : f->params()) {
      std::string type = clf::param_type_name(p.type);
      if (p.type == clf::ParamType::enum_) {
        type.clear();
        for (const auto& c : p.choices) type += (type.empty() ? "" : "|") + c;
      }
      std::cout << "    " << p.name << " (" << type;
      if (!p.default_value.empty()) std::cout << ", default " << p.default_value;
      if (p.type == clf::ParamType::float_ || p.type == clf::ParamType::int_)
        std::cout << ", " << p.range_text();
      std::cout << ")\n        " << p.help << "\n";
    }
    std::cout << "\n";
  }
  if (factories.empty()) std::cout << "no filters found; searched:";
  if (factories.empty())
    for (const auto& d : registry.searched_dirs()) std::cout << " " << d;
  if (factories.empty()) std::cout << "\n";
}

void report_plugin_issues(const clf::Registry& registry, bool quiet) {
  if (quiet) return;
  for (const auto& issue : registry.issues())
    std::cerr << "clfilter: warning: plugin " << issue.path << ": " << issue.reason << "\n";
}

// One line on stderr that a long job redraws: strips of one file, or files of a batch. Updated
// from any thread; drawn only on a terminal, and only after half a second.
class Progress {
 public:
  Progress(bool enabled, const char* unit)
      : enabled_(enabled && ::isatty(STDERR_FILENO)), unit_(unit), start_(Clock::now()) {}
  void update(int done, int total) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enabled_ || Clock::now() - start_ < std::chrono::milliseconds(500)) return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\rclfilter: [%.*s%*s] %d/%d %s", filled, "##############################",
                 width - filled, "", done, total, unit_);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  bool enabled_, shown_ = false;
  const char* unit_;
  Clock::time_point start_;
};

using Chain = std::vector<std::pair<std::shared_ptr<const clf::FilterFactory>, clf::FilterSpec>>;

// Everything that can be checked without the device or the pixels: each spec parsed, its filter
// found and its parameters validated.
Chain check_chain(const clf::Registry& registry, const std::vector<std::string>& filters) {
  if (filters.empty())
    throw usage_error("no --filter given (e.g. --filter sobel; --list-filters shows them all)");
  Chain chain;
  for (const auto& text : filters) {
    clf::FilterSpec spec = clf::parse_filter_spec(text);
    auto factory = registry.get(spec.name);
    clf::validate_params(factory->name(), factory->params(), spec.params);
    chain.emplace_back(factory, spec);
  }
  return chain;
}

clf::Variant parse_variant(const std::string& text, const std::string& what) {
  if (text == "tiled") return clf::Variant::tiled;
  if (text == "direct") return clf::Variant::direct;
  throw clf::Error(clf::ErrorKind::usage,
                   what + ": unknown variant '" + text + "' (expected tiled or direct)");
}

// "WxH" or "WxH/G" into tuning's tile (group width from W when G is not given).
void parse_tile(const std::string& text, clf::Tuning& tuning, const std::string& what) {
  int w = 0, h = 0, g = 0, used = 0;
  const int n = std::sscanf(text.c_str(), "%dx%d%n/%d%n", &w, &h, &used, &g, &used);
  if (n < 2 || used != int(text.size()) || w < 4 || w % 4 != 0 || h < 1 || w > 4096 || h > 64 ||
      (n == 3 && (g < 1 || g > 1024)))
    throw clf::Error(clf::ErrorKind::usage,
                     what +
                         " expects WxH or WxH/G with W a multiple of 4 up to 4096, "
                         "H <= 64 and G <= 1024, e.g. 248x4/64 (got '" +
                         text + "')");
  tuning.tile_width = w;
  tuning.tile_height = h;
  tuning.group_width = n == 3 ? g : std::min(w / 4, 128);
}

// The devices --device names (one, a comma-separated list, or all), with the command line's
// kernel variant and tile (else CLF_VARIANT and CLF_TILE).
std::vector<std::shared_ptr<clf::Device>> open_devices(const Options& o) {
  std::optional<clf::Variant> variant;
  if (!o.variant.empty()) variant = parse_variant(o.variant, o.variant_from);
  clf::Tuning tile;
  if (!o.tile.empty()) parse_tile(o.tile, tile, o.tile_from);
  auto devices = clf::open_devices(o.device, o.env.device_options());
  check_interrupted("while opening the device");
  for (auto& device : devices) {
    clf::Tuning tuning = device->tuning();
    if (variant) tuning.variant = tuning.separable_variant = *variant;
    if (!o.tile.empty()) {
      tuning.tile_width = tile.tile_width;
      tuning.tile_height = tile.tile_height;
      tuning.group_width = tile.group_width;
    }
    device->set_tuning(tuning);
    if (o.verbose) std::cerr << "clfilter: device " << device->info().label() << "\n";
  }
  return devices;
}

// A pipeline with the chain built on `devices` (programs come from the device's cache after the
// first pipeline). A build cut short by Ctrl-C is reported as the interrupt it is.
std::unique_ptr<clf::Pipeline> build_pipeline(
    const std::vector<std::shared_ptr<clf::Device>>& devices, const Chain& chain, bool verbose) {
  auto pipeline = std::make_unique<clf::Pipeline>(devices);
  for (auto& [factory, spec] : chain) {
    try {
      pipeline->add(factory, spec.params);
    } catch (const clf::Error&) {
      check_interrupted("while building " + spec.name);
      throw;
    }
    check_interrupted("after building " + spec.name);
    if (verbose)
      std::cerr << "clfilter: filter " << pipeline->filter(pipeline->size() - 1).describe() << "\n";
  }
  return pipeline;
}

// The codecs for one job: JPEG to JPEG through libjpeg-turbo without loading OpenImageIO (see
// jpeg_io.hpp), unless --io oiio; every other file through the OpenImageIO module.
const clf::IoModule& file_io(const Options& o, const clf::FileJob& job) {
  const clf::IoModule& io = clf::file_io(o.io, job);
  check_interrupted("while loading the image-file module");
  return io;
}

// What a file loses (parts, MIP levels, channels, colour spaces): printed even under -q, which
// silences progress and reports, never a warning about the user's data.
void print_warnings(const std::vector<std::string>& warnings) {
  for (const auto& warning : warnings) std::cerr << "clfilter: warning: " << warning << "\n";
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// IN OUT: the file is streamed (its header first, so a bad IN fails before the device opens;
// then its rows strip by strip, decoded on this thread and encoded on the streamer's landing
// thread while the device works), written to a temporary file, renamed over OUT.
int run_one(const Options& o, const clf::Registry& registry, const clf::FileJob& job) {
  const Chain chain = check_chain(registry, o.filters);
  const clf::IoModule& io = file_io(o, job);
  io.check_writable(job.out);
  if (o.verbose && &io == &clf::jpeg_io())
    std::cerr << "clfilter: JPEG to JPEG through libjpeg-turbo (OpenImageIO not loaded)\n";
  const std::unique_ptr<clf::InputFile> input = io.open_input(job.in, &interrupted);
  print_warnings(input->warnings());
  // The first rows decode on a second thread while this one opens the devices (PoCL: ~0.15 s of
  // one core). Not the other way round: LLVM, which PoCL loads, gives the thread that opens it
  // its own signal stack, and AddressSanitizer's thread exit then fails to unmap it.
  // Several devices: the file's strips go to each in turn.
  const int ahead = int(std::max<size_t>(1, (size_t(32) << 20) / input->shape().row_bytes()));
  auto decoding = std::async(std::launch::async, [&] { input->prefetch(ahead); });
  std::unique_ptr<clf::Pipeline> pipeline;
  try {
    pipeline = build_pipeline(open_devices(o), chain, o.verbose);
  } catch (...) {
    decoding.wait();  // the decoding thread uses the input, which this frame owns
    throw;
  }
  decoding.get();

  Progress progress(!o.quiet, "strips");
  clf::RunOptions run = o.run;
  run.profile = o.stats || !o.trace.empty();
  run.cancel = &interrupted;
  run.progress = [&](int done, int total) { progress.update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  const std::unique_ptr<clf::OutputFile> output =
      io.open_output(job.out, *input, o.output, &interrupted);
  if (o.verbose && !output->whole_image_note().empty())
    std::cerr << "clfilter: " << output->whole_image_note() << "\n";
  const clf::RunStats stats = pipeline->run(*input, *output, run);
  output->commit();
  print_warnings(output->warnings());
  const double total_ms = ms_since(start);
  if (!o.trace.empty()) clf::write_trace_json(stats, o.trace);
  if (o.verbose)
    std::cerr << "clfilter: " << stats.strips << " strips of " << stats.strip_rows << " rows, "
              << stats.slots << " slots"
              << (stats.devices > 1 ? ", over " + std::to_string(stats.devices) + " devices" : "")
              << "\n";
  if (o.stats) std::cout << stats.summary() << "\n";
  if (!o.quiet)
    std::cout << "clfilter: wrote " << job.out << " (" << output->written() << ") in "
              << int(total_ms + 0.5) << " ms\n";
  return 0;
}

// Many files (batch.hpp): --jobs threads, each with a pipeline of its own built once (warm for
// every file it takes). A file that fails is reported by name and the others go on (exit 1 at the
// end); Ctrl-C stops the files in flight (their outputs untouched) and takes no new ones (exit
// 130).
int run_batch(const Options& o, const clf::Registry& registry,
              const std::vector<clf::FileJob>& jobs) {
  if (!o.trace.empty())
    throw usage_error("--trace records one file's run: give IN OUT, not a batch");
  const Chain chain = check_chain(registry, o.filters);
  // The output directory (each file is checked as it opens).
  file_io(o, jobs.front()).check_writable(jobs.front().out);
  const auto devices = open_devices(o);
  Progress progress(!o.quiet, "files");
  int done = 0, failed = 0;
  clf::BatchOptions batch;
  batch.io = o.io;
  batch.output = o.output;
  batch.run = o.run;
  batch.run.cancel = &interrupted;
  batch.workers = o.jobs;
  batch.on_file = [&](const clf::FileResult& file) {
    print_warnings(file.warnings);
    if (!file.written) {
      ++failed;
      std::cerr << "clfilter: error: " << file.error << "\n";
    } else if (o.verbose) {
      if (!file.note.empty()) std::cerr << "clfilter: " << file.note << "\n";
      std::cerr << "clfilter: wrote " << file.out << " (" << file.format << ") in "
                << int(file.ms + 0.5) << " ms\n";
    }
    progress.update(++done, int(jobs.size()));
  };
  const auto start = std::chrono::steady_clock::now();
  int workers = 0;
  clf::run_files(
      jobs, devices,
      [&](const std::shared_ptr<clf::Device>& device, int worker) {
        ++workers;
        return build_pipeline({device}, chain, o.verbose && worker < int(devices.size()));
      },
      batch);
  if (!o.quiet)
    std::cout << "clfilter: wrote " << done - failed << " of " << jobs.size() << " files in "
              << int(ms_since(start) + 0.5) << " ms (" << workers << " jobs)\n";
  if (failed) {
    std::cerr << "clfilter: error: " << failed << " of " << jobs.size()
              << " files failed (named above)\n";
    return 1;
  }
  return 0;
}

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  if (o.help) {
    std::cout << usage_text;
    return 0;
  }
  if (o.version) {
    std::cout << "clfilter " << CLF_VERSION << " (plugin ABI " << clf::Registry::abi_version()
              << ")\n";
    return 0;
  }
  if (o.list_devices) {
    for (const auto& d : clf::list_devices())
      std::cout << d.label() << "\n    driver " << d.driver_version << ", "
                << (d.max_alloc_bytes >> 20) << " MiB max allocation, " << (d.local_mem_bytes >> 10)
                << " KiB local memory, " << d.compute_units << " compute units\n";
    return 0;
  }
  std::vector<std::string> plugin_dirs = o.plugin_dirs;
  plugin_dirs.insert(plugin_dirs.end(), o.env.plugin_path.begin(), o.env.plugin_path.end());
  clf::Registry registry(plugin_dirs);
  report_plugin_issues(registry, o.quiet);
  check_interrupted("while loading plugins");
  if (o.list_filters) {
    print_filters(registry, *o.list_filters);
    return 0;
  }
  const std::vector<clf::FileJob> jobs = clf::plan_jobs(o.positional, o.output_dir, o.frames);
  if (!o.output_dir.empty()) clf::prepare_output_dir(o.output_dir);
  const bool batch = !o.output_dir.empty() || !o.frames.empty();
  return batch ? run_batch(o, registry, jobs) : run_one(o, registry, jobs.front());
}

}  // namespace

int main(int argc, char** argv) {
  watch_signals();
  // Past a file-size limit, writes should fail (and be reported) rather than kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  try {
    return run(argc, argv);
  } catch (const clf::Error& e) {
    std::cerr << "clfilter: error: " << e.what() << "\n";
    if (e.is_out_of_memory())
      std::cerr << "clfilter: hint: --max-device-memory sets the budget, --slots the strips in "
                   "flight, --strip-rows their height\n";
    if (e.kind() == clf::ErrorKind::cancelled) return 130;
    return e.kind() == clf::ErrorKind::usage ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::cerr
        << "clfilter: error: out of host memory (the image and its filtered copy must both fit; "
           "free memory or use a smaller image)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "clfilter: error: " << e.what() << "\n";
    return 1;
  }
}

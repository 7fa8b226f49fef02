// clfilter: run a chain of OpenCL image filters over an image file.
//   clfilter IN OUT --filter NAME[:key=value,...] [--filter ...] [options]
// Exit codes: 0 done, 1 failed (file, device, plugin), 2 bad command line, 130 interrupted.
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <new>
#include <optional>
#include <sstream>
#include <thread>

#include "clf/clf.hpp"
#include "io_module.hpp"

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
    if (sigaction(sig, nullptr, &inherited) == 0 && inherited.sa_handler != SIG_IGN) sigaddset(&set, sig);
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

const char* const usage_text = R"(usage: clfilter IN OUT --filter NAME[:key=value,...] [--filter ...] [options]
       clfilter --list-filters [NAME] | --list-devices | --help | --version

Runs OpenCL image filters over IN and writes OUT (any format OpenImageIO reads and
writes: EXR, PNG, TIFF, JPEG, ...). Filters apply in the order given, fused on the
device. OUT keeps IN's pixel type, channels and metadata; it is written to a
temporary file and renamed, so a failed run never leaves a partial OUT, and
IN == OUT is safe.

Filters (see --list-filters for every parameter):
  -f, --filter SPEC        NAME or NAME:key=value,key=value
                             --filter gaussian:sigma=2
                             --filter sobel:mode=x,ksize=5
                             --filter box:radius=3,border=wrap
                             --filter 'convolve:kernel=0,-1,0;-1,5,-1;0,-1,0'
                           Borders (every filter): border=replicate|reflect|
                           reflect101|wrap|constant (default reflect101, as OpenCV)

Device:
  --device SEL             gpu, cpu, P:D (platform:device index from --list-devices)
                           or part of a device name; env CLF_DEVICE. Default: the
                           first GPU, else the CPU (PoCL).
  --variant tiled|direct   kernel variant: tiled stages each tile's window in local
                           memory first, direct reads global memory; env CLF_VARIANT.
                           Default: direct (measured faster on NVIDIA GPUs and CPUs)
  --tile WxH[/G]           tiled: W x H outputs per work-group of G work-items; direct
                           on GPUs: H rows of 4 outputs per work-item, G per group.
                           W a multiple of 4. Default 248x4/64; env CLF_TILE

Streaming:
  --strip-rows N           rows per strip (default: from the memory budget)
  --slots N                strips in flight, ring of N buffers (default 3)
  --queues 1|3             3 = separate upload/compute/download queues (default);
                           1 = one in-order queue, for comparison
  --max-device-memory SZ   device memory budget, e.g. 64M, 2G (default: half the
                           device's memory)
  --zero-copy on|off       on CPU devices, kernels read and write the images in
                           place instead of copying strips (default on)

Output and diagnostics:
  --stats                  print wall time, per-queue busy time and overlap ratio
  --trace FILE.json        write a Chrome trace-event file (open in ui.perfetto.dev)
  --plugin-dir DIR         load plugins from DIR first (repeatable); also env
                           CLF_PLUGIN_PATH (colon list)
  -v, --verbose            print the device, each filter as built, the strip layout
  -q, --quiet              print nothing but errors
  -h, --help               this text
  --version                print the version

Exit status: 0 done, 1 failed (file, device, plugin), 2 bad command line,
130 interrupted (Ctrl-C, SIGTERM: OUT is left exactly as it was).

Examples:
  clfilter photo.png edges.png --filter sobel
  clfilter in.exr out.exr -f gaussian:sigma=2 -f sobel -f box:radius=1 --stats
  clfilter big.tif big.tif --filter gaussian:sigma=8 --device cpu --max-device-memory 64M
)";

struct Options {
  std::vector<std::string> positional, filters, plugin_dirs;
  std::string device, variant, tile, trace;
  std::optional<std::string> list_filters;
  bool list_devices = false, help = false, version = false, stats = false, quiet = false,
       verbose = false;
  clf::RunOptions run;
};

clf::Error usage_error(const std::string& message) { return clf::Error(clf::ErrorKind::usage, message); }

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
  if (unit == "K" || unit == "k" || unit == "KiB") scale = 1024.0;
  else if (unit == "M" || unit == "m" || unit == "MiB") scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g" || unit == "GiB") scale = 1024.0 * 1024 * 1024;
  else if (!unit.empty()) scale = 0;
  if (value.empty() || errno || scale == 0 || !(v > 0) || v * scale > 1e15)
    throw usage_error(option + " expects a size such as 64M or 2G (got '" + value + "')");
  return uint64_t(v * scale);
}

Options parse_args(int argc, char** argv) {
  Options o;
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
    if (arg == "-f" || arg == "--filter") o.filters.push_back(next());
    else if (arg == "--device") o.device = next();
    else if (arg == "--plugin-dir") o.plugin_dirs.push_back(next());
    else if (arg == "--variant") o.variant = next();
    else if (arg == "--tile") o.tile = next();
    else if (arg == "--strip-rows") o.run.strip_rows = parse_int(arg, next(), 1, 1 << 30);
    else if (arg == "--slots") o.run.slots = parse_int(arg, next(), 1, 64);
    else if (arg == "--queues") {
      o.run.queues = parse_int(arg, next(), 1, 3);
      if (o.run.queues == 2) throw usage_error("--queues expects 1 or 3 (got 2)");
    } else if (arg == "--max-device-memory") o.run.max_device_memory = parse_size(arg, next());
    else if (arg == "--zero-copy") {
      const std::string v = next();
      if (v != "on" && v != "off") throw usage_error("--zero-copy expects on or off (got '" + v + "')");
      o.run.zero_copy = v == "on";
    } else if (arg == "--stats") o.stats = true;
    else if (arg == "--trace") o.trace = next();
    else if (arg == "--list-filters") {
      o.list_filters = "";
      if (has_inline) o.list_filters = value;
      else if (i + 1 < argc && argv[i + 1][0] != '-') o.list_filters = argv[++i];
    } else if (arg == "--list-devices") o.list_devices = true;
    else if (arg == "-q" || arg == "--quiet") o.quiet = true;
    else if (arg == "-v" || arg == "--verbose") o.verbose = true;
    else if (arg == "-h" || arg == "--help") o.help = true;
    else if (arg == "--version") o.version = true;
    else if (arg.size() > 1 && arg[0] == '-') throw usage_error("unknown option '" + arg + "' (see --help)");
    else o.positional.push_back(arg);
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
      if (std::isfinite(p.min) && std::isfinite(p.max)) std::cout << ", " << p.min << " to " << p.max;
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

class Progress {
 public:
  Progress(bool enabled) : enabled_(enabled && ::isatty(STDERR_FILENO)), start_(Clock::now()) {}
  void update(int done, int total) {
    // Only for long jobs: a bar that flashes for 50 ms is noise.
    if (!enabled_ || Clock::now() - start_ < std::chrono::milliseconds(500)) return;
    const int width = 30, filled = total ? done * width / total : width;
    std::fprintf(stderr, "\rclfilter: [%.*s%*s] %d/%d strips", filled,
                 "##############################", width - filled, "", done, total);
    shown_ = true;
  }
  ~Progress() {
    if (shown_) std::fputc('\n', stderr);
  }

 private:
  using Clock = std::chrono::steady_clock;
  bool enabled_, shown_ = false;
  Clock::time_point start_;
};

int run(int argc, char** argv) {
  Options o = parse_args(argc, argv);
  if (o.help) {
    std::cout << usage_text;
    return 0;
  }
  if (o.version) {
    std::cout << "clfilter " << CLF_VERSION << " (plugin ABI " << clf::plugin_abi_version << ")\n";
    return 0;
  }
  if (o.list_devices) {
    for (const auto& d : clf::list_devices())
      std::cout << d.label() << "\n    driver " << d.driver_version << ", "
                << (d.max_alloc_bytes >> 20) << " MiB max allocation, " << (d.local_mem_bytes >> 10)
                << " KiB local memory, " << d.compute_units << " compute units\n";
    return 0;
  }
  clf::Registry registry(o.plugin_dirs);
  report_plugin_issues(registry, o.quiet);
  check_interrupted("while loading plugins");
  if (o.list_filters) {
    print_filters(registry, *o.list_filters);
    return 0;
  }
  if (o.positional.size() != 2)
    throw usage_error(o.positional.empty() ? "missing IN and OUT (see --help)"
                                           : o.positional.size() == 1 ? "missing OUT (see --help)"
                                                                      : "too many arguments: '" + o.positional[2] + "' (see --help)");
  if (o.filters.empty())
    throw usage_error("no --filter given (e.g. --filter sobel; --list-filters shows them all)");
  const std::string& in_path = o.positional[0];
  const std::string& out_path = o.positional[1];

  // Everything that can be checked without the device or the pixels, first.
  std::vector<std::pair<std::shared_ptr<const clf::FilterFactory>, clf::FilterSpec>> chain;
  for (const auto& text : o.filters) {
    clf::FilterSpec spec = clf::parse_filter_spec(text);
    auto factory = registry.get(spec.name);
    clf::validate_params(factory->name(), factory->params(), spec.params);
    chain.emplace_back(factory, spec);
  }
  std::optional<clf::Variant> variant;
  if (!o.variant.empty()) variant = clf::parse_variant(o.variant);
  clf::Tuning tile;
  if (!o.tile.empty()) clf::parse_tile(o.tile, tile, "--tile");
  // Loading OpenImageIO and opening the device cannot overlap: both hold the dynamic loader's lock
  // (measured: no gain from a loading thread).
  const clf::IoModule& io = clf::io_module();
  check_interrupted("while loading the image-file module");
  io.check_writable(out_path);
  // The file is streamed: its header now, its rows strip by strip during the run, while finished
  // strips are encoded on the streamer's landing thread.
  const std::unique_ptr<clf::InputFile> input = io.open_input(in_path, &interrupted);
  if (!o.quiet)
    for (const auto& warning : input->warnings()) std::cerr << "clfilter: warning: " << warning << "\n";
  auto device = clf::Device::open(o.device);
  check_interrupted("while opening the device");

  clf::Tuning tuning = device->tuning();
  if (variant) tuning.variant = *variant;
  if (!o.tile.empty()) {
    tuning.tile_width = tile.tile_width;
    tuning.tile_height = tile.tile_height;
    tuning.group_width = tile.group_width;
  }
  device->set_tuning(tuning);
  if (o.verbose) std::cerr << "clfilter: device " << device->info().label() << "\n";

  clf::Pipeline pipeline(device);
  for (auto& [factory, spec] : chain) {
    try {
      pipeline.add(factory, spec.params);
    } catch (const clf::Error&) {
      check_interrupted("while building " + spec.name);  // a build cut short is not a build error
      throw;
    }
    check_interrupted("after building " + spec.name);
    if (o.verbose) std::cerr << "clfilter: filter " << pipeline.filter(pipeline.size() - 1).describe() << "\n";
  }

  Progress progress(!o.quiet);
  o.run.profile = o.stats || !o.trace.empty();
  o.run.cancel = &interrupted;
  o.run.progress = [&](int done, int total) { progress.update(done, total); };
  const auto start = std::chrono::steady_clock::now();
  const std::unique_ptr<clf::OutputFile> output = io.open_output(out_path, *input, &interrupted);
  clf::RunStats stats = pipeline.run(*input, *output, o.run);
  output->commit();
  const double total_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!o.trace.empty()) clf::write_trace_json(stats, o.trace);
  if (o.verbose)
    std::cerr << "clfilter: " << stats.strips << " strips of " << stats.strip_rows << " rows, "
              << stats.slots << " slots\n";
  if (o.stats) std::cout << stats.summary() << "\n";
  if (!o.quiet) {
    const clf::ImageShape img = input->shape();
    std::cout << "clfilter: wrote " << out_path << " (" << img.width << "x" << img.height << ", "
              << img.channels << " channel" << (img.channels == 1 ? "" : "s") << ", "
              << clf::pixel_type_name(img.type) << ") in " << int(total_ms + 0.5) << " ms\n";
  }
  return 0;
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
    if (e.kind() == clf::ErrorKind::cancelled) return 130;
    return e.kind() == clf::ErrorKind::usage ? 2 : 1;
  } catch (const std::bad_alloc&) {
    std::cerr << "clfilter: error: out of host memory (the image and its filtered copy must both fit; "
                 "free memory or use a smaller image)\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "clfilter: error: " << e.what() << "\n";
    return 1;
  }
}

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
#include <filesystem>
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
#include "options.hpp"
#include "row_files.hpp"
#include "standard_streams.hpp"

namespace {

using clf::cli::Options;
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

clf::Error usage_error(const std::string& message) {
  return clf::Error(clf::ErrorKind::usage, message);
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

// The words a shell offers after `previous` (scripts/clfilter-completion.bash), one line.
void print_completion(const clf::Registry& registry, const std::string& previous) {
  const std::string words = clf::cli::completion_words(previous);
  if (words == "@filters") {
    for (const auto& f : registry.factories()) std::cout << f->name() << " ";
  } else if (words == "@devices") {
    std::cout << "gpu cpu all";
    for (const auto& d : clf::list_devices())
      std::cout << " " << d.platform_index << ":" << d.device_index;
  } else {
    std::cout << words;
  }
  std::cout << "\n";
}

void report_plugin_issues(const clf::Registry& registry, bool quiet) {
  if (quiet) return;
  for (const auto& issue : registry.issues())
    std::cerr << "clfilter: warning: plugin " << issue.path << ": " << issue.reason << "\n";
}

// One line on stderr that a long job redraws: strips of one file, or files of a batch. Updated
// from any thread; drawn only on a terminal, and only after half a second. Lines printed while it
// is drawn go through message(), which clears the bar first and draws it again after, so that no
// line starts after a bar; finish() ends the bar's line before the run's report.
class Progress {
 public:
  Progress(bool enabled, const char* unit)
      : enabled_(enabled && ::isatty(STDERR_FILENO)), unit_(unit), start_(Clock::now()) {}
  void update(int done, int total) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!enabled_ || Clock::now() - start_ < std::chrono::milliseconds(500)) return;
    const int width = 30, filled = total ? done * width / total : width;
    char bar[128];
    std::snprintf(bar, sizeof bar, "clfilter: [%.*s%*s] %d/%d %s", filled,
                  "##############################", width - filled, "", done, total, unit_);
    bar_ = bar;
    std::fprintf(stderr, "\r%s", bar);
  }
  void message(const std::string& line) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!bar_.empty()) std::fprintf(stderr, "\r%*s\r", int(bar_.size()), "");
    std::fprintf(stderr, "%s\n%s", line.c_str(), bar_.c_str());
  }
  void finish() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!bar_.empty()) std::fputc('\n', stderr);
    bar_.clear();
  }
  ~Progress() { finish(); }

 private:
  using Clock = std::chrono::steady_clock;
  std::mutex mutex_;
  bool enabled_;
  const char* unit_;
  Clock::time_point start_;
  std::string bar_;  // as last drawn; empty: none on the line
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
  std::vector<std::shared_ptr<clf::Device>> devices;
  try {
    devices = clf::open_devices(o.device, o.env.device_options());
  } catch (const clf::Error& e) {  // a selector the user did not type here is named by its source
    const bool from_env = !o.env.device.empty() &&
                          std::find(o.given.begin(), o.given.end(), "--device") == o.given.end();
    if (!from_env || e.kind() != clf::ErrorKind::device) throw;
    throw clf::Error(e.kind(), "CLF_DEVICE=" + o.env.device + ": " + e.what());
  }
  check_interrupted("while opening the device");
  for (auto& device : devices) {
    clf::Tuning tuning = device->tuning();
    if (variant) tuning.variant = tuning.separable_variant = *variant;
    if (!o.tile.empty()) {
      tuning.tile_width = tile.tile_width;
      tuning.tile_height = tile.tile_height;
      tuning.group_width = tile.group_width;
    }
    if (variant || !o.tile.empty()) device->set_tuning(tuning);
    if (o.verbose)
      std::cerr << "clfilter: device " << device->info().label() << "\n"
                << "clfilter: tuning from the " << device->tuning_source()
                << (variant || !o.tile.empty() ? " (--variant, --tile)" : "") << "\n";
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
// silences progress and reports, never a warning about the user's data; through `progress` where
// its bar may be drawn.
void print_warnings(const std::vector<std::string>& warnings, Progress* progress = nullptr) {
  for (const auto& warning : warnings) {
    const std::string line = "clfilter: warning: " + warning;
    if (progress)
      progress->message(line);
    else
      std::cerr << line << "\n";
  }
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

// Where run_file's report goes (stderr when standard output takes the image), and the names its
// messages give files: a file standing in for a standard stream is named '-', as given.
struct Naming {
  std::ostream* report = &std::cout;
  std::vector<std::pair<std::string, std::string>> as_given;  // a path, and what stands for it
  std::string operator()(std::string text) const {
    for (const auto& [path, given] : as_given)
      for (size_t at; (at = text.find(path)) != std::string::npos;)
        text.replace(at, path.size(), given);
    return text;
  }
  std::vector<std::string> operator()(std::vector<std::string> lines) const {
    for (auto& line : lines) line = (*this)(line);
    return lines;
  }
};

// IN OUT: the file is streamed (its header first, so a bad IN fails before the device opens;
// then its rows strip by strip, decoded on this thread and encoded on the streamer's landing
// thread while the device works), written to a temporary file, renamed over OUT.
int run_file(const Options& o, const Chain& chain, const clf::FileJob& job, const Naming& named) {
  const clf::IoModule& io = file_io(o, job);
  io.check_writable(job.out);
  if (o.verbose && &io == &clf::jpeg_io())
    std::cerr << "clfilter: JPEG to JPEG through libjpeg-turbo (OpenImageIO not loaded)\n";
  const std::unique_ptr<clf::InputFile> input = io.open_input(job.in, &interrupted);
  print_warnings(named(input->warnings()));
  // The first rows decode on a second thread while this one opens the devices (opening PoCL keeps a
  // core busy). Not the other way round: LLVM, which PoCL loads, gives the thread that opens it its
  // own signal stack, and AddressSanitizer's thread exit then fails to unmap it.
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
  progress.finish();
  print_warnings(named(output->warnings()));
  const double total_ms = ms_since(start);
  if (!o.trace.empty()) clf::write_trace_json(stats, o.trace);
  if (o.verbose)
    std::cerr << "clfilter: " << stats.strips << " strips of " << stats.strip_rows << " rows, "
              << stats.slots << " slots"
              << (stats.devices > 1 ? ", over " + std::to_string(stats.devices) + " devices" : "")
              << "\n";
  if (o.stats) *named.report << stats.summary() << "\n";
  if (!o.quiet)
    *named.report << "clfilter: wrote " << named(job.out) << " (" << output->written() << ") in "
                  << int(total_ms + 0.5) << " ms\n";
  return 0;
}

// IN OUT, either of which may be '-' (or OUT FORMAT:-): standard input is read whole into a file
// named by its format before the run, standard output gets the output file once it is committed
// (standard_streams.hpp). Nothing reaches standard output from a run that fails.
int run_one(const Options& o, const clf::Registry& registry, clf::FileJob job) {
  const Chain chain = check_chain(registry, o.filters);  // refused before standard input is read
  const bool from_stdin = job.in == "-", to_stdout = clf::names_standard_output(job.out);
  if (!from_stdin && !to_stdout) return run_file(o, chain, job, Naming{});
  if (to_stdout && ::isatty(STDOUT_FILENO))
    throw usage_error("OUT '" + job.out +
                      "' writes standard output, which is a terminal: redirect it (> out.png) or "
                      "give OUT");
  clf::StandardStreams streams(o.env.temp_dir);
  Naming named;
  try {
    if (from_stdin) {
      job.in = streams.spool_input(&interrupted);
      named.as_given.emplace_back(job.in, "-");
    }
    if (to_stdout) {
      const std::string ext = clf::standard_output_extension(job.out, job.in);
      if (ext.empty())
        throw usage_error("OUT '-' takes IN's format, and '" + job.in +
                          "' has no extension: name one, as png:-");
      named.as_given.emplace_back(streams.output_file(ext), job.out);
      job.out = named.as_given.back().first;
      named.report = &std::cerr;
    }
    const int code = run_file(o, chain, job, named);
    if (to_stdout) streams.send_output();
    return code;
  } catch (const clf::Error& e) {
    throw clf::Error(e.kind(), named(e.what()), e.cl_code());
  }
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
  batch.run.profile = o.stats;
  batch.on_file = [&](const clf::FileResult& file) {
    print_warnings(file.warnings, &progress);
    if (!file.written) {
      ++failed;
      progress.message("clfilter: error: " + file.error);
    } else if (o.verbose) {
      if (!file.note.empty()) progress.message("clfilter: " + file.note);
      progress.message("clfilter: wrote " + file.out + " (" + file.format + ") in " +
                       std::to_string(int(file.ms + 0.5)) + " ms");
    }
    progress.update(++done, int(jobs.size()));
  };
  const auto start = std::chrono::steady_clock::now();
  int workers = 0;
  const std::vector<clf::FileResult> results = clf::run_files(
      jobs, devices,
      [&](const std::shared_ptr<clf::Device>& device, int worker) {
        ++workers;
        return build_pipeline({device}, chain, o.verbose && worker < int(devices.size()));
      },
      batch);
  progress.finish();
  const double wall_ms = ms_since(start);
  if (!o.quiet)
    std::cout << "clfilter: wrote " << done - failed << " of " << jobs.size()
              << (jobs.size() == 1 ? " file in " : " files in ") << int(wall_ms + 0.5) << " ms ("
              << workers << (workers == 1 ? " job)\n" : " jobs)\n");
  if (o.stats) std::cout << clf::batch_summary(results, wall_ms) << "\n";
  if (failed) {
    std::cerr << "clfilter: error: " << failed << " of " << jobs.size()
              << " files failed (named above)\n";
    return 1;
  }
  return 0;
}

// --tune: each device's kernel families measured (on the --filter chain too, if given), the
// winners kept in its tuned file.
int tune(const Options& o, const clf::Registry& registry) {
  if (!o.positional.empty())
    throw clf::Error(clf::ErrorKind::usage,
                     "--tune takes no files: it measures on images of its own (--filter: the "
                     "filters to tune for)");
  const std::vector<std::string> apply = {"--tune",    "--filter", "--device",    "--jobs",
                                          "--verbose", "--quiet",  "--plugin-dir"};
  for (const std::string& name : o.given)
    if (std::find(apply.begin(), apply.end(), name) == apply.end())
      throw clf::Error(clf::ErrorKind::usage,
                       name +
                           " does not apply to --tune (it takes --filter, --device, --jobs, "
                           "--plugin-dir, -v and -q)");
  if (!o.filters.empty()) check_chain(registry, o.filters);
  for (const auto& device : clf::open_devices(o.device, o.env.device_options())) {
    std::cerr << "clfilter: tuning " << device->info().label() << "\n";
    clf::TuneOptions options;
    options.chain = o.filters;
    options.build_threads = o.jobs;
    if (!o.quiet)
      options.progress = [](const std::string& line) {
        check_interrupted("while tuning");
        std::cerr << "  " << line << "\n";
      };
    for (const clf::TuneResult& r : clf::tune(device, registry, options))
      std::cout << r.summary() << "\n";
    std::cout << "kept in " << clf::tuned_file(*device) << "\n";
  }
  return 0;
}

int run(int argc, char** argv) {
  Options o = clf::cli::parse_args(argc, argv);
  if (o.help) {
    std::cout << clf::cli::usage_text();
    return 0;
  }
  if (o.version) {
    std::cout << "clfilter " << CLF_VERSION << " (plugin ABI " << clf::Registry::abi_version()
              << ")\n";
    return 0;
  }
  const std::string pocl_cache = clf::use_writable_pocl_cache(o.env);
  if (o.verbose && !pocl_cache.empty())
    std::cerr << "clfilter: PoCL's kernel cache in " << pocl_cache << " ("
              << (o.env.pocl_cache_dir.empty() ? "no HOME" : o.env.pocl_cache_dir + " not writable")
              << "; POCL_CACHE_DIR chooses one)\n";
  if (o.list_devices) {
    for (const auto& d : clf::list_devices()) {
      const std::string tuned = clf::tuned_file(d, o.env.cache_dir);
      std::error_code ec;
      std::cout << d.label() << "\n    driver " << d.driver_version << ", "
                << (d.max_alloc_bytes >> 20) << " MiB max allocation, " << (d.local_mem_bytes >> 10)
                << " KiB local memory, " << d.compute_units << " compute units\n    tuning: "
                << (!tuned.empty() && std::filesystem::exists(tuned, ec)
                        ? "tuned (" + tuned + ")"
                        : "the database's (clfilter --tune measures this device)")
                << "\n";
    }
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
  if (o.complete) {
    print_completion(registry, *o.complete);
    return 0;
  }
  if (o.tune) return tune(o, registry);
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
  // A closed pipe on standard output is an error to report (EPIPE), not the end of the process.
  std::signal(SIGPIPE, SIG_IGN);
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

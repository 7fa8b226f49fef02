// The autotuner (clf/tuner.hpp): every candidate layout of a family runs the family's workloads on
// one device image; a candidate whose output differs from the database layout's is refused, the
// fastest of the rest is kept.
#include "clf/tuner.hpp"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <type_traits>

#include "clf/error.hpp"
#include "clf/params.hpp"
#include "clf/pipeline.hpp"
#include "clf/registry.hpp"
#include "device_twin.hpp"
#include "tuning_database.hpp"

namespace clf {
namespace {

using Clock = std::chrono::steady_clock;
constexpr double min_gain = 0.97;  // a candidate must take at most this share of the database's

// An n x n kernel of small integers with no separable structure, as convolve's kernel=.
std::string full_rank_kernel(int n) {
  std::string text;
  for (int r = 0; r < n; ++r)
    for (int c = 0; c < n; ++c)
      text += (c ? "," : r ? ";" : "") + std::to_string((r * 13 + c * 7 + r * c) % 11 - 5);
  return text;
}

std::vector<std::string> window_candidates(const DeviceInfo& info) {
  if (!info.is_gpu)
    return {"variant=direct,vector_width=4,vectors=1", "variant=direct,vector_width=8,vectors=1",
            "variant=direct,vector_width=16,vectors=1",
            "variant=direct,vector_width=16,vectors=4,vectors_min_taps=25",
            "variant=tiled,tile_width=64,tile_height=8,group_width=64"};
  std::vector<std::string> all;
  for (const char* rows : {"2", "4", "8"})
    for (const char* blocks : {"", "3:6 5:4 9:8", "4:8"})
      all.push_back(std::string("variant=direct,vector_width=4,tile_height=") + rows +
                    ",block_rows=" + blocks);
  all.push_back("variant=direct,vector_width=1");
  for (const char* loads : {"0", "1"})
    all.push_back(std::string("variant=tiled,tile_width=248,tile_height=4,group_width=64,") +
                  "stage_with_loads=" + loads);
  return all;
}

std::vector<std::string> separable_candidates(const DeviceInfo& info) {
  const std::string columns = "separable_variant=tiled,separable_columns=";
  std::vector<std::string> all = {"separable_variant=direct,separable_columns=,separable_rows=0"};
  for (const char* width : {"32", "64"})
    for (const char* rows : {"64", "128"})
      all.push_back(columns + ",separable_tile_width=" + width +
                    ",separable_literal_tile_rows=" + rows);
  const std::vector<const char*> widths =
      info.is_gpu ? std::vector<const char*>{"128", "256", "512"} : std::vector<const char*>{"256"};
  for (const char* width : widths)
    for (const char* batch : {"8", "16"})
      for (const char* walk : {"32", "64"})
        all.push_back(columns + "5:" + width + ":" + batch + " 21:0:0" +
                      ",separable_columns_tile_rows=" + walk);
  return all;
}

// A family that tries one knob at each of `values`.
TuneFamily knob_family(std::string name, std::vector<std::string> workloads,
                       const std::string& knob, std::initializer_list<const char*> values) {
  TuneFamily family{std::move(name), std::move(workloads), {}};
  for (const char* value : values) family.candidates.push_back(knob + "=" + value);
  return family;
}

// "NAME=VALUE,..." as pairs (apply_tuning_text's rule).
std::vector<std::pair<std::string, std::string>> pairs_of(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> pairs;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    const size_t eq = item.find('=');
    pairs.emplace_back(item.substr(0, eq), eq == std::string::npos ? "" : item.substr(eq + 1));
  }
  return pairs;
}

// The images of a family: its pixel type and channel count.
using Format = std::pair<PixelType, int>;
Format format_of(const TuneFamily& family) { return {family.type, family.channels}; }

// A deterministic image of `format`: values in [0, 1) as f32, over the whole range as u8 or u16.
Image test_image(int width, int height, Format format) {
  Image image(width, height, format.second, format.first);
  const size_t n = size_t(width) * size_t(height) * size_t(format.second);
  uint32_t state = 12345;
  auto next = [&] { return state = state * 1664525u + 1013904223u; };
  if (format.first == PixelType::f32) {
    float* p = reinterpret_cast<float*>(image.data());
    for (size_t i = 0; i < n; ++i) p[i] = float(next() >> 8) / float(1 << 24);
  } else if (format.first == PixelType::u8) {
    uint8_t* p = reinterpret_cast<uint8_t*>(image.data());
    for (size_t i = 0; i < n; ++i) p[i] = uint8_t(next() >> 24);
  } else if (format.first == PixelType::u16) {
    uint16_t* p = reinterpret_cast<uint16_t*>(image.data());
    for (size_t i = 0; i < n; ++i) p[i] = uint16_t(next() >> 16);
  } else {
    throw std::logic_error(std::string("tuning: no test image of ") +
                           pixel_type_name(format.first));
  }
  return image;
}

// Whether the n values at x are within one level of y's (integers), or of 1e-4 of their largest
// (floats, at least 1).
template <typename T>
bool close_values(const T* x, const T* y, size_t n) {
  if constexpr (std::is_integral_v<T>) {
    for (size_t i = 0; i < n; ++i)
      if (std::abs(int(x[i]) - int(y[i])) > 1) return false;
  } else {
    T scale = 1;
    for (size_t i = 0; i < n; ++i) scale = std::max(scale, std::abs(y[i]));
    for (size_t i = 0; i < n; ++i)
      if (!(std::abs(x[i] - y[i]) <= T(1e-4) * scale)) return false;
  }
  return true;
}

bool close_to(const Image& a, const Image& b) {
  const size_t n = size_t(a.width()) * size_t(a.height()) * size_t(a.channels());
  switch (a.type()) {
    case PixelType::u8:
      return close_values(reinterpret_cast<const uint8_t*>(a.data()),
                          reinterpret_cast<const uint8_t*>(b.data()), n);
    case PixelType::u16:
      return close_values(reinterpret_cast<const uint16_t*>(a.data()),
                          reinterpret_cast<const uint16_t*>(b.data()), n);
    case PixelType::f32:
      return close_values(reinterpret_cast<const float*>(a.data()),
                          reinterpret_cast<const float*>(b.data()), n);
    default:
      throw std::logic_error("tuning: no comparison of its images' type");
  }
}

// A workload: filter specs run as one chain.
using Chain = std::vector<std::string>;

// A family's workloads: each of its own filters alone, then the options' chain. A family whose
// layouts leave the chain as it is still chooses by its own filters, as a run without a chain
// does, whatever the chain's timing noise says.
std::vector<Chain> workloads_of(const TuneFamily& family, const TuneOptions& options) {
  std::vector<Chain> workloads;
  for (const std::string& spec : family.workloads) workloads.push_back({spec});
  if (!options.chain.empty()) workloads.push_back(options.chain);
  return workloads;
}

// The images a tuning run measures on, one or more sizes.
class Measure {
 public:
  // Images of every format at each size, while the device has room: a device too small for the
  // larger sizes measures on those before them.
  Measure(const std::shared_ptr<Device>& device, const Registry& registry,
          const std::vector<std::pair<int, int>>& sizes, const std::vector<Format>& formats)
      : device_(device), registry_(registry) {
    for (const auto& [width, height] : sizes) {
      std::map<Format, std::pair<DeviceImage, DeviceImage>> images;
      try {
        for (const Format& format : formats)
          images.emplace(
              format,
              std::make_pair(DeviceImage(device, width, height, format.second, format.first),
                             DeviceImage(device, width, height, format.second, format.first)));
      } catch (const Error& e) {
        if (!e.is_out_of_memory() || images_.empty()) throw;
        break;
      }
      for (auto& [format, pair] : images) pair.first.write(test_image(width, height, format));
      images_.push_back(std::move(images));
      measured_.push_back({width, height});
    }
  }
  size_t sizes() const { return images_.size(); }
  const std::vector<std::pair<int, int>>& measured() const { return measured_; }
  // The workload's time per run on the images of size `size` and `format` with the device's
  // current tuning; its output in `result`.
  double time(const Chain& chain, size_t size, Format format, Image& result) {
    auto& [in, out] = images_[size].at(format);
    Pipeline pipeline(device_);
    for (const std::string& spec : chain) pipeline.add(registry_, spec);
    auto runs_for = [&, &in = in, &out = out](int runs) {
      const auto start = Clock::now();
      for (int r = 0; r < runs; ++r) pipeline.run(in, out);
      out.wait();
      return std::chrono::duration<double, std::milli>(Clock::now() - start).count() / runs;
    };
    const double first = runs_for(1);  // builds the programs
    const int runs = std::clamp(int(20 / std::max(runs_for(1), 1e-3)), 1, 50);
    double best = first;
    for (int rep = 0; rep < 3; ++rep) best = std::min(best, runs_for(runs));
    result = out.read();
    return best;
  }

 private:
  std::shared_ptr<Device> device_;
  const Registry& registry_;
  std::vector<std::map<Format, std::pair<DeviceImage, DeviceImage>>> images_;  // in, out
  std::vector<std::pair<int, int>> measured_;                                  // their sizes
};

// One family's candidates, each over `base`, against the first: the database's layout.
class FamilyRun {
 public:
  FamilyRun(std::vector<Chain> workloads, Format format, Device& device, const Tuning& base,
            Measure& measure)
      : workloads_(std::move(workloads)),
        format_(format),
        device_(device),
        base_(base),
        measure_(measure),
        expected_(workloads_.size() * measure.sizes()) {}
  // The workloads' time per run with `text` over the base, summed over the first `sizes` measured
  // sizes; negative where the device refuses the layout or its output differs from the database
  // layout's (text "", which is measured first at each size and kept).
  double time(const std::string& text, size_t sizes) {
    Tuning tuning = base_;
    apply_tuning_text(tuning, text);
    device_.set_tuning(tuning);
    double ms = 0;
    for (size_t w = 0; w < workloads_.size(); ++w)
      for (size_t size = 0; size < sizes; ++size) {
        Image& expected = expected_[w * measure_.sizes() + size];
        const bool first = expected.width() == 0;
        if (first && !text.empty())
          throw std::logic_error("tuning: a candidate before the database");
        try {
          Image output;
          ms += measure_.time(workloads_[w], size, format_, first ? expected : output);
          if (!first && !close_to(output, expected)) return -1;
        } catch (const Error&) {
          if (first) throw;  // the database's own layout must run
          return -1;
        }
      }
    return ms;
  }

 private:
  const std::vector<Chain> workloads_;
  const Format format_;
  Device& device_;
  const Tuning& base_;
  Measure& measure_;
  std::vector<Image> expected_;  // the database layout's output, by workload and size
};

// Each of `texts` over `base` builds its programs: `workloads` run once on a
// `size` image of a twin of the device with that tuning, `threads` twins at a time. What a twin
// builds is the device's too; a candidate that fails here fails again when it is timed, which
// says why. `built` is called in this thread as each is done; what it throws stops the others
// before their next candidate, and is rethrown.
void build_candidates(const std::vector<Chain>& workloads, Format format,
                      const std::vector<std::string>& texts, const std::shared_ptr<Device>& device,
                      const Registry& registry, const Tuning& base, std::pair<int, int> size,
                      int threads, const std::function<void(size_t)>& built) {
  std::mutex mutex;
  std::condition_variable changed;
  size_t done = 0;
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  auto work = [&] {
    for (size_t c; !stop && (c = next++) < texts.size();) {
      try {
        Tuning tuning = base;
        apply_tuning_text(tuning, texts[c]);
        const auto twin = detail::DeviceTwin::make(*device, tuning);
        DeviceImage in(twin, size.first, size.second, format.second, format.first);
        DeviceImage out(twin, size.first, size.second, format.second, format.first);
        for (const Chain& chain : workloads) {
          Pipeline pipeline(twin);
          for (const std::string& spec : chain) pipeline.add(registry, spec);
          pipeline.run(in, out);
        }
        out.wait();
      } catch (...) {
      }
      std::lock_guard<std::mutex> lock(mutex);
      ++done;
      changed.notify_one();
    }
  };
  std::vector<std::thread> pool;
  try {
    for (int t = 0; t < threads; ++t) pool.emplace_back(work);
  } catch (...) {  // a thread the system would not start: the others stop and are joined
    stop = true;
    for (std::thread& thread : pool) thread.join();
    throw;
  }
  std::exception_ptr error;
  for (size_t shown = 0; shown < texts.size() && !error;) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return done > shown; });
    const size_t now = done;
    lock.unlock();
    try {
      while (shown < now) built(++shown);
    } catch (...) {
      error = std::current_exception();
      stop = true;
    }
  }
  for (std::thread& thread : pool) thread.join();
  if (error) std::rethrow_exception(error);
}

// A CPU device's compiler and kernels share the host's cores: one thread there.
int build_threads(const TuneOptions& options, const DeviceInfo& info) {
  if (options.build_threads > 0) return options.build_threads;
  return info.is_gpu ? int(std::clamp(std::thread::hardware_concurrency(), 1u, 8u)) : 1;
}

std::string time_text(double ms) {
  char text[64];
  std::snprintf(text, sizeof text,
                ms < 0 ? "refused: its output differs, or the device refused it" : "%.3f ms", ms);
  return text;
}

// The family's fastest candidate over `base`: each measured once on the first size, then the
// fastest again beside the database's on every size, twice, so that neither a load that came and
// went nor a layout that only wins on one size can pick it.
TuneResult tune_family(const TuneFamily& family, const std::shared_ptr<Device>& device,
                       const Registry& registry, const Tuning& base, Measure& measure,
                       const TuneOptions& options) {
  TuneResult result;
  result.family = family.name;
  const std::vector<Chain> workloads = workloads_of(family, options);
  FamilyRun run(workloads, format_of(family), *device, base, measure);
  auto say = [&](const std::string& line) {
    if (options.progress) options.progress(family.name + " " + line);
  };
  std::vector<std::string> texts{""};  // the database's layout, then each candidate not it
  for (const std::string& text : family.candidates) {
    Tuning tuning = base;
    apply_tuning_text(tuning, text);
    if (tuning_text(tuning) != tuning_text(base)) texts.push_back(text);
  }
  const int threads = std::min(build_threads(options, device->info()), int(texts.size()));
  if (threads > 1) {
    const std::string of = "/" + std::to_string(texts.size());
    say("building " + std::to_string(texts.size()) + " layouts' programs on " +
        std::to_string(threads) + " threads");
    build_candidates(workloads, format_of(family), texts, device, registry, base,
                     measure.measured().front(), threads,
                     [&](size_t built) { say("built " + std::to_string(built) + of); });
  }
  say("0/" + std::to_string(family.candidates.size()) +
      " (the database's): " + time_text(run.time("", 1)));
  double best = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < family.candidates.size(); ++c) {
    ++result.candidates;
    const std::string label = std::to_string(c + 1) + "/" +
                              std::to_string(family.candidates.size()) + " " +
                              family.candidates[c] + ": ";
    Tuning tuning = base;
    apply_tuning_text(tuning, family.candidates[c]);
    if (tuning_text(tuning) == tuning_text(base)) {  // the database's layout already
      say(label + "the database's layout");
      continue;
    }
    const double ms = run.time(family.candidates[c], 1);
    if (ms < 0) ++result.failed;
    say(label + time_text(ms));
    if (ms >= 0 && ms < best) best = ms, result.chosen = family.candidates[c];
  }
  const size_t sizes = measure.sizes();
  result.database_ms = best = std::numeric_limits<double>::infinity();
  for (int round = 0; round < 2; ++round) {
    result.database_ms = std::min(result.database_ms, run.time("", sizes));
    const double again = run.time(result.chosen, sizes);
    best = again < 0 ? again : std::min(best, again);
  }
  say("the fastest again beside the database's" + std::string(sizes > 1 ? ", every size: " : ": ") +
      time_text(best) + " against " + time_text(result.database_ms));
  // It replaces the database's layout only where it wins beyond the timing noise.
  if (best < 0 || best >= min_gain * result.database_ms) {
    result.chosen.clear();
    result.chosen_ms = result.database_ms;
  } else {
    result.chosen_ms = best;
  }
  return result;
}

std::string tuned_text(const DeviceInfo& info, const std::vector<TuneResult>& results,
                       const std::vector<std::pair<int, int>>& sizes, const Chain& chain) {
  std::string workloads = "the family's workloads";
  for (size_t f = 0; f < chain.size(); ++f) workloads += (f ? " + " : " and the chain ") + chain[f];
  std::ostringstream text;
  text << "# Written by clfilter --tune: the fastest layout of each kernel family measured on\n"
       << "# this device, per run of " << workloads << " at";
  for (const auto& [width, height] : sizes) text << " " << width << "x" << height;
  text << ".\n# Its images are f32 of 1 channel where a family's name gives no other type.\n"
       << "# Delete the file to go back to the tuning database alone.\n";
  for (const TuneResult& r : results) text << "# " << r.summary() << "\n";
  text << "[device " << info.name << "]\n";
  for (const TuneResult& r : results)
    for (const auto& [name, value] : pairs_of(r.chosen)) text << name << " = " << value << "\n";
  return text.str();
}

// `text` as the file at `path`, whole or not at all: written beside it, then renamed over it.
void write_tuned_file(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const std::string temp = path + ".tmp";
  std::error_code ec;
  fs::create_directories(fs::path(path).parent_path(), ec);
  if (!ec) {
    std::ofstream file(temp, std::ios::binary);
    file << text;
    file.close();
    if (!file) ec = std::error_code(errno ? errno : EIO, std::generic_category());
  }
  if (!ec) fs::rename(temp, path, ec);
  if (!ec) return;
  std::error_code ignored;
  fs::remove(temp, ignored);
  throw Error(ErrorKind::io,
              "cannot write the tuning run's results to " + path + ": " + ec.message());
}

// The bilateral's u8 layouts, its colour weights from tables of the whole-number distances. GPUs:
// one channel's rows layout, 4 outputs a work-item by the work-items that share a group's table,
// or 8, or its pairs by their outputs a work-item (8 rows outputs by other groups and 12 pairs
// outputs lost on the H200, and each program adds build time to the run; a strip's short groups
// take the rows layout in the pairs' order, bilateral.pair_min_rows_1ch, not tuned: a tuning run
// times whole images); three channels' pairs, the share of offsets weighted by exp and the copies
// of the table, or the rows. CPUs (SIMD vectors, the database's): the rows or the pairs in
// registers, on the smaller disc (PoCL's builds of the larger take long).
std::vector<TuneFamily> bilateral_families(const DeviceInfo& info) {
  const std::string d5 = "bilateral:d=5,sigma_color=40,sigma_space=3";
  const std::string d9 = "bilateral:d=9,sigma_color=75,sigma_space=75";
  if (!info.is_gpu) {
    const std::string rows = "bilateral.outputs=4,bilateral.rows_max_radius=8";
    return {{"bilateral u8 3 channels",
             {d5},
             {rows + ",bilateral.pair_channels=0", rows + ",bilateral.pair_channels=2"},
             PixelType::u8,
             3}};
  }
  TuneFamily one{"bilateral u8 1 channel", {d5, d9}, {}, PixelType::u8, 1};
  for (const char* group : {"128", "256", "512"})
    one.candidates.push_back(std::string("bilateral.pairs_1ch=0,bilateral.outputs=4") +
                             ",bilateral.table_group=" + group);
  one.candidates.push_back("bilateral.pairs_1ch=0,bilateral.outputs=8,bilateral.table_group=256");
  for (const char* outputs : {"4", "8"})
    one.candidates.push_back(std::string("bilateral.pairs_1ch=1,bilateral.pair_outputs_1ch=") +
                             outputs);
  TuneFamily three{
      "bilateral u8 3 channels", {d5, d9}, {"bilateral.pair_channels=0"}, PixelType::u8, 3};
  for (const char* exp : {"0", "0.25", "0.5", "0.75", "1"})
    for (const char* copies : {"4", "16"})
      three.candidates.push_back(std::string("bilateral.pair_channels=2,bilateral.pair_exp=") +
                                 exp + ",bilateral.packed_copies=" + copies);
  return {one, three};
}

}  // namespace

std::string TuneResult::summary() const {
  char line[128];
  std::snprintf(
      line, sizeof line,
      "%s: %.3f ms, the database's %.3f ms (%.2fx), %d candidates, %d refused: ", family.c_str(),
      chosen_ms, database_ms, database_ms / chosen_ms, candidates, failed);
  return line + (chosen.empty() ? std::string("the database's layout") : chosen);
}

std::vector<TuneFamily> tune_families(const DeviceInfo& info) {
  std::vector<TuneFamily> families{
      {"window",
       {"convolve:kernel=" + full_rank_kernel(5), "convolve:kernel=" + full_rank_kernel(9)},
       window_candidates(info)},
      {"separable", {"gaussian:sigma=2", "gaussian:sigma=5"}, separable_candidates(info)}};
  // The morphology plugin's rects by groups walking down the columns (the database's choice on
  // GPUs; candidates on every device): the columns a group owns, the blocks of 2 r + 1 rows it
  // walks down, and whether the 31x31 goes columns first (from radius 15; 16: never).
  TuneFamily walk{
      "rect walk", {"morphology:op=dilate,ksize=19", "morphology:op=dilate,ksize=31"}, {}};
  for (const char* group : {"64", "128"})
    for (const char* blocks : {"8", "16"})
      for (const char* columns_from : {"16", "15"})
        walk.candidates.push_back(std::string("morphology.rect_walk=1,morphology.walk_group=") +
                                  group + ",morphology.walk_blocks=" + blocks +
                                  ",morphology.walk_columns_min_radius=" + columns_from);
  families.push_back(std::move(walk));
  // The largest rect it takes, the lines past it: where its groups start to narrow, on 48 KiB.
  families.push_back(knob_family("rect walk reach",
                                 {"morphology:op=dilate,ksize=41", "morphology:op=erode,ksize=47"},
                                 "morphology.walk_max_radius", {"15", "20", "23"}));
  // Its lines past the walk's reach and after a first pass: the rows a work-item of the column
  // line walks down (0: one block each).
  families.push_back(knob_family("column line",
                                 {"morphology:op=dilate,ksize=63", "morphology:op=tophat,ksize=41"},
                                 "morphology.line_walk_rows", {"0", "100", "200", "400"}));
  // CPUs' rects in one pass on vectors: from which radius their rows take doubling windows (the
  // loop over the row's inputs below it; 1000: never).
  if (!info.is_gpu)
    families.push_back(
        knob_family("rect rows", {"morphology:op=dilate,ksize=9", "morphology:op=dilate,ksize=31"},
                    "morphology.row_doubling_min_radius", {"4", "2", "8", "1000"}));
  // The 3x3 median from sorted columns, 2 rows a work-item (the database's on CPUs; GPUs take
  // tiles of outputs, which it does not apply to), or the vectors' network.
  families.push_back(knob_family("median 3x3", {"median:ksize=3", "median:ksize=3,border=wrap"},
                                 "rank.median3_rows", {"2", "0"}));
  // The row line in tiles of outputs a group, their blocks scanned in chunks, from 81x81 (the
  // database's on GPUs), or one block a work-item at every radius.
  families.push_back(
      {"row line",
       {"morphology:op=dilate,ksize=101", "morphology:op=close,ksize=201"},
       {"morphology.row_tile=2048,morphology.row_tile_min_radius=40", "morphology.row_tile=0"}});
  for (TuneFamily& family : bilateral_families(info)) families.push_back(std::move(family));
  return families;
}

std::string tuned_file(const Device& device) {
  return detail::tuned_path(device.info(), device.cache_dir());
}

std::string tuned_file(const DeviceInfo& info, const std::string& cache_dir) {
  return detail::tuned_path(info, cache_dir);
}

std::vector<TuneResult> tune(const std::shared_ptr<Device>& device, const Registry& registry,
                             const TuneOptions& options) {
  const std::string path = tuned_file(*device);
  if (path.empty())
    throw Error(ErrorKind::usage,
                "tuning needs a cache directory to keep its results in (CLF_NO_DISK_CACHE is set)");
  for (const std::string& text : options.chain) {  // refused by name before anything is measured
    const FilterSpec spec = parse_filter_spec(text);
    const auto factory = registry.get(spec.name);
    validate_params(factory->name(), factory->params(), spec.params);
  }
  const DeviceInfo& info = device->info();
  // GPUs: 4096^2 and 8192^2, so that a layout wins from 4K-size to large images: the rect walk's
  // reach fastest at 4096^2 alone is not at 8192^2.
  const std::vector<std::pair<int, int>> sizes =
      !options.sizes.empty() ? options.sizes
      : info.is_gpu          ? std::vector<std::pair<int, int>>{{4096, 4096}, {8192, 8192}}
                             : std::vector<std::pair<int, int>>{{1024, 1024}};
  // From the database alone, whatever an earlier tuning run chose.
  Tuning base;
  detail::apply_tuning_database(base, info, detail::tuning_database());
  // Measured on a twin, whose tuning each candidate sets: the device's own changes once, to the
  // winners, while other threads may be making filters on it.
  const auto measuring = detail::DeviceTwin::make(*device, base);
  std::vector<TuneResult> results;
  const std::vector<TuneFamily> families = tune_families(info);
  std::vector<Format> formats;
  for (const TuneFamily& family : families)
    if (std::find(formats.begin(), formats.end(), format_of(family)) == formats.end())
      formats.push_back(format_of(family));
  Measure measure(measuring, registry, sizes, formats);
  Tuning tuned = base;
  for (const TuneFamily& family : families) {  // each over the ones before
    results.push_back(tune_family(family, measuring, registry, tuned, measure, options));
    apply_tuning_text(tuned, results.back().chosen);
  }
  write_tuned_file(path, tuned_text(info, results, measure.measured(), options.chain));
  device->set_tuning(tuned);
  return results;
}

}  // namespace clf

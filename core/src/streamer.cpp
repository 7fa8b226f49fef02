// Streams an image through a chain of filters in strips: host pack -> upload (queue U) -> unpack,
// pad + filter per stage, pack (queue C) -> download (queue D) -> host unpack on a worker thread.
// A ring of N slots keeps N strips in flight; events order upload -> compute -> download per strip,
// and a slot is reused only after its previous strip has landed in the output image. Pinned
// images skip the host copies (DMA straight from/to them); on CPU devices (zero-copy) the unpack
// and pack kernels read and write the images in place and nothing is transferred at all.
//
// Rows: for output strip [y0, y1) and a chain of n filters with vertical halos hy_1..hy_n, let
// rem_k = hy_{k+1} + ... + hy_n. Stage k computes the image rows O_k = [y0 - rem_k, y1 + rem_k)
// clipped to the image; O_0 is what is uploaded and O_n is the strip. Stage k's input holds O_k
// plus hy_k rows either side; rows outside the image are filled by the border rule from rows of
// O_{k-1}, exactly as a whole-image run would, so streamed output is bit-identical to it.
#include "streamer.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "clf/error.hpp"
#include "embedded.hpp"
#include "host_copy.hpp"

namespace clf::detail {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int pitch_align = 32;  // floats: rows start on 128-byte boundaries
constexpr uint64_t max_buffer_floats = (uint64_t(1) << 31) - 1;  // kernels index with int

int round_up(int value, int multiple) { return (value + multiple - 1) / multiple * multiple; }
// Strips the host may enqueue beyond the slot ring when the device orders slot reuse itself.
constexpr int enqueue_ahead = 8;

struct Range {
  int begin = 0, end = 0;
  int size() const { return end - begin; }
};

// Everything about the strip geometry for one strip height.
struct Layout {
  int width = 0, height = 0, channels = 0, n = 0, strip_rows = 0, strips = 0;
  size_t type_size = 0;
  std::vector<int> hx, hy, temps;  // per stage, index k-1
  std::vector<int> rem;            // k = 0..n
  std::vector<int> pitch, capacity_rows;  // stage inputs k = 1..n+1 (n+1 = final output), index k-1
  int temp_pitch = 0;
  size_t work_floats = 0, temp_floats = 0;  // per ping-pong buffer, per temp plane set
  int max_temps = 0;
  size_t upload_bytes = 0, download_bytes = 0;

  bool zero_copy = false;  // the host images are the upload/download buffers: none allocated

  Layout(const std::vector<Filter*>& chain, const ImageShape& image, int rows, bool in_place) : zero_copy(in_place) {
    width = image.width;
    height = image.height;
    channels = image.channels;
    type_size = pixel_type_size(image.type);
    n = int(chain.size());
    strip_rows = std::min(rows, height);
    strips = (height + strip_rows - 1) / strip_rows;
    for (Filter* f : chain) {
      hx.push_back(f->halo().x);
      hy.push_back(f->halo().y);
      temps.push_back(f->temp_planes());
    }
    rem.assign(size_t(n) + 1, 0);
    for (int k = n - 1; k >= 0; --k) rem[size_t(k)] = rem[size_t(k) + 1] + hy[size_t(k)];
    auto max_rows = [&](int k) { return int(std::min<int64_t>(height, int64_t(strip_rows) + 2 * rem[size_t(k)])); };
    temp_pitch = round_up(width, pitch_align);
    for (int k = 1; k <= n + 1; ++k) {
      const int halo_x = k <= n ? hx[size_t(k) - 1] : 0, halo_y = k <= n ? hy[size_t(k) - 1] : 0;
      pitch.push_back(round_up(round_up(width, 4) + 2 * plane_margin(halo_x), pitch_align));
      capacity_rows.push_back(max_rows(std::min(k, n)) + 2 * halo_y);
      work_floats = std::max(work_floats, size_t(channels) * pitch.back() * capacity_rows.back());
      if (k <= n && temps[size_t(k) - 1] > 0) {
        temp_floats = std::max(temp_floats, size_t(channels) * temp_pitch * capacity_rows.back());
        max_temps = std::max(max_temps, temps[size_t(k) - 1]);
      }
    }
    upload_bytes = size_t(width) * channels * type_size * max_rows(0);
    download_bytes = size_t(width) * channels * type_size * strip_rows;
  }

  uint64_t slot_bytes() const {
    return (zero_copy ? 0 : upload_bytes + download_bytes) +
           sizeof(float) * (2 * work_floats + size_t(max_temps) * temp_floats);
  }
  bool indexable() const {
    return work_floats <= max_buffer_floats && temp_floats <= max_buffer_floats &&
           upload_bytes / type_size <= max_buffer_floats;
  }
  size_t plane_stride(int k) const { return size_t(pitch[size_t(k) - 1]) * capacity_rows[size_t(k) - 1]; }
  Range strip(int i) const { return {i * strip_rows, std::min(height, (i + 1) * strip_rows)}; }
  Range rows(int k, Range s) const {  // O_k
    return {std::max(0, s.begin - rem[size_t(k)]), std::min(height, s.end + rem[size_t(k)])};
  }

  // Every out-of-image row a stage's border needs must come from rows the previous stage computed
  // in the same strip (never true for wrap unless the strip is the whole image).
  bool borders_reachable(const std::vector<Filter*>& chain) const {
    for (int i = 0; i < strips; ++i) {
      const Range s = strip(i);
      for (int k = 1; k <= n; ++k) {
        const Border border = chain[size_t(k) - 1]->border();
        if (border.mode == BorderMode::constant) continue;
        const Range out = rows(k, s), prev = rows(k - 1, s);
        const int h = hy[size_t(k) - 1];
        auto reachable = [&](int p) {
          const int m = border_interpolate(p, height, border.mode);
          return m >= prev.begin && m < prev.end;
        };
        for (int p = out.begin - h; p < std::min(0, out.end + h); ++p)  // above the image
          if (!reachable(p)) return false;
        for (int p = std::max(height, out.begin - h); p < out.end + h; ++p)  // below it
          if (!reachable(p)) return false;
      }
    }
    return true;
  }
};

struct Recorded {
  cl::Event event;
  std::string name;
  int track;  // 0 upload, 1 compute, 2 download
};

struct HostSpan {
  int track;  // 3 host pack, 4 host unpack
  std::string name;
  Clock::time_point start, end;
};

const char* const track_names[] = {"upload", "compute", "download", "host pack", "host unpack"};

double busy_ms(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, cur_start = 0, cur_end = -1;
  for (auto [s, e] : spans) {
    if (s > cur_end) {
      if (cur_end > cur_start) total += cur_end - cur_start;
      cur_start = s;
      cur_end = e;
    } else {
      cur_end = std::max(cur_end, e);
    }
  }
  if (cur_end > cur_start) total += cur_end - cur_start;
  return total / 1000.0;
}

class Run {
 public:
  Run(Device& device, const std::vector<Filter*>& chain, const Endpoints& ends,
      const RunOptions& options, const Layout& layout, int slots, StreamResources& resources)
      : device_(device), chain_(chain), ends_(ends), shape_(ends.shape), options_(options), layout_(layout),
        slots_(slots), res_(resources), in_pinned_(ends.in && ends.in->pinned()),
        out_pinned_(ends.out && ends.out->pinned()) {}

  void execute(RunStats& stats);
  // Rows were taken from the source: a run that fails now cannot be retried from row 0 unless the
  // whole input is in memory.
  bool source_used() const { return source_used_; }

 private:
  void make_queues();
  void make_slots();
  void enqueue_strip(int index, Slot& slot, cl::Event& downloaded);
  void plan_uploads();        // fills fresh_
  std::vector<Range> fresh_;  // per strip: the rows it uploads from the host (the rest are shared)
  double enqueue_us_ = 0;     // host time inside enqueue_strip
  void worker_loop();
  void finish_stats(RunStats& stats, Clock::time_point t0);
  void collect(RunStats& stats, Clock::time_point t0);

  Device& device_;
  const std::vector<Filter*>& chain_;
  const Endpoints& ends_;
  const ImageShape shape_;
  const RunOptions& options_;
  const Layout& layout_;
  const int slots_;

  StreamResources& res_;  // kept by the Pipeline; the names below are views of it
  cl::CommandQueue (&queues_)[3] = res_.queues;
  cl::Kernel &unpack_ = res_.unpack, &pack_ = res_.pack, &pad_rows_ = res_.pad_rows, &pad_cols_ = res_.pad_cols;
  int& pack_vector_ = res_.pack_vector;
  std::vector<Slot>& ring_ = res_.ring;
  const bool in_pinned_, out_pinned_;       // DMA straight from / to the whole images
  bool source_used_ = false;
  bool final_in_place_ = false;             // the last stage writes the output image itself
  cl::Buffer in_place_in_, in_place_out_;  // zero-copy: buffers over the host images

  // profiling
  std::vector<Recorded> recorded_;
  std::vector<HostSpan> host_spans_;
  std::mutex spans_mutex_;
  Clock::time_point first_enqueue_;
  cl::Event first_event_;

  // worker: copies landed strips from pinned memory into the output image
  struct Landing {
    int index;
    Slot* slot;
    cl::Event downloaded;
    void wait_downloaded() const {
      cl_check(downloaded.wait(), "clWaitForEvents", "strip " + std::to_string(index) + " download");
    }
  };
  // Checks for cancellation, then enqueues strip `index` in its slot, timing the host's part.
  Landing issue_strip(int index);
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Landing> landing_;
  int landed_ = 0;
  bool closing_ = false;
  std::exception_ptr worker_error_;
};

void Run::make_queues() {
  const int vw = device_.tuning().vector_width;
  const std::string key = std::to_string(options_.queues) + (options_.profile ? " profiled " : " ") +
                          pixel_type_name(shape_.type) + " " + std::to_string(shape_.channels) + " " + std::to_string(vw);
  if (res_.queues_key == key) return;
  res_.queues_key.clear();
  const cl_command_queue_properties props = options_.profile ? CL_QUEUE_PROFILING_ENABLE : 0;
  for (int q = 0; q < 3; ++q) {
    if (q > 0 && options_.queues == 1) {
      queues_[q] = queues_[0];
      continue;
    }
    cl_int err = CL_SUCCESS;
    queues_[q] = cl::CommandQueue(device_.context(), device_.device(), props, &err);
    cl_check(err, "clCreateCommandQueue", track_names[q]);
  }
  const int pixel = int(shape_.type);  // PixelType order matches CLF_PIXEL in pack.cl
  // Single-channel rows convert a vector of pixels per work-item where the device likes vectors.
  pack_vector_ = shape_.channels == 1 && vw > 1 ? vw : 1;
  std::string options = "-D CLF_PIXEL=" + std::to_string(pixel);
  if (pack_vector_ > 1) options += " -D VW=" + std::to_string(pack_vector_);
  cl::Program pack = device_.build("clf_pack", clf_kernel_pack_cl, options);
  cl::Program pad = device_.build("clf_pad", clf_kernel_pad_cl, "");
  unpack_ = device_.kernel(pack, pack_vector_ > 1 ? "clf_unpack1" : "clf_unpack");
  pack_ = device_.kernel(pack, pack_vector_ > 1 ? "clf_pack1" : "clf_pack");
  pad_rows_ = device_.kernel(pad, "clf_pad_rows");
  pad_cols_ = device_.kernel(pad, "clf_pad_cols");
  res_.queues_key = key;
}

void Run::make_slots() {
  if (layout_.zero_copy) {
    const Image& in = *ends_.in;
    Image& out = *ends_.out;
    cl_int err = CL_SUCCESS;
    // The kernels only read `in`; OpenCL's host-pointer buffers are not const-typed.
    in_place_in_ = cl::Buffer(device_.context(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY, in.byte_size(),
                              const_cast<std::byte*>(in.data()), &err);
    cl_check(err, "clCreateBuffer", "input image in place");
    in_place_out_ = cl::Buffer(device_.context(), CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY, out.byte_size(),
                               out.data(), &err);
    cl_check(err, "clCreateBuffer", "output image in place");
    // f32 single-channel output has the layout of a float plane: no pack pass needed.
    final_in_place_ = out.type() == PixelType::f32 && out.channels() == 1 &&
                      out.byte_size() / sizeof(float) <= max_buffer_floats;
  }
  const Layout& L = layout_;
  const std::string key = std::to_string(slots_) + " " + std::to_string(L.upload_bytes) + " " +
                          std::to_string(L.download_bytes) + " " + std::to_string(L.work_floats) + " " +
                          std::to_string(L.temp_floats) + " " + std::to_string(L.max_temps) +
                          (L.zero_copy ? " in place" : "") + (in_pinned_ ? " pinned in" : "") +
                          (out_pinned_ ? " pinned out" : "");
  if (res_.ring_key == key) return;
  res_.ring_key.clear();
  ring_.clear();  // free the old ring before the new one is counted against the budget
  ring_.resize(size_t(slots_));
  for (auto& slot : ring_) {
    for (auto& work : slot.work) work = device_.alloc(layout_.work_floats * sizeof(float), "strip planes");
    for (int t = 0; t < layout_.max_temps; ++t)
      slot.temps.push_back(device_.alloc(layout_.temp_floats * sizeof(float), "filter temp planes"));
    if (layout_.zero_copy) continue;
    slot.up = device_.alloc(layout_.upload_bytes, "upload strip", CL_MEM_READ_ONLY);
    slot.down = device_.alloc(layout_.download_bytes, "download strip", CL_MEM_WRITE_ONLY);
    // Pinned host staging, unless the image itself is pinned: DMA runs from/to it while kernels
    // run (pageable memory is several times slower and serialises on a bounce buffer).
    if (!in_pinned_) slot.staging_in = device_.pinned(layout_.upload_bytes, "pinned upload staging");
    if (!out_pinned_) slot.staging_out = device_.pinned(layout_.download_bytes, "pinned download staging");
  }
  res_.ring_key = key;
}

void Run::plan_uploads() {
  // Strip i may take its first rows from strip i-1's upload buffer only where strip i-1 uploaded
  // them itself (a strip shorter than twice the halo got some of its own from strip i-2).
  fresh_.clear();
  for (int i = 0; i < layout_.strips; ++i) {
    const Range up_rows = layout_.rows(0, layout_.strip(i));
    Range fresh = up_rows;
    if (i > 0 && !layout_.zero_copy && slots_ >= 2) {
      const Range prev = layout_.rows(0, layout_.strip(i - 1));
      const int begin = std::min(up_rows.end, std::max(up_rows.begin, prev.end));
      const uint64_t shared_bytes = uint64_t(begin - up_rows.begin) * shape_.row_bytes();
      if (begin > up_rows.begin && up_rows.begin >= fresh_.back().begin &&
          shared_bytes >= options_.device_halo_copy_bytes)
        fresh.begin = begin;
    }
    fresh_.push_back(fresh);
  }
}

void Run::enqueue_strip(int index, Slot& slot, cl::Event& downloaded) {
  const Layout& L = layout_;
  const Range strip = L.strip(index);
  const Range up_rows = L.rows(0, strip);
  const size_t row_bytes = shape_.row_bytes();
  const bool profile = options_.profile;
  const std::string tag = "strip " + std::to_string(index) + " ";

  // Rows shared with the previous strip (its lower halo and this one's upper halo) are already on
  // the device when there are enough of them to matter (fresh_rows): the unpack kernel reads them
  // from that strip's upload buffer, whose next upload then waits for this strip's kernels.
  const Range fresh = fresh_[size_t(index)];
  const size_t fresh_offset = row_bytes * size_t(fresh.begin - up_rows.begin);

  // Host pack: the new rows from the source, into pinned memory (a pinned image is DMA'd directly;
  // in place, the unpack kernel reads the image itself).
  const void* upload_from = in_pinned_ ? ends_.in->row(fresh.begin) : nullptr;
  if (!in_pinned_ && !L.zero_copy && fresh.size() > 0) {
    const auto pack_start = Clock::now();
    ends_.source->discard_before(up_rows.begin);
    source_used_ = true;
    ends_.source->read(fresh.begin, fresh.end, slot.staging_in.data + fresh_offset);
    upload_from = slot.staging_in.data + fresh_offset;
    if (profile) {
      std::lock_guard<std::mutex> lock(spans_mutex_);
      host_spans_.push_back({3, tag + "pack", pack_start, Clock::now()});
    }
  }

  std::vector<cl::Event> ready;  // what the strip's first kernel waits for
  if (slot.downloaded()) ready.push_back(slot.downloaded);  // its download buffer is free
  if (index == 0) first_enqueue_ = Clock::now();
  if (!L.zero_copy && fresh.size() > 0) {
    // The slot's upload buffer is free once its last strip, and the strip after it, have read it.
    std::vector<cl::Event> free_up;
    if (slot.up_free()) free_up.push_back(slot.up_free);
    cl::Event uploaded;
    cl_check(queues_[0].enqueueWriteBuffer(slot.up.get(), CL_FALSE, fresh_offset, row_bytes * fresh.size(),
                                           upload_from, free_up.empty() ? nullptr : &free_up, &uploaded),
             "clEnqueueWriteBuffer", tag + "upload");
    if (profile) recorded_.push_back({uploaded, tag + "upload", 0});
    if (index == 0) first_event_ = uploaded;  // device time -> host time (collect)
    ready.push_back(uploaded);
  }
  const int shared_rows = fresh.begin - up_rows.begin;
  Slot& prev_slot = ring_[size_t((index + slots_ - 1) % slots_)];

  // Compute: one Stage object carries the queue and the profiling sinks for every launch.
  std::vector<cl::Event> kernel_events;
  std::vector<std::string> kernel_names;
  Stage stage;
  stage.device_ = &device_;
  stage.queue_ = &queues_[1];
  stage.channels_ = L.channels;
  // Profiling keeps every launch's event; otherwise only the strip's last kernel's (the pack, else a
  // marker) orders the download: an event per launch is host work per command for the driver.
  stage.events_ = profile ? &kernel_events : nullptr;
  stage.event_names_ = profile ? &kernel_names : nullptr;
  auto layout_plane = [&](int k, const DeviceBuffer& buffer, const Range& own_rows) {
    // Plane of stage input k (k = n+1: the final output), origin at image row own_rows.begin.
    if (k == L.n + 1 && final_in_place_) {
      // Single-channel float planes laid out as the image itself: write the output in place.
      Plane p;
      p.buffer = in_place_out_;
      p.pitch = L.width;
      p.plane_stride = 0;
      p.origin = own_rows.begin * L.width;
      p.width = L.width;
      p.rows = own_rows.size();
      return p;
    }
    Plane p;
    p.buffer = buffer.get();
    p.pitch = L.pitch[size_t(k) - 1];
    p.plane_stride = int(L.plane_stride(k));
    const int halo_x = k <= L.n ? L.hx[size_t(k) - 1] : 0, halo_y = k <= L.n ? L.hy[size_t(k) - 1] : 0;
    p.origin = halo_y * p.pitch + plane_margin(halo_x);
    p.width = L.width;
    p.rows = own_rows.size();
    return p;
  };
  auto work_for_input = [&](int k) -> const DeviceBuffer& { return slot.work[(k - 1) % 2]; };

  // Unpack the uploaded native rows into stage 1's input planes.
  {
    const int k = 1;
    const Range own = k <= L.n ? L.rows(1, strip) : strip;
    Plane dst = plane_rows(layout_plane(k, work_for_input(k), own), up_rows.begin - own.begin, up_rows.size());
    cl::Kernel& kernel = unpack_;
    kernel.setArg(0, L.zero_copy ? in_place_in_ : slot.up.get());
    kernel.setArg(1, cl_ulong(L.zero_copy ? size_t(up_rows.begin) * L.width * L.channels : 0));
    kernel.setArg(2, L.width);
    kernel.setArg(3, up_rows.size());
    kernel.setArg(4, L.channels);
    const cl_uint next = dst.set_args(kernel, 5);
    if (shared_rows > 0) {
      const Range prev = L.rows(0, L.strip(index - 1));
      kernel.setArg(next, prev_slot.up.get());
      // In samples: row up_rows.begin of the previous strip's buffer, minus this strip's row 0.
      kernel.setArg(next + 1, cl_ulong(size_t(up_rows.begin - prev.begin) * L.width * L.channels));
    } else {
      kernel.setArg(next, L.zero_copy ? in_place_in_ : slot.up.get());
      kernel.setArg(next + 1, cl_ulong(0));
    }
    kernel.setArg(next + 2, shared_rows);
    // The first stage's left and right halo columns, filled by the same launch (no clf_pad_cols).
    const int hx = L.n > 0 ? L.hx[0] : 0;
    const Border border = L.n > 0 ? chain_[0]->border() : Border{};
    kernel.setArg(next + 3, hx);
    kernel.setArg(next + 4, int(border.mode));
    kernel.setArg(next + 5, border.value);
    // The compute queue is in order: waiting here orders every kernel of this strip after it.
    cl::Event event;
    const int items = (L.width + pack_vector_ - 1) / pack_vector_ + 2 * hx;
    cl_check(queues_[1].enqueueNDRangeKernel(kernel, cl::NullRange,
                                             cl::NDRange(round_up(items, 64), up_rows.size()),
                                             cl::NDRange(64, 1), ready.empty() ? nullptr : &ready,
                                             profile ? &event : nullptr),
             "clEnqueueNDRangeKernel", "clf_unpack");
    if (index == 0 && L.zero_copy) first_event_ = event;
    if (profile) {
      kernel_events.push_back(event);
      kernel_names.push_back("clf_unpack");
    }
  }

  for (int k = 1; k <= L.n; ++k) {
    Filter& filter = *chain_[size_t(k) - 1];
    const Range own = L.rows(k, strip);
    const int hx = L.hx[size_t(k) - 1], hy = L.hy[size_t(k) - 1];
    const Border border = filter.border();
    Plane input = layout_plane(k, work_for_input(k), own);

    // Pad: halo rows outside the image, then left/right halo columns of rows inside it.
    const int top = std::max(0, hy - own.begin);
    const int bottom = std::max(0, own.end + hy - L.height);
    for (auto [row_begin, count] : {std::pair{-hy, top}, std::pair{L.height - own.begin, bottom}}) {
      if (count == 0) continue;
      input.set_args(pad_rows_, 0);
      pad_rows_.setArg(4, L.width);
      pad_rows_.setArg(5, hx);
      pad_rows_.setArg(6, own.begin);
      pad_rows_.setArg(7, L.height);
      pad_rows_.setArg(8, row_begin);
      pad_rows_.setArg(9, int(border.mode));
      pad_rows_.setArg(10, border.value);
      stage.launch(pad_rows_, cl::NDRange(round_up(L.width + 2 * hx, 64), count, L.channels),
                   cl::NDRange(64, 1, 1), "clf_pad_rows");
    }
    const int inside_begin = std::max(-hy, -own.begin);
    const int inside_end = std::min(own.size() + hy, L.height - own.begin);
    if (hx > 0 && inside_end > inside_begin && k > 1) {  // stage 1's: the unpack filled them
      input.set_args(pad_cols_, 0);
      pad_cols_.setArg(4, L.width);
      pad_cols_.setArg(5, hx);
      pad_cols_.setArg(6, inside_begin);
      pad_cols_.setArg(7, int(border.mode));
      pad_cols_.setArg(8, border.value);
      stage.launch(pad_cols_, cl::NDRange(2 * hx, inside_end - inside_begin, L.channels),
                   cl::NullRange, "clf_pad_cols");
    }

    // Output: into the next stage's input layout (or the final planes), at this stage's rows.
    const Range next_own = k < L.n ? L.rows(k + 1, strip) : strip;
    Plane output = plane_rows(layout_plane(k + 1, slot.work[k % 2], next_own), own.begin - next_own.begin, own.size());
    stage.input_ = input;
    stage.output_ = output;
    stage.temps_.clear();
    for (int t = 0; t < L.temps[size_t(k) - 1]; ++t) {
      Plane temp;
      temp.buffer = slot.temps[size_t(t)].get();
      temp.pitch = L.temp_pitch;
      temp.plane_stride = int(size_t(L.temp_pitch) * L.capacity_rows[size_t(k) - 1]);
      temp.origin = hy * temp.pitch;
      temp.width = L.width;
      temp.rows = own.size();
      stage.temps_.push_back(temp);
    }
    filter.enqueue(stage);
  }

  // Pack the final planes into native pixels (unless they already are the output image).
  if (!final_in_place_) {
    Plane src = layout_plane(L.n + 1, slot.work[L.n % 2], strip);
    src.set_args(pack_, 0);
    pack_.setArg(4, L.zero_copy ? in_place_out_ : slot.down.get());
    pack_.setArg(5, cl_ulong(L.zero_copy ? size_t(strip.begin) * L.width * L.channels : 0));
    pack_.setArg(6, L.width);
    pack_.setArg(7, strip.size());
    pack_.setArg(8, L.channels);
    const int items = (L.width + pack_vector_ - 1) / pack_vector_;
    cl::Event packed;  // the strip's last kernel: its event orders the download
    cl_check(queues_[1].enqueueNDRangeKernel(pack_, cl::NullRange, cl::NDRange(round_up(items, 64), strip.size()),
                                             cl::NDRange(64, 1), nullptr, &packed),
             "clEnqueueNDRangeKernel", "clf_pack");
    kernel_events.push_back(packed);
    if (profile) kernel_names.push_back("clf_pack");
  }
  if (kernel_events.empty()) {  // unprofiled, the last kernel a filter's own: a marker after it
    cl::Event marker;
    cl_check(queues_[1].enqueueMarkerWithWaitList(nullptr, &marker), "clEnqueueMarkerWithWaitList",
             tag + "computed");
    kernel_events.push_back(marker);
  }
  std::vector<cl::Event> computed{kernel_events.back()};
  slot.up_free = kernel_events.back();
  if (shared_rows > 0) prev_slot.up_free = kernel_events.back();  // read by this strip's unpack
  if (profile)
    for (size_t e = 0; e < kernel_events.size(); ++e)
      recorded_.push_back({kernel_events[e], tag + kernel_names[e], 1});

  if (L.zero_copy) {
    // The strip's output rows are in the image already; mapping them is OpenCL's way of saying the
    // host may read them (a no-op on CPU devices that use the host pointer).
    cl_int err = CL_SUCCESS;
    const size_t offset = row_bytes * size_t(strip.begin), bytes = row_bytes * strip.size();
    void* mapped = queues_[1].enqueueMapBuffer(in_place_out_, CL_FALSE, CL_MAP_READ, offset, bytes, &computed,
                                               &downloaded, &err);
    cl_check(err, "clEnqueueMapBuffer", tag + "output rows");
    cl_check(queues_[1].enqueueUnmapMemObject(in_place_out_, mapped, nullptr, nullptr), "clEnqueueUnmapMemObject",
             tag + "output rows");
    cl_check(queues_[1].flush(), "clFlush", "compute");
    return;
  }

  void* download_to = out_pinned_ ? static_cast<void*>(ends_.out->row(strip.begin)) : slot.staging_out.data;
  cl_check(queues_[2].enqueueReadBuffer(slot.down.get(), CL_FALSE, 0, row_bytes * strip.size(),
                                        download_to, &computed, &downloaded),
           "clEnqueueReadBuffer", tag + "download");
  if (profile) recorded_.push_back({downloaded, tag + "download", 2});
  slot.downloaded = downloaded;
  for (int q = 0; q < 3; ++q) cl_check(queues_[q].flush(), "clFlush", track_names[q]);
}

void Run::worker_loop() {
  try {
    for (;;) {
      Landing job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !landing_.empty() || closing_; });
        if (landing_.empty()) return;
        job = landing_.front();
        landing_.pop_front();
      }
      job.wait_downloaded();
      const auto start = Clock::now();
      const Range strip = layout_.strip(job.index);
      const bool in_place = out_pinned_ || layout_.zero_copy;
      if (!in_place) ends_.sink->write(strip.begin, strip.end, job.slot->staging_out.data);
      if (options_.profile && !in_place) {
        std::lock_guard<std::mutex> lock(spans_mutex_);
        host_spans_.push_back({4, "strip " + std::to_string(job.index) + " unpack", start, Clock::now()});
      }
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++landed_;
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    worker_error_ = std::current_exception();
    closing_ = true;
    cv_.notify_all();
  }
}

Run::Landing Run::issue_strip(int index) {
  if (options_.cancel && options_.cancel->load())
    throw Error(ErrorKind::cancelled, "interrupted after " + std::to_string(index) + " of " +
                                          std::to_string(layout_.strips) + " strips");
  Landing job{index, &ring_[size_t(index % slots_)], cl::Event()};
  const auto start = Clock::now();
  enqueue_strip(index, *job.slot, job.downloaded);
  enqueue_us_ += std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return job;
}

void Run::execute(RunStats& stats) {
  make_queues();
  make_slots();
  for (Slot& slot : ring_) slot.up_free = slot.downloaded = cl::Event();
  plan_uploads();
  // With host copies (pageable images, zero-copy maps) a slot is free for the host once the strip
  // that used it last has landed, and a worker thread lands strips while this one enqueues. Without
  // them the device orders slot reuse by events (enqueue_strip) and this thread alone enqueues up
  // to enqueue_ahead strips past the ring, landing the oldest as it goes: no host wake-up sits
  // between strips, and Ctrl-C still stops within a few strips.
  const bool host_copies = layout_.zero_copy || !in_pinned_ || !out_pinned_;
  const auto t0 = Clock::now();
  std::exception_ptr error;
  if (!host_copies) {
    std::deque<Landing> pending;
    auto land = [&] {
      pending.front().wait_downloaded();
      pending.pop_front();
      if (options_.progress) options_.progress(++landed_, layout_.strips);
    };
    try {
      for (int i = 0; i < layout_.strips; ++i) {
        while (!pending.empty() && pending.front().index < i - slots_ - enqueue_ahead) land();
        pending.push_back(issue_strip(i));
      }
      while (!pending.empty()) land();
    } catch (...) {
      error = std::current_exception();
    }
    for (auto& q : queues_) q.finish();
    if (error) std::rethrow_exception(error);
    finish_stats(stats, t0);
    return;
  }
  std::thread worker([this] { worker_loop(); });
  // This thread reports progress (the callback runs on the caller's thread, whatever the images)
  // while it waits for the worker: for a free slot, then for the last strips.
  int reported = 0;
  auto wait_landed = [&](int count) {
    for (;;) {
      int landed;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return landed_ > reported || landed_ >= count || worker_error_; });
        if (worker_error_) return false;
        landed = landed_;
      }
      if (options_.progress && landed > reported) options_.progress(landed, layout_.strips);
      reported = landed;
      if (landed >= count) return true;
    }
  };
  try {
    for (int i = 0; i <= layout_.strips; ++i) {
      if (!wait_landed(i < layout_.strips ? i - slots_ + 1 : layout_.strips) || i == layout_.strips) break;
      Landing job = issue_strip(i);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        landing_.push_back(job);
      }
      cv_.notify_all();
    }
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  worker.join();
  for (auto& q : queues_) q.finish();
  if (error) std::rethrow_exception(error);
  if (worker_error_) std::rethrow_exception(worker_error_);
  finish_stats(stats, t0);
}

void Run::finish_stats(RunStats& stats, Clock::time_point t0) {
  stats.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  stats.host_enqueue_ms = enqueue_us_ / 1000.0;
  stats.bytes_uploaded = 0;
  for (int i = 0; i < layout_.strips; ++i) stats.bytes_uploaded += shape_.row_bytes() * fresh_[size_t(i)].size();
  stats.bytes_downloaded = shape_.row_bytes() * size_t(shape_.height);
  if (options_.profile) collect(stats, t0);
}

void Run::collect(RunStats& stats, Clock::time_point t0) {
  // Device timestamps -> the host clock: the first upload was queued when the host enqueued it.
  cl_ulong queued = 0;
  first_event_.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &queued);
  const double offset_us =
      std::chrono::duration<double, std::micro>(first_enqueue_ - t0).count() - double(queued) / 1000.0;
  std::vector<std::pair<double, double>> spans[3];
  for (auto& r : recorded_) {
    cl_ulong start = 0, end = 0;
    if (r.event.getProfilingInfo(CL_PROFILING_COMMAND_START, &start) != CL_SUCCESS ||
        r.event.getProfilingInfo(CL_PROFILING_COMMAND_END, &end) != CL_SUCCESS)
      continue;
    const double s = double(start) / 1000.0 + offset_us, e = double(end) / 1000.0 + offset_us;
    spans[r.track].push_back({s, e});
    stats.trace.push_back({track_names[r.track], r.name, s, e});
  }
  for (auto& h : host_spans_)
    stats.trace.push_back({track_names[h.track], h.name,
                           std::chrono::duration<double, std::micro>(h.start - t0).count(),
                           std::chrono::duration<double, std::micro>(h.end - t0).count()});
  stats.upload_busy_ms = busy_ms(spans[0]);
  stats.compute_busy_ms = busy_ms(spans[1]);
  stats.download_busy_ms = busy_ms(spans[2]);
  stats.profiled = true;
}

uint64_t default_budget(const DeviceInfo& info) {
  // Leave room for other users of the device and for the driver's own allocations.
  return info.global_mem_bytes / 2;
}

}  // namespace

uint64_t StreamResources::ring_bytes() const {
  uint64_t bytes = 0;
  for (const auto& slot : ring) {
    bytes += slot.up.bytes() + slot.down.bytes() + slot.work[0].bytes() + slot.work[1].bytes();
    for (const auto& t : slot.temps) bytes += t.bytes();
  }
  return bytes;
}

RunStats stream(Device& device, const std::vector<Filter*>& chain, const Endpoints& ends,
                const RunOptions& options, StreamResources& resources) {
  if (options.slots < 1 || options.slots > 64)
    throw Error(ErrorKind::usage, "slots must be in [1, 64] (got " + std::to_string(options.slots) + ")");
  if (options.queues != 1 && options.queues != 3)
    throw Error(ErrorKind::usage, "queues must be 1 or 3 (got " + std::to_string(options.queues) + ")");
  if (options.strip_rows < 0)
    throw Error(ErrorKind::usage, "strip rows must be >= 0 (got " + std::to_string(options.strip_rows) + ")");
  const ImageShape& in = ends.shape;
  const DeviceInfo& info = device.info();
  // In place only where the images fit one buffer each (the driver refuses larger host-pointer
  // buffers with CL_INVALID_BUFFER_SIZE); larger images stream in strips like on a GPU.
  const uint64_t max_alloc = device.max_alloc_bytes();
  const bool zero_copy = options.zero_copy && info.is_cpu && ends.in && ends.out &&
                         ends.in->byte_size() <= max_alloc;
  uint64_t budget = options.max_device_memory ? options.max_device_memory : default_budget(info);
  // Filter weights and the like, already allocated (a ring kept from the last run is this run's).
  const uint64_t fixed = device.bytes_in_use() - resources.ring_bytes();
  const int height = in.height;
  RunStats stats;
  stats.queues = options.queues;
  int requested_rows = options.strip_rows;
  for (int attempt = 0;; ++attempt) {
    const uint64_t room = budget > fixed ? budget - fixed : 0;
    auto fits = [&](const Layout& L, int slots) {
      return L.indexable() && uint64_t(slots) * L.slot_bytes() <= room &&
             L.work_floats * sizeof(float) <= max_alloc && L.upload_bytes <= max_alloc &&
             L.temp_floats * sizeof(float) <= max_alloc;
    };
    int slots = options.slots;
    // Strip height: the user's, else strips of a few MiB (device memory stays flat as images grow),
    // capped by the budget. GPUs: 4 MiB of pixels as transferred, at least 2 strips (a strip costs
    // ~6 commands of host time; the last strip's transfer and compute overlap nothing). CPUs: 4 MiB
    // of the float planes the kernels work on, at least 4 strips, so that a strip's planes stay in
    // the caches between passes (docs/PERFORMANCE.md has both measurements).
    int rows = requested_rows;
    if (rows == 0) {
      const uint64_t row_bytes = info.is_gpu ? in.row_bytes() : uint64_t(in.width) * in.channels * sizeof(float);
      const uint64_t strip_bytes = uint64_t(4) << 20;
      const int min_strips = info.is_gpu ? 2 : 4;
      const int by_bytes = int(std::max<uint64_t>(1, strip_bytes / row_bytes));
      const int strips = std::max((height + by_bytes - 1) / by_bytes, std::min(min_strips, height));
      const int target = (height + strips - 1) / strips;
      // The largest height <= target that fits (slot bytes grow with it); when not even one row
      // fits with this many slots, fewer slots in flight beat failing.
      int best = 0;
      for (;;) {
        int lo = 1, hi = target;
        while (lo <= hi) {
          const int mid = lo + (hi - lo) / 2;
          if (fits(Layout(chain, in, mid, zero_copy), std::min(slots, (height + mid - 1) / mid))) {
            best = mid;
            lo = mid + 1;
          } else {
            hi = mid - 1;
          }
        }
        if (best > 0 || slots == 1) break;
        --slots;
      }
      rows = std::max(best, 1);
    }
    rows = std::min(rows, height);
    while (!Layout(chain, in, rows, zero_copy).borders_reachable(chain) && rows < height)
      rows = std::min(height, rows * 2);
    Layout layout(chain, in, rows, zero_copy);
    slots = std::min(slots, layout.strips);
    if (!fits(layout, slots)) {
      std::string why = layout.indexable() ? "" : " (a strip buffer passes 2^31 floats)";
      throw Error(ErrorKind::device,
                  "strips of " + std::to_string(rows) + " rows need " +
                      std::to_string(uint64_t(slots) * layout.slot_bytes() >> 20) +
                      " MiB of device memory, over the budget of " + std::to_string(room >> 20) +
                      " MiB" + why +
                      "; raise --max-device-memory, lower --slots, or use a border other than wrap "
                      "(wrap needs the whole image on the device)",
                  CL_MEM_OBJECT_ALLOCATION_FAILURE);
    }
    device.reset_peak();
    stats.strips = layout.strips;
    stats.strip_rows = layout.strip_rows;
    stats.slots = slots;
    stats.device_budget = budget;
    stats.retries = attempt;
    stats.zero_copy = zero_copy;
    bool rows_consumed = false;
    try {
      Run run(device, chain, ends, options, layout, slots, resources);
      try {
        run.execute(stats);
      } catch (...) {
        rows_consumed = run.source_used() && !ends.in;
        throw;
      }
      stats.device_bytes_peak = device.peak_bytes_in_use();
      return stats;
    } catch (const Error& e) {
      resources.clear();  // queues that saw a failure, buffers sized for the failed layout
      // Out of device memory: retry with half the working set, down to one-row strips (unless a
      // source that cannot rewind has handed out rows already).
      if (!e.is_out_of_memory() || (layout.strip_rows == 1 && slots == 1) || rows_consumed) throw;
      budget = fixed + uint64_t(slots) * layout.slot_bytes() / 2;
      requested_rows = 0;
      stats.trace.clear();
    }
  }
}

}  // namespace clf::detail

// Streams rows through a chain of filters in strips. Per strip: the host's rows (from the source,
// a pinned image, or the image in place) -> upload (queue U) -> unpack to float planes, pad and
// filter per stage, pack to native pixels (queue C) -> download (queue D) -> the host's rows (to
// the sink on the landing thread, a pinned image, or in place). Device images are read and
// written where they are. A ring of slots keeps several strips in flight; events order upload ->
// compute -> download per strip, and a slot is reused only after its previous strip has landed.
// Each device is a lane (Run: its queues, ring and chain); the Scheduler gives strip i to lane i
// mod lanes, reading the source and landing strips in order. A chain that wraps vertically reads
// cyclic rows (CyclicRows). The geometry is strip_plan.hpp's; this file is the device side and
// the run loops. docs/ARCHITECTURE.md walks the whole path.
#include "streamer.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>

#include "clf/error.hpp"
#include "embedded.hpp"
#include "strip_plan.hpp"

namespace clf::detail {
namespace {

using Clock = std::chrono::steady_clock;
// Strips the host may enqueue beyond the slot ring when the device orders slot reuse itself.
constexpr int enqueue_ahead = 8;

// How a strip's rows cross between the host and the device, per side.
enum class Transport {
  staged,    // through the slot's pinned staging: the source reads into it, the sink writes from it
  pinned,    // DMA straight from / to a whole image in pinned memory
  in_place,  // CPU devices: kernels read and write the whole images (no transfer)
  resident   // device images: kernels read and write them where they are (no transfer)
};

struct Recorded {
  cl::Event event;
  std::string name;
  int track;        // 0 upload, 1 compute, 2 download
  cl::Event begin;  // a span (Stage::enqueue_span): from this marker's end to event's end
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

// The commands of one strip on the compute queue, as they are enqueued.
struct StripCommands {
  int index = 0;
  Range strip, upload, fresh;
  std::string tag;                // "strip 7 ", for error messages and the trace
  std::vector<cl::Event> ready;   // what the strip's first kernel waits for
  std::vector<cl::Event> events;  // profiled launches, then the strip's last kernel
  std::vector<std::string> names;
  std::vector<cl::Event> span_begins;  // per profiled launch: Stage::enqueue_span's first marker
  Stage stage;                         // the queue and profiling sinks every launch goes through
};

class Run;
struct Landing {  // a strip whose download is enqueued
  int index = 0;
  Run* run = nullptr;  // its lane
  Slot* slot = nullptr;
  cl::Event downloaded;
};

// One lane of a run: a device with its chain, queues and slot ring, which enqueues the strips
// the Scheduler gives it (strip i goes to lane i mod lanes) and lands them.
class Run {
 public:
  Run(const Lane& lane, int lane_index, int lanes, const Endpoints& ends, const RunOptions& options,
      const StripPlan& plan, int slots)
      : device_(*lane.device),
        chain_(lane.chain),
        ends_(ends),
        shape_(ends.shape),
        options_(options),
        plan_(plan),
        slots_(slots),
        lane_(lane_index),
        lanes_(lanes),
        res_(*lane.resources),
        in_(ends.resident()                                  ? Transport::resident
            : plan.in_place()                                ? Transport::in_place
            : ends.in && ends.in->pinned() && !plan.cyclic() ? Transport::pinned
                                                             : Transport::staged),
        out_(ends.resident()                  ? Transport::resident
             : plan.in_place()                ? Transport::in_place
             : ends.out && ends.out->pinned() ? Transport::pinned
                                              : Transport::staged) {}

  // Queues, kernels and slots (kept by the Pipeline between runs of the same shape).
  void prepare();
  // One strip: checks for cancellation, then enqueues it in its slot, timing the host's part.
  Landing issue_strip(int index);
  void land(const Landing& job);  // the host's part of a landed strip (staged: the sink)
  void finish() {
    for (auto& q : queues_) q.finish();
  }
  void add_stats(RunStats& stats, Clock::time_point t0);
  // Rows were taken from the source: a run that fails now cannot be retried from row 0 unless the
  // whole input is in memory.
  bool source_used() const { return source_used_; }
  bool resident() const { return in_ == Transport::resident; }
  // Device images: the run's last command, which whatever uses them next waits for.
  void record_resident(const cl::Event& last) {
    ends_.device_in->record_read(last);
    ends_.device_out->record_write(last);
  }
  // No host work per strip on either side: the device orders slot reuse by itself.
  bool device_ordered() const {
    return (in_ == Transport::pinned || in_ == Transport::resident) &&
           (out_ == Transport::pinned || out_ == Transport::resident);
  }

 private:
  void make_queues();
  void make_slots();
  Slot& slot_of(int index) { return ring_[size_t((index / lanes_) % slots_)]; }
  Slot& previous_slot(int index) { return slot_of(index - lanes_); }
  void enqueue_upload(StripCommands& strip, Slot& slot);
  void enqueue_unpack(StripCommands& strip, Slot& slot);
  void enqueue_stage(int s, StripCommands& strip, Slot& slot);
  void wait_for_stage(int index, int s);
  void enqueue_pack(StripCommands& strip, Slot& slot);
  void enqueue_landing(StripCommands& strip, Slot& slot, cl::Event& downloaded);
  Plane plane(int s, const DeviceBuffer& buffer, Range own) const;  // stage s's input planes
  void collect(RunStats& stats, Clock::time_point t0);

  Device& device_;
  const std::vector<Filter*>& chain_;
  const Endpoints& ends_;
  const ImageShape shape_;
  const RunOptions& options_;
  const StripPlan& plan_;
  const int slots_, lane_, lanes_;
  StreamResources& res_;  // kept by the Pipeline; the names below are views of it
  cl::CommandQueue (&queues_)[3] = res_.queues;
  cl::Kernel &unpack_ = res_.unpack, &pack_ = res_.pack, &pad_rows_ = res_.pad_rows,
             &pad_cols_ = res_.pad_cols;
  int& pack_vector_ = res_.pack_vector;
  std::vector<Slot>& ring_ = res_.ring;

  const Transport in_, out_;
  std::vector<Range> fresh_;  // per strip: the rows it uploads from the host
  bool source_used_ = false;
  bool final_in_place_ = false;            // the last stage writes the output image itself
  cl::Buffer in_place_in_, in_place_out_;  // in place: buffers over the host images, or resident
  size_t in_first_sample_ = 0, out_first_sample_ = 0;  // where the images start in them
  double enqueue_us_ = 0;                              // host time issuing strips

  // profiling
  std::vector<Recorded> recorded_;
  std::vector<HostSpan> host_spans_;
  std::mutex spans_mutex_;
  Clock::time_point first_enqueue_;
  cl::Event first_event_;
};

void Run::make_queues() {
  const int vw = device_.tuning().vector_width;
  const std::string key = std::to_string(options_.queues) +
                          (options_.profile ? " profiled " : " ") + pixel_type_name(shape_.type) +
                          " " + std::to_string(shape_.channels) + " " + std::to_string(vw);
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
  const int pixel = int(shape_.type);  // PixelType is numbered as CLF_PIXEL (clf/contract.h)
  // Single-channel rows convert a vector of pixels per work-item where the device likes vectors;
  // three- and four-channel rows 16 pixels where it likes 16-wide ones.
  const bool wide = (shape_.channels == 3 || shape_.channels == 4) && vw == 16;
  pack_vector_ = (shape_.channels == 1 && vw > 1) || wide ? vw : 1;
  std::string options = "-D CLF_PIXEL=" + std::to_string(pixel);
  if (pack_vector_ > 1)
    options += " -D VW=" + std::to_string(pack_vector_) +
               " -D CLF_CHANNELS=" + std::to_string(shape_.channels);
  cl::Program pack = device_.build("clf_pack", clf_kernel_pack_cl, options, Helpers::border);
  cl::Program pad = device_.build("clf_pad", clf_kernel_pad_cl, "", Helpers::border);
  unpack_ = device_.kernel(pack, pack_vector_ > 1 ? "clf_unpackv" : "clf_unpack");
  pack_ = device_.kernel(pack, pack_vector_ > 1 ? "clf_packv" : "clf_pack");
  pad_rows_ = device_.kernel(pad, "clf_pad_rows");
  pad_cols_ = device_.kernel(pad, "clf_pad_cols");
  res_.queues_key = key;
}

void Run::make_slots() {
  if (in_ == Transport::resident) {
    const DeviceImage &in = *ends_.device_in, &out = *ends_.device_out;
    const size_t sample = pixel_type_size(shape_.type);
    in_place_in_ = in.buffer();
    in_place_out_ = out.buffer();
    in_first_sample_ = in.offset() / sample;
    out_first_sample_ = out.offset() / sample;
  } else if (plan_.in_place()) {
    const Image& in = *ends_.in;
    Image& out = *ends_.out;
    cl_int err = CL_SUCCESS;
    // The kernels only read `in`; OpenCL's host-pointer buffers are not const-typed.
    in_place_in_ = cl::Buffer(device_.context(), CL_MEM_USE_HOST_PTR | CL_MEM_READ_ONLY,
                              in.byte_size(), const_cast<std::byte*>(in.data()), &err);
    cl_check(err, "clCreateBuffer", "input image in place");
    in_place_out_ = cl::Buffer(device_.context(), CL_MEM_USE_HOST_PTR | CL_MEM_WRITE_ONLY,
                               out.byte_size(), out.data(), &err);
    cl_check(err, "clCreateBuffer", "output image in place");
  }
  // f32 single-channel output in place has the layout of a float plane: no pack pass needed.
  final_in_place_ =
      plan_.in_place() && shape_.type == PixelType::f32 && shape_.channels == 1 &&
      out_first_sample_ + size_t(shape_.width) * size_t(shape_.height) <= max_buffer_floats;
  const StripPlan& P = plan_;
  const std::string key = std::to_string(slots_) + " " + std::to_string(P.upload_bytes()) + " " +
                          std::to_string(P.download_bytes()) + " " +
                          std::to_string(P.work_floats()) + " " + std::to_string(P.temp_floats()) +
                          " " + std::to_string(P.max_temps()) + (P.in_place() ? " in place" : "") +
                          (in_ == Transport::pinned ? " pinned in" : "") +
                          (out_ == Transport::pinned ? " pinned out" : "");
  if (res_.ring_key == key) return;
  res_.ring_key.clear();
  ring_.clear();  // free the old ring before the new one is counted against the budget
  ring_.resize(size_t(slots_));
  for (auto& slot : ring_) {
    for (auto& work : slot.work)
      work = device_.alloc(P.work_floats() * sizeof(float), "strip planes");
    for (int t = 0; t < P.max_temps(); ++t)
      slot.temps.push_back(device_.alloc(P.temp_floats() * sizeof(float), "filter temp planes"));
    if (P.in_place()) continue;
    slot.up = device_.alloc(P.upload_bytes(), "upload strip", CL_MEM_READ_ONLY);
    slot.down = device_.alloc(P.download_bytes(), "download strip", CL_MEM_WRITE_ONLY);
    // Pinned host staging, unless the image itself is pinned: DMA runs from/to it while kernels
    // run (pageable memory is several times slower and serialises on a bounce buffer).
    if (in_ == Transport::staged)
      slot.staging_in = device_.pinned(P.upload_bytes(), "pinned upload staging");
    if (out_ == Transport::staged)
      slot.staging_out = device_.pinned(P.download_bytes(), "pinned download staging");
  }
  res_.ring_key = key;
}

Plane Run::plane(int s, const DeviceBuffer& buffer, Range own) const {
  // Planes at the input of stage s (s = stages(): the final planes), origin at image row own.begin.
  const int n = plan_.stages();
  Plane p;
  p.width = plan_.width();
  p.rows = own.size();
  if (s == n && final_in_place_) {  // single-channel float: the output image itself
    p.buffer = in_place_out_;
    p.pitch = plan_.width();
    p.plane_stride = 0;
    p.origin = own.begin * plan_.width() + int(out_first_sample_);
    return p;
  }
  p.buffer = buffer.get();
  p.pitch = plan_.pitch(s);
  p.plane_stride = int(plan_.plane_stride(s));
  const int hx = s < n ? plan_.stage(s).hx : 0, hy = s < n ? plan_.stage(s).hy : 0;
  p.origin = hy * p.pitch + plane_margin(hx);
  return p;
}

void Run::enqueue_upload(StripCommands& strip, Slot& slot) {
  // The rows this strip does not share with the previous one, from the host: read from the source
  // into pinned staging (staged), straight from a pinned image, or not at all (in place).
  const size_t row_bytes = shape_.row_bytes();
  const Range fresh = strip.fresh;
  const size_t offset = row_bytes * size_t(fresh.begin - strip.upload.begin);
  if (slot.downloaded()) strip.ready.push_back(slot.downloaded);  // its download buffer is free
  if (in_ == Transport::resident && strip.index == lane_) {       // what was queued on the images
    for (const auto& e : ends_.device_in->before_read()) strip.ready.push_back(e);
    for (const auto& e : ends_.device_out->before_write()) strip.ready.push_back(e);
  }
  if (in_ == Transport::in_place || in_ == Transport::resident || fresh.size() == 0) return;
  const void* from =
      in_ == Transport::pinned ? ends_.in->row(fresh.begin) : slot.staging_in.data + offset;
  if (in_ == Transport::staged) {
    const auto start = Clock::now();
    ends_.source->discard_before(strip.upload.begin);
    source_used_ = true;
    ends_.source->read(fresh.begin, fresh.end, slot.staging_in.data + offset);
    if (options_.profile) {
      std::lock_guard<std::mutex> lock(spans_mutex_);
      host_spans_.push_back({3, strip.tag + "pack", start, Clock::now()});
    }
  }
  if (strip.index == lane_)
    first_enqueue_ = Clock::now();  // its upload's QUEUED time is this moment
  // The slot's upload buffer is free once its last strip, and the strip after it, have read it.
  std::vector<cl::Event> free_up;
  if (slot.up_free()) free_up.push_back(slot.up_free);
  cl::Event uploaded;
  cl_check(queues_[0].enqueueWriteBuffer(slot.up.get(), CL_FALSE, offset,
                                         row_bytes * size_t(fresh.size()), from,
                                         free_up.empty() ? nullptr : &free_up, &uploaded),
           "clEnqueueWriteBuffer", strip.tag + "upload");
  if (options_.profile) recorded_.push_back({uploaded, strip.tag + "upload", 0});
  if (strip.index == lane_) first_event_ = uploaded;  // device time -> host time (collect)
  strip.ready.push_back(uploaded);
}

void Run::enqueue_unpack(StripCommands& strip, Slot& slot) {
  // Native rows into stage 0's input planes. Rows shared with the previous strip are read from its
  // upload buffer; the launch also fills stage 0's left and right halo columns.
  const int n = plan_.stages();
  // Planes are laid out around the rows their stage computes (the strip when there is no stage).
  const Range own = plan_.stage_input_rows(std::min(1, n), strip.strip), up = strip.upload;
  const int shared_rows = strip.fresh.begin - up.begin;
  const bool in_place = plan_.in_place();
  Plane dst = plane_rows(plane(0, slot.work[0], own), up.begin - own.begin, up.size());
  cl::Kernel& kernel = unpack_;
  const cl::Buffer& rows = in_place ? in_place_in_ : slot.up.get();
  // Rows shared with the previous strip come from its upload buffer; the offset is in samples:
  // row up.begin of that buffer, minus this strip's row 0.
  const cl::Buffer& shared = shared_rows > 0 ? previous_slot(strip.index).up.get() : rows;
  const size_t row_samples = size_t(plan_.width()) * size_t(plan_.channels());
  const cl_ulong shared_offset =
      shared_rows > 0
          ? cl_ulong(size_t(up.begin - plan_.upload_rows(plan_.strip(strip.index - 1)).begin) *
                     row_samples)
          : 0;
  const int hx = n > 0 ? plan_.stage(0).hx : 0;
  const Border border = n > 0 ? plan_.stage(0).border : Border{};
  KernelArgs(kernel) << rows
                     << cl_ulong(in_place ? size_t(up.begin) * row_samples + in_first_sample_ : 0)
                     << plan_.width() << up.size() << plan_.channels() << dst << shared
                     << shared_offset << shared_rows << hx << int(border.mode) << border.value;
  // The compute queue is in order: waiting here orders every kernel of this strip after it.
  cl::Event event;
  const int items = (plan_.width() + pack_vector_ - 1) / pack_vector_ + 2 * hx;
  cl_check(queues_[1].enqueueNDRangeKernel(
               kernel, cl::NullRange, cl::NDRange(size_t(round_up(items, 64)), size_t(up.size())),
               cl::NDRange(64, 1), strip.ready.empty() ? nullptr : &strip.ready,
               options_.profile ? &event : nullptr),
           "clEnqueueNDRangeKernel", "clf_unpack");
  if (strip.index == lane_ && in_place) first_event_ = event;
  if (options_.profile) {
    strip.events.push_back(event);
    strip.names.push_back("clf_unpack");
    strip.span_begins.emplace_back();
  }
}

void Run::enqueue_stage(int s, StripCommands& strip, Slot& slot) {
  // Stage s: its input's halo rows outside the image and (after stage 0) its halo columns filled
  // by the border rule, then the filter, writing into the next stage's input planes.
  const int n = plan_.stages();
  const StageShape& shape = plan_.stage(s);
  const Range own = plan_.stage_input_rows(s + 1, strip.strip);  // the rows this stage computes
  const int width = plan_.width(), height = plan_.height(), hx = shape.hx, hy = shape.hy;
  Plane input = plane(s, slot.work[s % 2], own);
  // Rows outside the image: filled by the border rule, except in cyclic plans (they were computed).
  const bool cyclic = plan_.cyclic();
  const int top = cyclic ? 0 : std::max(0, hy - own.begin),
            bottom = cyclic ? 0 : std::max(0, own.end + hy - height);
  for (auto [row_begin, count] : {std::pair{-hy, top}, std::pair{height - own.begin, bottom}}) {
    if (count == 0) continue;
    KernelArgs(pad_rows_) << input << width << hx << own.begin << height << row_begin
                          << int(shape.border.mode) << shape.border.value;
    strip.stage.launch(
        pad_rows_,
        cl::NDRange(size_t(round_up(width + 2 * hx, 64)), size_t(count), size_t(plan_.channels())),
        cl::NDRange(64, 1, 1), "clf_pad_rows");
  }
  const int inside_begin = cyclic ? -hy : std::max(-hy, -own.begin);
  const int inside_end = cyclic ? own.size() + hy : std::min(own.size() + hy, height - own.begin);
  if (hx > 0 && inside_end > inside_begin && s > 0) {  // stage 0's: the unpack filled them
    KernelArgs(pad_cols_) << input << width << hx << inside_begin << int(shape.border.mode)
                          << shape.border.value;
    strip.stage.launch(
        pad_cols_,
        cl::NDRange(size_t(2 * hx), size_t(inside_end - inside_begin), size_t(plan_.channels())),
        cl::NullRange, "clf_pad_cols");
  }
  const Range next_own = plan_.stage_input_rows(std::min(s + 2, n), strip.strip);
  Stage& stage = strip.stage;
  std::vector<Plane> temps;
  for (int t = 0; t < shape.temps; ++t) {
    Plane temp;
    temp.buffer = slot.temps[size_t(t)].get();
    temp.pitch = plan_.temp_pitch();
    temp.plane_stride = int(size_t(plan_.temp_pitch()) * size_t(plan_.capacity_rows(s)));
    temp.origin = hy * temp.pitch + plan_.temp_margin();
    temp.width = width;
    temp.rows = own.size();
    temps.push_back(temp);
  }
  StageBinder::set_planes(stage, input,
                          plane_rows(plane(s + 1, slot.work[(s + 1) % 2], next_own),
                                     own.begin - next_own.begin, own.size()),
                          std::move(temps), own.begin);
  chain_[size_t(s)]->enqueue(stage);
}

// A cancel between a strip's filters: on CPU devices, where one filter of a long chain can take
// seconds and a wait costs the device nothing, the next filter is enqueued only once this one has
// run, and a cancel set meanwhile ends the run there (the queued work is finished by the
// scheduler). GPUs run a strip's filters back to back: waiting would leave them idle, and a strip
// takes milliseconds, so a cancel is seen at the next strip.
namespace {
// Set by an OpenCL event callback (on the runtime's thread) when the event completes; the waiter
// wakes at once. Shared: a waiter that gives up (cancelled) may go before the callback runs.
struct Completion {
  std::mutex mutex;
  std::condition_variable cv;
  bool done = false;
};
void CL_CALLBACK on_complete(cl_event, cl_int, void* user) {
  auto* completion = static_cast<std::shared_ptr<Completion>*>(user);
  {
    std::lock_guard<std::mutex> lock((*completion)->mutex);
    (*completion)->done = true;
  }
  (*completion)->cv.notify_all();
  delete completion;
}
}  // namespace

void Run::wait_for_stage(int index, int s) {
  if (!options_.cancel || !device_.info().is_cpu) return;
  cl::Event marker;
  cl_check(queues_[1].enqueueMarkerWithWaitList(nullptr, &marker), "clEnqueueMarkerWithWaitList",
           "filter boundary");
  auto completion = std::make_shared<Completion>();
  auto* for_callback = new std::shared_ptr<Completion>(completion);
  const cl_int set = marker.setCallback(CL_COMPLETE, on_complete, for_callback);
  if (set != CL_SUCCESS) delete for_callback;
  cl_check(set, "clSetEventCallback", "filter boundary");
  cl_check(queues_[1].flush(), "clFlush", "filter boundary");
  std::unique_lock<std::mutex> lock(completion->mutex);
  for (bool done = false; !done;) {
    done = completion->cv.wait_for(lock, std::chrono::milliseconds(5),
                                   [&] { return completion->done; });
    if (options_.cancel->load())
      throw Error(ErrorKind::cancelled, "interrupted in strip " + std::to_string(index + 1) +
                                            " of " + std::to_string(plan_.strips()) +
                                            ", after filter " + std::to_string(s + 1) + " of " +
                                            std::to_string(plan_.stages()));
  }
}

void Run::enqueue_pack(StripCommands& strip, Slot& slot) {
  // The final planes into native pixels (unless they are the output image already); the strip's
  // last kernel, whose event orders the download. Unprofiled, with a filter's kernel last: a
  // marker.
  const int n = plan_.stages();
  const bool in_place = plan_.in_place();
  if (!final_in_place_) {
    Plane src = plane(n, slot.work[n % 2], strip.strip);
    const cl::Buffer& rows = in_place ? in_place_out_ : slot.down.get();
    const size_t first_sample = size_t(strip.strip.begin) * plan_.width() * plan_.channels();
    KernelArgs(pack_) << src << rows << cl_ulong(in_place ? first_sample + out_first_sample_ : 0)
                      << plan_.width() << strip.strip.size() << plan_.channels();
    const int items = (plan_.width() + pack_vector_ - 1) / pack_vector_;
    cl::Event packed;
    cl_check(queues_[1].enqueueNDRangeKernel(
                 pack_, cl::NullRange,
                 cl::NDRange(size_t(round_up(items, 64)), size_t(strip.strip.size())),
                 cl::NDRange(64, 1), nullptr, &packed),
             "clEnqueueNDRangeKernel", "clf_pack");
    strip.events.push_back(packed);
    if (options_.profile) strip.names.push_back("clf_pack");
  }
  if (strip.events.empty()) {
    cl::Event marker;
    cl_check(queues_[1].enqueueMarkerWithWaitList(nullptr, &marker), "clEnqueueMarkerWithWaitList",
             strip.tag + "computed");
    strip.events.push_back(marker);
  }
  slot.up_free = strip.events.back();
  if (strip.fresh.begin > strip.upload.begin)  // the previous strip's upload buffer was read too
    previous_slot(strip.index).up_free = strip.events.back();
  if (options_.profile)
    for (size_t e = 0; e < strip.events.size(); ++e)
      recorded_.push_back({strip.events[e], strip.tag + strip.names[e], 1,
                           e < strip.span_begins.size() ? strip.span_begins[e] : cl::Event()});
}

void Run::enqueue_landing(StripCommands& strip, Slot& slot, cl::Event& downloaded) {
  // Where the finished rows go: downloaded to pinned staging or a pinned image; in place, only a
  // map (OpenCL's way of saying the host may read them; a no-op on CPU devices).
  const std::vector<cl::Event> computed{strip.events.back()};
  const size_t row_bytes = shape_.row_bytes(), bytes = row_bytes * size_t(strip.strip.size());
  if (out_ == Transport::resident) {  // the rows are where they are wanted
    downloaded = computed.front();
    cl_check(queues_[1].flush(), "clFlush", "compute");
    return;
  }
  if (out_ == Transport::in_place) {
    cl_int err = CL_SUCCESS;
    void* mapped = queues_[1].enqueueMapBuffer(in_place_out_, CL_FALSE, CL_MAP_READ,
                                               row_bytes * size_t(strip.strip.begin), bytes,
                                               &computed, &downloaded, &err);
    cl_check(err, "clEnqueueMapBuffer", strip.tag + "output rows");
    cl_check(queues_[1].enqueueUnmapMemObject(in_place_out_, mapped, nullptr, nullptr),
             "clEnqueueUnmapMemObject", strip.tag + "output rows");
    cl_check(queues_[1].flush(), "clFlush", "compute");
    return;
  }
  void* to = out_ == Transport::pinned ? static_cast<void*>(ends_.out->row(strip.strip.begin))
                                       : slot.staging_out.data;
  cl_check(
      queues_[2].enqueueReadBuffer(slot.down.get(), CL_FALSE, 0, bytes, to, &computed, &downloaded),
      "clEnqueueReadBuffer", strip.tag + "download");
  if (options_.profile) recorded_.push_back({downloaded, strip.tag + "download", 2});
  slot.downloaded = downloaded;
  for (int q = 0; q < 3; ++q) cl_check(queues_[q].flush(), "clFlush", track_names[q]);
}

Landing Run::issue_strip(int index) {
  if (options_.cancel && options_.cancel->load())
    throw Error(ErrorKind::cancelled, "interrupted after " + std::to_string(index) + " of " +
                                          std::to_string(plan_.strips()) + " strips");
  Landing job{index, this, &slot_of(index), cl::Event()};
  const auto start = Clock::now();
  if (index == lane_) first_enqueue_ = start;
  StripCommands strip;
  strip.index = index;
  strip.strip = plan_.strip(index);
  strip.upload = plan_.upload_rows(strip.strip);
  strip.fresh = fresh_[size_t(index)];
  strip.tag = (lanes_ > 1 ? "device " + std::to_string(lane_) + " " : "") + "strip " +
              std::to_string(index) + " ";
  // Profiling keeps every launch's event; otherwise only the strip's last kernel's (the pack, else
  // a marker) orders the download: an event per launch is host work per command for the driver.
  StageBinder::bind(
      strip.stage, device_, queues_[1], ends_.shape, options_.profile ? &strip.events : nullptr,
      options_.profile ? &strip.names : nullptr, options_.profile ? &strip.span_begins : nullptr);
  enqueue_upload(strip, *job.slot);
  enqueue_unpack(strip, *job.slot);
  for (int s = 0; s < plan_.stages(); ++s) {
    enqueue_stage(s, strip, *job.slot);
    if (s + 1 < plan_.stages()) wait_for_stage(index, s);
  }
  enqueue_pack(strip, *job.slot);
  enqueue_landing(strip, *job.slot, job.downloaded);
  enqueue_us_ += std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return job;
}

void Run::land(const Landing& job) {
  cl_check(job.downloaded.wait(), "clWaitForEvents",
           "strip " + std::to_string(job.index) + " download");
  if (out_ != Transport::staged) return;
  const auto start = Clock::now();
  const Range strip = plan_.strip(job.index);
  ends_.sink->write(strip.begin, strip.end, job.slot->staging_out.data);
  if (options_.profile) {
    std::lock_guard<std::mutex> lock(spans_mutex_);
    host_spans_.push_back(
        {4, "strip " + std::to_string(job.index) + " unpack", start, Clock::now()});
  }
}

void Run::prepare() {
  make_queues();
  make_slots();
  for (Slot& slot : ring_) slot.up_free = slot.downloaded = cl::Event();
  // Rows two strips share are read on the device from the previous strip's upload buffer, which
  // is on this device only when there is one lane.
  fresh_ = plan_.fresh_rows(lanes_ == 1 ? slots_ : 1, options_.device_halo_copy_bytes);
}

void Run::add_stats(RunStats& stats, Clock::time_point t0) {
  stats.host_enqueue_ms += enqueue_us_ / 1000.0;
  for (int i = lane_; i < plan_.strips() && in_ != Transport::resident; i += lanes_)
    stats.bytes_uploaded += shape_.row_bytes() * size_t(fresh_[size_t(i)].size());
  if (options_.profile) collect(stats, t0);
}

void Run::collect(RunStats& stats, Clock::time_point t0) {
  // Device timestamps -> the host clock: the lane's first upload was queued when the host enqueued
  // it.
  if (!first_event_()) return;  // no strip
  cl_ulong queued = 0;
  first_event_.getProfilingInfo(CL_PROFILING_COMMAND_QUEUED, &queued);
  const double offset_us = std::chrono::duration<double, std::micro>(first_enqueue_ - t0).count() -
                           double(queued) / 1000.0;
  std::vector<std::pair<double, double>> spans[3];
  for (auto& r : recorded_) {
    cl_ulong start = 0, end = 0;
    const cl::Event& first = r.begin() ? r.begin : r.event;
    if (first.getProfilingInfo(r.begin() ? CL_PROFILING_COMMAND_END : CL_PROFILING_COMMAND_START,
                               &start) != CL_SUCCESS ||
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
  // Several lanes: the busiest device's queues.
  stats.upload_busy_ms = std::max(stats.upload_busy_ms, busy_ms(spans[0]));
  stats.compute_busy_ms = std::max(stats.compute_busy_ms, busy_ms(spans[1]));
  stats.download_busy_ms = std::max(stats.download_busy_ms, busy_ms(spans[2]));
  stats.profiled = true;
}

// Issues strips in order over the lanes (strip i on lane i mod lanes) and lands them in order:
// the source is read and the sink written by one thread each, in row order, whatever the lanes.
class Scheduler {
 public:
  Scheduler(const std::vector<std::unique_ptr<Run>>& lanes, const RunOptions& options, int strips,
            int slots)
      : lanes_(lanes), options_(options), strips_(strips), window_(slots * int(lanes.size())) {}
  void run();

 private:
  Run& lane(int index) { return *lanes_[size_t(index) % lanes_.size()]; }
  void run_queued_only();
  void run_ordered_by_device();
  void run_with_landing_thread();
  void landing_thread();
  void finish_all() {
    for (auto& run : lanes_) run->finish();
  }

  const std::vector<std::unique_ptr<Run>>& lanes_;
  const RunOptions& options_;
  const int strips_, window_;  // window_: strips in flight, slots of every lane
  // the landing thread (staged output): strips to land, how many have
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<Landing> landing_;
  int landed_ = 0;
  bool closing_ = false;
  std::exception_ptr landing_error_;
};

void Scheduler::run() {
  if (lanes_.size() == 1 && lanes_.front()->resident()) return run_queued_only();
  bool device_ordered = true;
  for (auto& run : lanes_) device_ordered = device_ordered && run->device_ordered();
  if (device_ordered)
    run_ordered_by_device();
  else
    run_with_landing_thread();
}

void Scheduler::run_ordered_by_device() {
  // Pinned images both ways: the device orders slot reuse by events, and this thread alone enqueues
  // up to enqueue_ahead strips past the ring, landing the oldest as it goes: no host wake-up sits
  // between strips, and Ctrl-C still stops within a few strips.
  std::deque<Landing> pending;
  auto land_oldest = [&] {
    pending.front().run->land(pending.front());
    pending.pop_front();
    if (options_.progress) options_.progress(++landed_, strips_);
  };
  std::exception_ptr error;
  try {
    for (int i = 0; i < strips_; ++i) {
      while (!pending.empty() && pending.front().index < i - window_ - enqueue_ahead) land_oldest();
      pending.push_back(lane(i).issue_strip(i));
    }
    while (!pending.empty()) land_oldest();
  } catch (...) {
    error = std::current_exception();
  }
  finish_all();
  if (error) std::rethrow_exception(error);
}

void Scheduler::run_queued_only() {
  // Device images: every strip queued and none waited for (progress counts queued strips); the
  // images record the last command, for what uses them next. Profiling waits, to read timings.
  Landing last;
  try {
    for (int i = 0; i < strips_; ++i) {
      last = lane(i).issue_strip(i);
      if (options_.progress) options_.progress(i + 1, strips_);
    }
  } catch (...) {
    finish_all();
    throw;
  }
  lanes_.front()->record_resident(last.downloaded);
  if (options_.profile) finish_all();
}

void Scheduler::landing_thread() {
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
      job.run->land(job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++landed_;
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    landing_error_ = std::current_exception();
    closing_ = true;
    cv_.notify_all();
  }
}

void Scheduler::run_with_landing_thread() {
  // Staged output (the sink writes on the landing thread) or in place (the host maps rows): a slot
  // is free for the host once the strip that used it last has landed. This thread reads the source,
  // enqueues, and reports progress (on the caller's thread, whatever the images) while it waits:
  // for a free slot, then for the last strips.
  std::thread lander([this] { landing_thread(); });
  int reported = 0;
  auto wait_landed = [&](int count) {
    for (;;) {
      int landed;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return landed_ > reported || landed_ >= count || landing_error_; });
        if (landing_error_) return false;
        landed = landed_;
      }
      if (options_.progress && landed > reported) options_.progress(landed, strips_);
      reported = landed;
      if (landed >= count) return true;
    }
  };
  std::exception_ptr error;
  try {
    for (int i = 0; i <= strips_; ++i) {
      if (!wait_landed(i < strips_ ? i - window_ + 1 : strips_) || i == strips_) break;
      Landing job = lane(i).issue_strip(i);
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
  lander.join();
  finish_all();
  if (error) std::rethrow_exception(error);
  if (landing_error_) std::rethrow_exception(landing_error_);
}

// The rows of a cyclic plan (strip_plan.hpp): row r is row r mod height of `source`. The first and
// last `halo` rows are kept, the last read through a second reader of the source before the first
// strip; every other row comes from `source`, in order.
class CyclicRows final : public RowSource {
 public:
  CyclicRows(RowSource& source, std::unique_ptr<RowSource> second, int halo)
      : source_(source),
        second_(std::move(second)),
        halo_(halo),
        row_bytes_(source.shape().row_bytes()) {}
  ImageShape shape() const override { return source_.shape(); }
  void discard_before(int row) override {
    source_.discard_before(std::clamp(row, 0, shape().height));
  }
  void read(int begin, int end, std::byte* rows) override {
    const int height = shape().height;
    if (begin < -halo_ || end > height + halo_)
      throw Error(ErrorKind::usage, "cyclic rows " + std::to_string(begin) + " to " +
                                        std::to_string(end) + " reach past the halo of " +
                                        std::to_string(halo_));
    if (second_) load_ends();
    auto copy = [&](int from, int to, const std::byte* kept) {
      if (to > from)
        std::copy(kept, kept + size_t(to - from) * row_bytes_,
                  rows + size_t(from - begin) * row_bytes_);
    };
    copy(begin, std::min(end, 0), last_.data() + size_t(std::max(0, begin + halo_)) * row_bytes_);
    const int a = std::max(begin, 0), b = std::min(end, height);
    if (b > a) source_.read(a, b, rows + size_t(a - begin) * row_bytes_);
    const int c = std::max(begin, height);
    copy(c, end, first_.data() + size_t(std::max(0, c - height)) * row_bytes_);
  }

 private:
  void load_ends() {
    const int height = shape().height;
    last_.resize(size_t(halo_) * row_bytes_);
    second_->discard_before(height - halo_);
    second_->read(height - halo_, height, last_.data());
    second_.reset();  // its file closed, its rows freed
    first_.resize(size_t(halo_) * row_bytes_);
    source_.read(0, halo_, first_.data());
  }
  RowSource& source_;
  std::unique_ptr<RowSource> second_;
  const int halo_;
  const size_t row_bytes_;
  std::vector<std::byte> first_, last_;
};

uint64_t default_budget(const DeviceInfo& info) {
  // Leave room for other users of the device and for the driver's own allocations.
  return info.global_mem_bytes / 2;
}

void check_options(const RunOptions& options) {
  if (options.slots < 1 || options.slots > 64)
    throw Error(ErrorKind::usage,
                "slots must be in [1, 64] (got " + std::to_string(options.slots) + ")");
  if (options.queues != 1 && options.queues != 3)
    throw Error(ErrorKind::usage,
                "queues must be 1 or 3 (got " + std::to_string(options.queues) + ")");
  if (options.strip_rows < 0)
    throw Error(ErrorKind::usage,
                "strip rows must be >= 0 (got " + std::to_string(options.strip_rows) + ")");
}

// "1.5 MiB", "640 KiB", "12 bytes": a size a reader takes in at a glance, never rounded to 0.
std::string readable_bytes(uint64_t bytes) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char text[32];
  std::snprintf(text, sizeof text, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return text;
}

// True when some stage with a vertical halo wraps: without a cyclic plan, its strip is the image.
bool mixes_wrap(const std::vector<StageShape>& stages) {
  for (const StageShape& s : stages)
    if (s.hy > 0 && s.border.mode == BorderMode::wrap) return true;
  return false;
}

// Names RunOptions' fields, not a program's flags: the library is called from C++ and Python too.
Error over_budget(const StripPlan& plan, int slots, uint64_t budget, uint64_t room,
                  bool mixed_wrap) {
  const std::string why = plan.indexable() ? "" : " (a strip buffer passes 2^31 floats)";
  const std::string left = room == budget ? "" : ", " + readable_bytes(room) + " of it left";
  return Error(ErrorKind::device,
               std::to_string(slots) + " strips of " + std::to_string(plan.strip_rows()) +
                   " rows need " + readable_bytes(uint64_t(slots) * plan.slot_bytes()) +
                   " of device memory, over the budget of " + readable_bytes(budget) + left + why +
                   "; raise the budget (max_device_memory) or lower the strips in flight (slots)" +
                   (mixed_wrap ? "; a chain mixing wrap with other vertical borders needs the "
                                 "whole image on the device"
                               : ""),
               CL_MEM_OBJECT_ALLOCATION_FAILURE);
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

namespace {
// Device memory a lane may use for this run: its budget less what is allocated outside the ring.
struct Room {
  uint64_t budget = 0, fixed = 0;
  uint64_t left() const { return budget > fixed ? budget - fixed : 0; }
};
}  // namespace

// One attempt at a plan: every lane's Run set up, the strips scheduled over them, the stats
// gathered. On failure, `rows_consumed` says whether rows were taken from a source that cannot
// rewind (so the attempt cannot be retried).
void run_plan(const std::vector<Lane>& lanes, const Endpoints& ends, const RunOptions& options,
              const StripPlan& plan, int slots, RunStats& stats, bool& rows_consumed) {
  std::vector<std::unique_ptr<Run>> runs;
  for (size_t l = 0; l < lanes.size(); ++l)
    runs.push_back(
        std::make_unique<Run>(lanes[l], int(l), int(lanes.size()), ends, options, plan, slots));
  try {
    for (auto& run : runs) run->prepare();
    const auto t0 = Clock::now();
    Scheduler(runs, options, plan.strips(), slots).run();
    stats.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    stats.host_enqueue_ms = 0;
    stats.bytes_uploaded = 0;
    stats.bytes_downloaded =
        ends.resident() ? 0 : ends.shape.row_bytes() * size_t(ends.shape.height);
    for (auto& run : runs) run->add_stats(stats, t0);
  } catch (...) {
    for (auto& run : runs) rows_consumed = rows_consumed || (run->source_used() && !ends.in);
    throw;
  }
  stats.device_bytes_peak = 0;
  for (const Lane& lane : lanes)
    stats.device_bytes_peak = std::max(stats.device_bytes_peak, lane.device->peak_bytes_in_use());
}

RunStats stream(const std::vector<Lane>& lanes, const Endpoints& ends, const RunOptions& options) {
  check_options(options);
  if (lanes.empty()) throw Error(ErrorKind::usage, "a run needs at least one device");
  const DeviceInfo& info = lanes[0].device->info();
  const std::vector<StageShape> stages = stage_shapes(lanes[0].chain);
  // In place only where the images fit one buffer each (the driver refuses larger host-pointer
  // buffers with CL_INVALID_BUFFER_SIZE); larger images stream in strips like on a GPU.
  uint64_t max_alloc = lanes[0].device->max_alloc_bytes();
  std::vector<Room> rooms;
  for (const Lane& lane : lanes) {
    max_alloc = std::min(max_alloc, lane.device->max_alloc_bytes());
    // Filter weights and the like, already allocated (a ring kept from the last run is this run's).
    uint64_t ahead = 0;  // what the filters will allocate for this width
    for (const auto& filter : lane.chain) ahead += filter->device_bytes_ahead(ends.shape.width);
    rooms.push_back({options.max_device_memory ? options.max_device_memory
                                               : default_budget(lane.device->info()),
                     lane.device->bytes_in_use() - lane.resources->ring_bytes() + ahead});
  }
  // A chain whose vertical borders all wrap streams cyclically where the source has a second
  // reader (otherwise its one strip is the whole image); in place would be one strip.
  const int wrap_halo = cyclic_halo(stages, ends.shape.height);
  std::unique_ptr<RowSource> second =
      wrap_halo > 0 && ends.source ? ends.source->second_reader() : nullptr;
  const bool cyclic = second != nullptr;
  if (ends.resident() && (lanes.size() != 1 || !ends.device_out))
    throw Error(ErrorKind::usage, "device images run on one device, from one to another");
  const bool in_place =
      ends.resident() || (options.zero_copy && info.is_cpu && ends.in && ends.out && !cyclic &&
                          lanes.size() == 1 && ends.in->byte_size() <= max_alloc);
  std::unique_ptr<CyclicRows> cyclic_rows;
  Endpoints run_ends = ends;
  if (cyclic) {
    cyclic_rows = std::make_unique<CyclicRows>(*ends.source, std::move(second), wrap_halo);
    run_ends.source = cyclic_rows.get();
  }
  RunStats stats;
  stats.queues = options.queues;
  stats.devices = int(lanes.size());
  int requested_rows = options.strip_rows;
  for (int attempt = 0;; ++attempt) {
    auto fits = [&](const StripPlan& P, int slots) {
      for (const Room& room : rooms)
        if (uint64_t(slots) * P.slot_bytes() > room.left()) return false;
      return P.indexable() && P.work_floats() * sizeof(float) <= max_alloc &&
             P.upload_bytes() <= max_alloc && P.temp_floats() * sizeof(float) <= max_alloc;
    };
    const StripChoice choice = choose_strips(stages, ends.shape, in_place, cyclic, info.is_gpu,
                                             requested_rows, options.slots, fits);
    const StripPlan plan(stages, ends.shape, choice.rows, in_place, cyclic);
    const Room tightest =
        *std::min_element(rooms.begin(), rooms.end(),
                          [](const Room& a, const Room& b) { return a.left() < b.left(); });
    if (!fits(plan, choice.slots))
      throw over_budget(plan, choice.slots, tightest.budget, tightest.left(),
                        !cyclic && mixes_wrap(stages));
    for (const Lane& lane : lanes) lane.device->reset_peak();
    stats.strips = plan.strips();
    stats.strip_rows = plan.strip_rows();
    stats.slots = choice.slots;
    stats.device_budget = tightest.budget;
    stats.retries = attempt;
    stats.zero_copy = in_place;
    bool rows_consumed = false;
    try {
      run_plan(lanes, run_ends, options, plan, choice.slots, stats, rows_consumed);
      return stats;
    } catch (const Error& e) {
      for (const Lane& lane : lanes) {
        lane.resources->clear();  // queues that saw a failure, buffers sized for it
        if (e.is_out_of_memory()) lane.device->release_recycled();
      }
      // Out of device memory: retry with half the working set, down to one-row strips (unless a
      // source that cannot rewind has handed out rows already).
      if (!e.is_out_of_memory() || (plan.strip_rows() == 1 && choice.slots == 1) || rows_consumed)
        throw;
      for (Room& room : rooms)
        room.budget = room.fixed + uint64_t(choice.slots) * plan.slot_bytes() / 2;
      requested_rows = 0;
      stats.trace.clear();
    }
  }
}

}  // namespace clf::detail

// The compute side of a strip (strip_encoder.hpp).
#include "stream/strip_encoder.hpp"

#include <algorithm>
#include <condition_variable>
#include <limits>
#include <mutex>

#include "clf/error.hpp"
#include "util.hpp"

namespace clf::detail {

// The encoder's access to the Stage it hands each filter.
struct StageBinder {
  static void bind(Stage& stage, Device& device, const cl::CommandQueue& queue,
                   const StripPlan& plan, PixelType type, Trace& trace) {
    stage.device_ = &device;
    stage.queue_ = &queue;
    stage.channels_ = plan.channels();
    stage.image_rows_ = plan.height();
    stage.pixel_type_ = type;
    stage.trace_ = &trace;
  }
  static void set_planes(Stage& stage, const Plane& input, const Plane& output,
                         std::vector<Plane> temps, int first_row, PixelType input_type) {
    stage.first_row_ = first_row;
    stage.pixel_type_ = input_type;
    stage.input_ = input;
    stage.output_ = output;
    stage.temps_ = std::move(temps);
  }
};

StripEncoder::StripEncoder(Device& device, const std::vector<Filter*>& chain, const StripPlan& plan,
                           StreamResources& resources, Trace& trace, const RunOptions& options,
                           const DeviceRows* final_image)
    : device_(device),
      chain_(chain),
      plan_(plan),
      conversions_(resources.conversions),
      queue_(resources.queues[compute_queue]),
      trace_(trace),
      options_(options),
      final_image_(final_image) {
  StageBinder::bind(stage_, device, queue_, plan, plan.image().type, trace);
}

cl::Event StripEncoder::encode(const StripCommands& strip, Slot& slot, const Slot& previous,
                               const DeviceRows& in, const DeviceRows& out) {
  if (options_.poison) poison(slot);
  unpack(strip, slot, previous, in);
  for (int s = 0; s < plan_.stages(); ++s) {
    stage(s, strip, slot);
    if (s + 1 < plan_.stages()) wait_for_stage(strip.index, s);
  }
  return pack(strip, slot, out);
}

Plane StripEncoder::plane(int s, const DeviceBuffer& buffer, Range own) const {
  // Planes at the input of stage s (s = stages(): the final planes), origin at image row own.begin.
  const int n = plan_.stages();
  Plane p;
  p.width = plan_.width();
  p.rows = own.size();
  if (s == n && final_image_) {  // single-channel float: the output image itself
    p.buffer = final_image_->buffer;
    p.pitch = plan_.width();
    p.plane_stride = 0;
    p.origin = own.begin * plan_.width() + int(final_image_->first_sample);
    return p;
  }
  p.buffer = buffer.get();
  p.pitch = plan_.pitch(s);
  p.plane_stride = int(plan_.plane_stride(s));
  const int hx = s < n ? plan_.stage(s).hx : 0, hy = s < n ? plan_.stage(s).hy : 0;
  p.origin = hy * p.pitch + plane_margin(hx);
  return p;
}

void StripEncoder::poison(const Slot& slot) {
  std::vector<const DeviceBuffer*> planes{&slot.work[0], &slot.work[1]};
  for (const DeviceBuffer& temp : slot.temps) planes.push_back(&temp);
  for (const DeviceBuffer* buffer : planes)
    if (*buffer)
      cl_check(queue_.enqueueFillBuffer(buffer->get(), std::numeric_limits<float>::quiet_NaN(), 0,
                                        buffer->bytes() / sizeof(float) * sizeof(float)),
               "clEnqueueFillBuffer", "poisoned planes");
}

void StripEncoder::unpack(const StripCommands& strip, Slot& slot, const Slot& previous,
                          const DeviceRows& in) {
  // Native rows into stage 0's input planes. Rows shared with the previous strip are read from its
  // upload buffer; the launch also fills stage 0's left and right halo columns.
  const int n = plan_.stages();
  // Planes are laid out around the rows their stage computes (the strip when there is no stage).
  const Range own = plan_.stage_input_rows(std::min(1, n), strip.strip), up = strip.upload;
  const int shared_rows = strip.fresh.begin - up.begin;
  Plane dst = plane_rows(plane(0, slot.work[0], own), up.begin - own.begin, up.size());
  // The offset of shared rows is in samples: row up.begin of the previous upload buffer.
  const cl::Buffer& shared = shared_rows > 0 ? previous.up.get() : in.buffer;
  const cl_ulong shared_offset =
      shared_rows > 0
          ? cl_ulong(size_t(up.begin - plan_.upload_rows(plan_.strip(strip.index - 1)).begin) *
                     size_t(plan_.width()) * size_t(plan_.channels()))
          : 0;
  const int hx = n > 0 ? plan_.stage(0).hx : 0;
  const Border border = n > 0 ? plan_.stage(0).border : Border{};
  cl::Kernel& kernel = conversions_.unpack;
  KernelArgs(kernel) << in.buffer << in.first_sample << plan_.width() << up.size()
                     << plan_.channels() << dst << shared << shared_offset << shared_rows << hx
                     << int(border.mode) << border.value;
  // The compute queue is in order: waiting here orders every kernel of this strip after it.
  cl::Event event;
  const int items = (plan_.width() + conversions_.pack_vector - 1) / conversions_.pack_vector;
  cl_check(
      queue_.enqueueNDRangeKernel(kernel, cl::NullRange,
                                  cl::NDRange(size_t(round_up(items + 2 * hx, 64)),
                                              conversions_.items_y(size_t(up.size()))),
                                  cl::NDRange(64, 1), strip.ready.empty() ? nullptr : &strip.ready,
                                  trace_.event(event)),
      "clEnqueueNDRangeKernel", "clf_unpack");
  trace_.command(Track::compute, "clf_unpack", event, strip.ready.size());
}

void StripEncoder::pad(int s, const Plane& input, Range own) {
  // Stage s's input rows outside the image filled by the border rule (except in cyclic plans:
  // they were computed), then, after stage 0 (the unpack filled its), its halo columns.
  const StageShape& shape = plan_.stage(s);
  const int width = plan_.width(), height = plan_.height(), hx = shape.hx, hy = shape.hy;
  const bool cyclic = plan_.cyclic();
  const int top = cyclic ? 0 : std::max(0, hy - own.begin),
            bottom = cyclic ? 0 : std::max(0, own.end + hy - height);
  cl::Kernel &pad_rows = conversions_.pad_rows, &pad_cols = conversions_.pad_cols;
  for (auto [row_begin, count] : {std::pair{-hy, top}, std::pair{height - own.begin, bottom}}) {
    if (count == 0) continue;
    KernelArgs(pad_rows) << input << width << hx << own.begin << height << row_begin
                         << int(shape.border.mode) << shape.border.value;
    stage_.launch(
        pad_rows,
        cl::NDRange(size_t(round_up(width + 2 * hx, 64)), size_t(count), size_t(plan_.channels())),
        cl::NDRange(64, 1, 1), "clf_pad_rows");
  }
  const int inside_begin = cyclic ? -hy : std::max(-hy, -own.begin);
  const int inside_end = cyclic ? own.size() + hy : std::min(own.size() + hy, height - own.begin);
  if (hx > 0 && inside_end > inside_begin && s > 0) {
    KernelArgs(pad_cols) << input << width << hx << inside_begin << inside_end
                         << int(shape.border.mode) << shape.border.value;
    stage_.launch_items(
        pad_cols,
        cl::NDRange(size_t(2 * hx), size_t(inside_end - inside_begin), size_t(plan_.channels())),
        "clf_pad_cols");
  }
}

void StripEncoder::stage(int s, const StripCommands& strip, Slot& slot) {
  // Stage s: its input padded, then the filter, writing into the next stage's input planes.
  const int n = plan_.stages();
  const StageShape& shape = plan_.stage(s);
  const Range own = plan_.stage_input_rows(s + 1, strip.strip);  // the rows this stage computes
  const Plane input = plane(s, slot.work[s % 2], own);
  pad(s, input, own);
  const Range next_own = plan_.stage_input_rows(std::min(s + 2, n), strip.strip);
  std::vector<Plane> temps;
  for (int t = 0; t < shape.temps; ++t) {
    Plane temp;
    temp.buffer = slot.temps[size_t(t)].get();
    temp.pitch = plan_.temp_pitch();
    temp.plane_stride = int(size_t(plan_.temp_pitch()) * size_t(plan_.capacity_rows(s)));
    temp.origin = shape.hy * temp.pitch + plan_.temp_margin();
    temp.width = plan_.width();
    temp.rows = own.size();
    temps.push_back(temp);
  }
  StageBinder::set_planes(stage_, input,
                          plane_rows(plane(s + 1, slot.work[(s + 1) % 2], next_own),
                                     own.begin - next_own.begin, own.size()),
                          std::move(temps), own.begin,
                          // Past the first filter the values are its float results, unrounded.
                          s == 0 ? plan_.image().type : PixelType::f32);
  chain_[size_t(s)]->enqueue(stage_);
}

cl::Event StripEncoder::pack(const StripCommands& strip, Slot& slot, const DeviceRows& out) {
  // The final planes into native rows; when they are the output image already, a marker stands
  // for the strip's last command, profiled or not.
  cl::Event computed;
  if (final_image_) {
    cl_check(queue_.enqueueMarkerWithWaitList(nullptr, &computed), "clEnqueueMarkerWithWaitList",
             trace_.strip_tag() + "computed");
    trace_.command(Track::compute, "computed", computed);
    return computed;
  }
  const int n = plan_.stages();
  const Plane src = plane(n, slot.work[n % 2], strip.strip);
  cl::Kernel& kernel = conversions_.pack;
  KernelArgs(kernel) << src << out.buffer << out.first_sample << plan_.width() << strip.strip.size()
                     << plan_.channels();
  const int items = (plan_.width() + conversions_.pack_vector - 1) / conversions_.pack_vector;
  cl_check(
      queue_.enqueueNDRangeKernel(kernel, cl::NullRange,
                                  cl::NDRange(size_t(round_up(items, 64)),
                                              conversions_.items_y(size_t(strip.strip.size()))),
                                  cl::NDRange(64, 1), nullptr, &computed),
      "clEnqueueNDRangeKernel", "clf_pack");
  trace_.command(Track::compute, "clf_pack", computed);
  return computed;
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

void StripEncoder::wait_for_stage(int index, int s) {
  if (!options_.cancel || !device_.info().is_cpu) return;
  cl::Event marker;
  cl_check(queue_.enqueueMarkerWithWaitList(nullptr, &marker), "clEnqueueMarkerWithWaitList",
           "filter boundary");
  trace_.command(Track::compute, "filter boundary", marker);
  auto completion = std::make_shared<Completion>();
  auto* for_callback = new std::shared_ptr<Completion>(completion);
  const cl_int set = marker.setCallback(CL_COMPLETE, on_complete, for_callback);
  if (set != CL_SUCCESS) delete for_callback;
  cl_check(set, "clSetEventCallback", "filter boundary");
  cl_check(queue_.flush(), "clFlush", "filter boundary");
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

}  // namespace clf::detail

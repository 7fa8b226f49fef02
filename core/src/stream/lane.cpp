// One lane of a run (lane.hpp).
#include "stream/lane.hpp"

#include "clf/device_image.hpp"
#include "clf/error.hpp"

namespace clf::detail {

LaneRun::LaneRun(const Lane& lane, int lane_index, int lanes, const Endpoints& ends,
                 const RunOptions& options, const StripPlan& plan, int slots)
    : device_(*lane.device),
      chain_(lane.chain),
      ends_(ends),
      options_(options),
      plan_(plan),
      slots_(slots),
      lane_(lane_index),
      lanes_(lanes),
      res_(*lane.resources),
      trace_(make_trace(options.profile)),
      transport_context_{device_, res_.queues, ends, plan, *trace_} {}

void LaneRun::prepare() {
  const ImageShape& shape = ends_.shape;
  res_.prepare_queues(device_, {options_.queues, options_.profile, shape.type, shape.channels,
                                device_.tuning().vector_width,
                                int(device_.knob_number("stream.conversion_rows", 1))});
  upload_ = make_upload(transport_context_);
  download_ = make_download(transport_context_);
  res_.prepare_ring(device_, plan_,
                    RingKey::of(plan_, slots_, upload_->staged(), download_->staged()));
  for (Slot& slot : ring_) slot.up_free = slot.downloaded = cl::Event();
  // Single-channel float output on the device has the layout of a float plane: the last stage
  // writes it, with no pack.
  const DeviceRows* image = download_->image();
  const bool final_image =
      image && shape.type == PixelType::f32 && shape.channels == 1 &&
      image->first_sample + uint64_t(shape.width) * uint64_t(shape.height) <= max_buffer_floats;
  encoder_ = std::make_unique<StripEncoder>(device_, chain_, plan_, res_, *trace_, options_,
                                            final_image ? image : nullptr);
  // Rows two strips share are read on the device from the previous strip's upload buffer, which
  // is on this device only when there is one lane.
  fresh_ = plan_.fresh_rows(lanes_ == 1 ? slots_ : 1, options_.device_halo_copy_bytes);
}

std::string LaneRun::strip_tag(int index) const {
  return (lanes_ > 1 ? "device " + std::to_string(lane_) + " " : "") + "strip " +
         std::to_string(index) + " ";
}

Landing LaneRun::issue_strip(int index) {
  if (options_.cancel && options_.cancel->load())
    throw Error(ErrorKind::cancelled, "interrupted after " + std::to_string(index) + " of " +
                                          std::to_string(plan_.strips()) + " strips");
  const auto start = Clock::now();
  Slot& slot = slot_of(index);
  Slot& previous = index < lanes_ ? slot : slot_of(index - lanes_);  // the lane's strip before
  StripCommands strip;
  strip.index = index;
  strip.first = index == lane_;
  strip.strip = plan_.strip(index);
  strip.upload = plan_.upload_rows(strip.strip);
  strip.fresh = fresh_[size_t(index)];
  trace_->begin_strip(strip_tag(index));
  if (slot.downloaded()) strip.ready.push_back(slot.downloaded);  // its download buffer is free
  upload_->enqueue(strip, slot);
  const cl::Event computed = encoder_->encode(strip, slot, previous, upload_->rows(strip, slot),
                                              download_->rows(strip, slot));
  // The slot's upload buffer is free once this strip has run, and so is the previous strip's
  // when this one read rows from it.
  slot.up_free = computed;
  if (strip.fresh.begin > strip.upload.begin) previous.up_free = computed;
  Landing job{index, this, &slot, download_->enqueue(strip, slot, computed)};
  enqueue_us_ += std::chrono::duration<double, std::micro>(Clock::now() - start).count();
  return job;
}

void LaneRun::land(const Landing& job) {
  cl_check(job.downloaded.wait(), "clWaitForEvents",
           "strip " + std::to_string(job.index) + " download");
  download_->land(job.index, *job.slot);
}

void LaneRun::finish() {
  for (auto& q : res_.queues) q.finish();
}

void LaneRun::record_resident(const cl::Event& last) {
  ends_.device_in->record_read(last);
  ends_.device_out->record_write(last);
}

void LaneRun::add_stats(RunStats& stats, Clock::time_point t0) {
  stats.host_enqueue_ms += enqueue_us_ / 1000.0;
  for (int i = lane_; i < plan_.strips() && !resident(); i += lanes_)
    stats.bytes_uploaded += ends_.shape.row_bytes() * size_t(fresh_[size_t(i)].size());
  trace_->collect(stats, t0);
}

}  // namespace clf::detail

// The transports (transport.hpp), upload side then download side.
#include "stream/transport.hpp"

#include "clf/device_image.hpp"
#include "clf/error.hpp"

namespace clf::detail {
namespace {

size_t row_samples(const StripPlan& plan) { return size_t(plan.width()) * size_t(plan.channels()); }

// ---- upload side

// Staged and pinned: the fresh rows are written into the slot's upload buffer, once the strips
// that read it before (its last strip, and the strip after that one) have.
class CopiedUpload : public Upload {
 public:
  explicit CopiedUpload(const TransportContext& c) : c_(c) {}
  void enqueue(StripCommands& strip, Slot& slot) override {
    const Range fresh = strip.fresh;
    if (fresh.size() == 0) return;
    const size_t row_bytes = c_.ends.shape.row_bytes();
    const size_t offset = row_bytes * size_t(fresh.begin - strip.upload.begin);
    const void* from = host_rows(strip, slot, offset);
    std::vector<cl::Event> free_up;
    if (slot.up_free()) free_up.push_back(slot.up_free);
    cl::Event uploaded;
    cl_check(c_.queues[upload_queue].enqueueWriteBuffer(
                 slot.up.get(), CL_FALSE, offset, row_bytes * size_t(fresh.size()), from,
                 free_up.empty() ? nullptr : &free_up, c_.trace.event(uploaded, true)),
             "clEnqueueWriteBuffer", c_.trace.strip_tag() + "upload");
    c_.trace.command(Track::upload, "upload", uploaded, free_up.size());
    strip.ready.push_back(uploaded);
  }
  DeviceRows rows(const StripCommands&, const Slot& slot) const override {
    return {slot.up.get(), 0};
  }

 protected:
  // The host rows of strip.fresh, which land at `offset` in the upload buffer.
  virtual const void* host_rows(const StripCommands& strip, Slot& slot, size_t offset) = 0;
  const TransportContext& c_;
};

class StagedUpload final : public CopiedUpload {
 public:
  using CopiedUpload::CopiedUpload;
  bool staged() const override { return true; }
  bool device_ordered() const override { return false; }
  bool source_used() const override { return used_; }

 private:
  const void* host_rows(const StripCommands& strip, Slot& slot, size_t offset) override {
    const auto start = Clock::now();
    RowSource& source = *c_.ends.source;
    source.discard_before(strip.upload.begin);
    used_ = true;
    source.read(strip.fresh.begin, strip.fresh.end, slot.staging_in.data + offset);
    c_.trace.host_span(Track::host_read, c_.trace.strip_tag() + "read", start);
    return slot.staging_in.data + offset;
  }
  bool used_ = false;
};

class PinnedUpload final : public CopiedUpload {
 public:
  using CopiedUpload::CopiedUpload;

 private:
  const void* host_rows(const StripCommands& strip, Slot&, size_t) override {
    return c_.ends.in->row(strip.fresh.begin);
  }
};

// In place and resident: the unpack reads the image where it is.
class ImageUpload final : public Upload {
 public:
  ImageUpload(const TransportContext& c, cl::Buffer image, size_t first_sample)
      : c_(c), image_(std::move(image)), first_sample_(first_sample) {}
  void enqueue(StripCommands& strip, Slot&) override {
    const DeviceImage* in = c_.ends.device_in;
    if (!in || !strip.first) return;
    // What was queued on the device images before this run.
    for (const auto& e : in->before_read()) strip.ready.push_back(e);
    for (const auto& e : c_.ends.device_out->before_write()) strip.ready.push_back(e);
  }
  DeviceRows rows(const StripCommands& strip, const Slot&) const override {
    return {image_, cl_ulong(size_t(strip.upload.begin) * row_samples(c_.plan) + first_sample_)};
  }

 private:
  const TransportContext& c_;
  const cl::Buffer image_;
  const size_t first_sample_;
};

// A buffer over a host image, for a CPU device to read or write in place.
cl::Buffer host_image_buffer(Device& device, const Image& image, cl_mem_flags access,
                             const char* what) {
  cl_int err = CL_SUCCESS;
  // The kernels only read an input; OpenCL's host-pointer buffers are not const-typed.
  cl::Buffer buffer(device.context(), CL_MEM_USE_HOST_PTR | access, image.byte_size(),
                    const_cast<std::byte*>(image.data()), &err);
  cl_check(err, "clCreateBuffer", what);
  return buffer;
}

// ---- download side

// Staged and pinned: the pack writes the slot's download buffer, read back to the host.
class CopiedDownload : public Download {
 public:
  explicit CopiedDownload(const TransportContext& c) : c_(c) {}
  DeviceRows rows(const StripCommands&, const Slot& slot) const override {
    return {slot.down.get(), 0};
  }
  cl::Event enqueue(const StripCommands& strip, Slot& slot, const cl::Event& computed) override {
    const std::vector<cl::Event> after{computed};
    const size_t bytes = c_.ends.shape.row_bytes() * size_t(strip.strip.size());
    cl::Event downloaded;
    cl_check(c_.queues[download_queue].enqueueReadBuffer(slot.down.get(), CL_FALSE, 0, bytes,
                                                         host_rows(strip, slot), &after,
                                                         c_.trace.event(downloaded, true)),
             "clEnqueueReadBuffer", c_.trace.strip_tag() + "download");
    c_.trace.command(Track::download, "download", downloaded, after.size());
    slot.downloaded = downloaded;  // the next strip in the slot writes the buffer after this
    for (int q = 0; q < 3; ++q) cl_check(c_.queues[q].flush(), "clFlush", track_name(Track(q)));
    return downloaded;
  }

 protected:
  virtual void* host_rows(const StripCommands& strip, const Slot& slot) const = 0;
  const TransportContext& c_;
};

class StagedDownload final : public CopiedDownload {
 public:
  using CopiedDownload::CopiedDownload;
  void land(int index, const Slot& slot) override {
    const auto start = Clock::now();
    const Range strip = c_.plan.strip(index);
    c_.ends.sink->write(strip.begin, strip.end, slot.staging_out.data);
    c_.trace.host_span(Track::host_write, "strip " + std::to_string(index) + " write", start);
  }
  bool staged() const override { return true; }
  bool device_ordered() const override { return false; }

 private:
  void* host_rows(const StripCommands&, const Slot& slot) const override {
    return slot.staging_out.data;
  }
};

class PinnedDownload final : public CopiedDownload {
 public:
  using CopiedDownload::CopiedDownload;

 private:
  void* host_rows(const StripCommands& strip, const Slot&) const override {
    return c_.ends.out->row(strip.strip.begin);
  }
};

// In place and resident: the pack (or the last filter) writes the output image where it is.
class ImageDownload : public Download {
 public:
  ImageDownload(const TransportContext& c, cl::Buffer image, size_t first_sample)
      : c_(c), image_{std::move(image), cl_ulong(first_sample)} {}
  DeviceRows rows(const StripCommands& strip, const Slot&) const override {
    return {image_.buffer,
            cl_ulong(size_t(strip.strip.begin) * row_samples(c_.plan)) + image_.first_sample};
  }
  const DeviceRows* image() const override { return &image_; }

 protected:
  const TransportContext& c_;
  const DeviceRows image_;
};

// Resident: the rows are where they are wanted; what uses the image next waits for `computed`.
class ResidentDownload final : public ImageDownload {
 public:
  using ImageDownload::ImageDownload;
  cl::Event enqueue(const StripCommands&, Slot&, const cl::Event& computed) override {
    cl_check(c_.queues[compute_queue].flush(), "clFlush", "compute");
    return computed;
  }
};

// In place on a CPU device: a map of the rows is OpenCL's way of saying the host may read them (a
// no-op there); the landing thread waits for it.
class InPlaceDownload final : public ImageDownload {
 public:
  using ImageDownload::ImageDownload;
  bool device_ordered() const override { return false; }
  cl::Event enqueue(const StripCommands& strip, Slot&, const cl::Event& computed) override {
    const std::vector<cl::Event> after{computed};
    const size_t row_bytes = c_.ends.shape.row_bytes();
    const cl::CommandQueue& queue = c_.queues[compute_queue];
    const std::string what = c_.trace.strip_tag() + "output rows";
    cl_int err = CL_SUCCESS;
    cl::Event mapped_event;
    void* mapped = queue.enqueueMapBuffer(
        image_.buffer, CL_FALSE, CL_MAP_READ, row_bytes * size_t(strip.strip.begin),
        row_bytes * size_t(strip.strip.size()), &after, c_.trace.event(mapped_event, true), &err);
    cl_check(err, "clEnqueueMapBuffer", what);
    c_.trace.command(Track::compute, "map", mapped_event, after.size());
    cl_check(queue.enqueueUnmapMemObject(image_.buffer, mapped, nullptr, nullptr),
             "clEnqueueUnmapMemObject", what);
    cl_check(queue.flush(), "clFlush", "compute");
    return mapped_event;
  }
};

}  // namespace

std::unique_ptr<Upload> make_upload(const TransportContext& c) {
  const Endpoints& ends = c.ends;
  if (const DeviceImage* in = ends.device_in)
    return std::make_unique<ImageUpload>(c, in->buffer(),
                                         in->offset() / pixel_type_size(ends.shape.type));
  if (c.plan.in_place())
    return std::make_unique<ImageUpload>(
        c, host_image_buffer(c.device, *ends.in, CL_MEM_READ_ONLY, "input image in place"), 0);
  if (ends.in && ends.in->pinned() && !c.plan.cyclic()) return std::make_unique<PinnedUpload>(c);
  return std::make_unique<StagedUpload>(c);
}

std::unique_ptr<Download> make_download(const TransportContext& c) {
  const Endpoints& ends = c.ends;
  if (DeviceImage* out = ends.device_out)
    return std::make_unique<ResidentDownload>(c, out->buffer(),
                                              out->offset() / pixel_type_size(ends.shape.type));
  if (c.plan.in_place())
    return std::make_unique<InPlaceDownload>(
        c, host_image_buffer(c.device, *ends.out, CL_MEM_WRITE_ONLY, "output image in place"), 0);
  if (ends.out && ends.out->pinned()) return std::make_unique<PinnedDownload>(c);
  return std::make_unique<StagedDownload>(c);
}

}  // namespace clf::detail

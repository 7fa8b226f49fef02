// DeviceImage: an image in one device's memory, read and written in place by Pipeline::run.
#include "clf/device_image.hpp"

#include <algorithm>
#include <mutex>

#include "clf/error.hpp"

namespace clf {

// The buffer: one the device allocated (counted against its budget), or one made elsewhere; and
// the commands queued on it: its last write, and the reads queued since. An owned buffer goes
// back to its device when the last image over it does, with those commands (Device::recycle).
struct DeviceImage::Storage {
  std::shared_ptr<Device> device;
  DeviceBuffer owned;
  cl::Buffer adopted;
  std::mutex mutex;
  cl::Event written;
  std::vector<cl::Event> readers;
  const cl::Buffer& get() const { return owned ? owned.get() : adopted; }
  ~Storage() {
    if (!owned) return;
    if (written()) readers.push_back(written);
    device->recycle(std::move(owned), std::move(readers));
  }
};

namespace {
void check_device(const std::shared_ptr<Device>& device) {
  if (!device) throw Error(ErrorKind::usage, "DeviceImage: no device");
}
}  // namespace

DeviceImage::DeviceImage(std::shared_ptr<Device> device, int width, int height, int channels,
                         PixelType type)
    : device_(std::move(device)), width_(width), height_(height), channels_(channels), type_(type) {
  check_device(device_);
  const uint64_t bytes =
      checked_image_bytes(width, height, channels, pixel_type_size(type), "device image");
  storage_ = std::make_shared<Storage>();
  storage_->device = device_;
  // A buffer of an image gone, if one has this size: its commands still queued are waited for
  // as reads (before the first write).
  storage_->owned = device_->reuse(bytes, storage_->readers);
  if (storage_->owned) return;
  try {
    storage_->owned = device_->alloc(bytes, "device image");
  } catch (const Error& e) {
    if (!e.is_out_of_memory()) throw;
    device_->release_recycled();  // the kept buffers may be what the device lacks
    storage_->owned = device_->alloc(bytes, "device image");
  }
}

DeviceImage DeviceImage::over(std::shared_ptr<Device> device, cl_mem buffer, size_t offset,
                              int width, int height, int channels, PixelType type) {
  check_device(device);
  if (!buffer) throw Error(ErrorKind::usage, "DeviceImage::over: a null buffer");
  const uint64_t bytes =
      checked_image_bytes(width, height, channels, pixel_type_size(type), "device image");
  const cl::Buffer adopted(buffer, true);
  cl_context context = nullptr;
  size_t size = 0;
  cl_check(clGetMemObjectInfo(buffer, CL_MEM_CONTEXT, sizeof context, &context, nullptr),
           "clGetMemObjectInfo", "CL_MEM_CONTEXT");
  cl_check(clGetMemObjectInfo(buffer, CL_MEM_SIZE, sizeof size, &size, nullptr),
           "clGetMemObjectInfo", "CL_MEM_SIZE");
  if (context != device->context()())
    throw Error(ErrorKind::usage,
                "DeviceImage::over: the buffer belongs to another OpenCL context than " +
                    device->info().label() + "'s (adopt that context: Device::adopt)");
  if (offset % pixel_type_size(type) != 0)
    throw Error(ErrorKind::usage, "DeviceImage::over: an offset of " + std::to_string(offset) +
                                      " bytes is not a multiple of " + pixel_type_name(type) +
                                      "'s size");
  if (offset > size || size - offset < bytes)
    throw Error(ErrorKind::usage, "DeviceImage::over: the buffer holds " + std::to_string(size) +
                                      " bytes; the image needs " + std::to_string(bytes) +
                                      " from offset " + std::to_string(offset));
  DeviceImage image;
  image.device_ = std::move(device);
  image.storage_ = std::make_shared<Storage>();
  image.storage_->device = image.device_;
  image.storage_->adopted = adopted;
  image.offset_ = offset;
  image.width_ = width;
  image.height_ = height;
  image.channels_ = channels;
  image.type_ = type;
  return image;
}

namespace {
void check_same_shape(const DeviceImage& device, const Image& host, const char* call) {
  if (device.empty()) throw Error(ErrorKind::usage, std::string(call) + ": an empty DeviceImage");
  if (host.width() != device.width() || host.height() != device.height() ||
      host.channels() != device.channels() || host.type() != device.type())
    throw Error(ErrorKind::usage,
                std::string(call) + ": the host image is " + std::to_string(host.width()) + "x" +
                    std::to_string(host.height()) + "x" + std::to_string(host.channels()) + " " +
                    pixel_type_name(host.type()) + ", the device image " +
                    std::to_string(device.width()) + "x" + std::to_string(device.height()) + "x" +
                    std::to_string(device.channels()) + " " + pixel_type_name(device.type()));
}
}  // namespace

void DeviceImage::write(const Image& from) {
  check_same_shape(*this, from, "DeviceImage::write");
  std::vector<cl::Event> after = before_write();
  cl::Event done;
  cl_check(
      device_->host_queue().enqueueWriteBuffer(buffer(), CL_TRUE, offset_, byte_size(), from.data(),
                                               after.empty() ? nullptr : &after, &done),
      "clEnqueueWriteBuffer", "device image");
  record_write(done);
}

void DeviceImage::read(Image& to) const {
  check_same_shape(*this, to, "DeviceImage::read");
  std::vector<cl::Event> after = before_read();
  cl_check(device_->host_queue().enqueueReadBuffer(buffer(), CL_TRUE, offset_, byte_size(),
                                                   to.data(), after.empty() ? nullptr : &after),
           "clEnqueueReadBuffer", "device image");
}

void DeviceImage::wait() const {
  std::vector<cl::Event> pending = before_write();
  if (!pending.empty())
    cl_check(cl::Event::waitForEvents(pending), "clWaitForEvents", "commands on a device image");
}

std::vector<cl::Event> DeviceImage::before_read() const {
  buffer();  // an empty image is refused
  std::lock_guard<std::mutex> lock(storage_->mutex);
  if (!storage_->written()) return {};
  return {storage_->written};
}

std::vector<cl::Event> DeviceImage::before_write() const {
  buffer();
  std::lock_guard<std::mutex> lock(storage_->mutex);
  std::vector<cl::Event> after = storage_->readers;
  if (storage_->written()) after.push_back(storage_->written);
  return after;
}

void DeviceImage::record_read(const cl::Event& done) const {
  buffer();
  std::lock_guard<std::mutex> lock(storage_->mutex);
  // Reads already complete need no waiting for: the list stays as long as the reads in flight.
  auto& r = storage_->readers;
  r.erase(std::remove_if(r.begin(), r.end(),
                         [](const cl::Event& e) {
                           cl_int status = CL_QUEUED;
                           return e.getInfo(CL_EVENT_COMMAND_EXECUTION_STATUS, &status) ==
                                      CL_SUCCESS &&
                                  status == CL_COMPLETE;
                         }),
          r.end());
  r.push_back(done);
}

void DeviceImage::record_write(const cl::Event& done) const {
  buffer();
  std::lock_guard<std::mutex> lock(storage_->mutex);
  storage_->written = done;
  storage_->readers.clear();  // the write waited for them
}

Image DeviceImage::read() const {
  if (empty()) throw Error(ErrorKind::usage, "DeviceImage::read: an empty DeviceImage");
  Image to(width_, height_, channels_, type_);
  read(to);
  return to;
}

Device& DeviceImage::device() const {
  if (!device_) throw Error(ErrorKind::usage, "an empty DeviceImage has no device");
  return *device_;
}

const cl::Buffer& DeviceImage::buffer() const {
  if (!storage_) throw Error(ErrorKind::usage, "an empty DeviceImage has no buffer");
  return storage_->get();
}

bool DeviceImage::overlaps(const DeviceImage& other) const {
  if (empty() || other.empty() || buffer()() != other.buffer()()) return false;
  return offset_ < other.offset_ + other.byte_size() && other.offset_ < offset_ + byte_size();
}

}  // namespace clf

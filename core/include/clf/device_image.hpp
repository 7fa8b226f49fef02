// clf::DeviceImage: an image that stays in one device's memory between runs (no host round trip).
#pragma once
#include <cstddef>
#include <memory>

#include "clf/cl.hpp"
#include "clf/device.hpp"
#include "clf/image.hpp"

namespace clf {

// Rows of interleaved channels in a device buffer, as clf::Image holds them on the host. A
// Pipeline run from one DeviceImage to another reads and writes the buffers in place: nothing
// crosses the bus, and the run returns once its commands are queued. Each image keeps the events
// of the commands that write and read it, and whatever uses it next waits for them on the device:
// a later run, write() and read() (which return when done), or wait(). Copies share the buffer
// and its events (a handle, like cl::Buffer); the Device lives as long as an image on it does.
class DeviceImage {
 public:
  DeviceImage() = default;
  // Device memory for the image, counted against the device's budget; contents undefined. Throws
  // Error(usage) for bad sizes, Error(device) when the device has no room.
  DeviceImage(std::shared_ptr<Device> device, int width, int height, int channels, PixelType type);
  // An image in a buffer made by someone else (pyopencl, an embedding tool) in `device`'s context,
  // starting `offset` bytes in (a multiple of the pixel type's size). The buffer is retained, and
  // its bytes are not counted against the budget. Throws Error(usage) when the buffer belongs to
  // another context or is too small for the image.
  static DeviceImage over(std::shared_ptr<Device> device, cl_mem buffer, size_t offset, int width,
                          int height, int channels, PixelType type);

  // Blocking copies between the whole image and host memory of the same shape and type, after
  // the commands queued on the image.
  void write(const Image& from);
  void read(Image& to) const;
  Image read() const;
  // Returns once every command queued on the image (writing or reading it) has run; throws
  // Error(device) naming the OpenCL error when one failed.
  void wait() const;

  // For the streamer (and any code that queues its own commands on the buffer): what a command
  // must wait for before it reads the image (its last write) or writes it (its last write and
  // the reads since), and how to record a command that did.
  std::vector<cl::Event> before_read() const;
  std::vector<cl::Event> before_write() const;
  void record_read(const cl::Event& done) const;
  void record_write(const cl::Event& done) const;

  Device& device() const;
  const std::shared_ptr<Device>& device_ptr() const { return device_; }
  const cl::Buffer& buffer() const;
  size_t offset() const { return offset_; }  // bytes
  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  PixelType type() const { return type_; }
  bool empty() const { return !storage_; }
  size_t row_bytes() const { return size_t(width_) * size_t(channels_) * pixel_type_size(type_); }
  size_t byte_size() const { return row_bytes() * size_t(height_); }
  // True when both are views of the same bytes (the same buffer, overlapping ranges).
  bool overlaps(const DeviceImage& other) const;

 private:
  struct Storage;
  std::shared_ptr<Device> device_;
  std::shared_ptr<Storage> storage_;
  size_t offset_ = 0;
  int width_ = 0, height_ = 0, channels_ = 0;
  PixelType type_ = PixelType::f32;
};

}  // namespace clf

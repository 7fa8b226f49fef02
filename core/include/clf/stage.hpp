// What a filter sees per strip: float planes on the device (Plane) and the Stage it enqueues its
// kernels on. The streamer sets a Stage up; a filter only reads it.
#pragma once
#include <string>
#include <vector>

#include "clf/cl.hpp"
#include "clf/contract.h"
#include "clf/device.hpp"
#include "clf/image.hpp"

namespace clf {

namespace detail {
struct StageBinder;  // the streamer's access to a Stage
class Trace;         // what the streamer records of the commands (core/src/stream/trace.hpp)
}  // namespace detail

struct Halo {
  int x = 0, y = 0;  // pixels needed on each side
};

// Float planes on the device, one per channel: pixel (x, y) of channel c is at
// buffer[origin + c * plane_stride + y * pitch + x]. Halo pixels sit at negative or past-the-end
// coordinates, inside the same allocation.
struct Plane {
  cl::Buffer buffer;
  int origin = 0, pitch = 0, plane_stride = 0;
  int width = 0, rows = 0;
  // Binds the plane to a kernel's next four arguments, which must be declared
  //   __global float* plane, int origin, int pitch, int plane_stride
  // (CLF_PLANE(name) in kernels/stage.clh), from `first`; returns the index after them.
  cl_uint set_args(cl::Kernel& kernel, cl_uint first) const;
};
// Binds a kernel's arguments in order: a Plane takes the four CLF_PLANE(name) declares in the
// kernel (kernels/stage.clh), any other value one, typed as given (pass int, float, cl_ulong...).
//   clf::KernelArgs(kernel) << stage.input() << stage.output() << stage.width() << amount;
class KernelArgs {
 public:
  explicit KernelArgs(cl::Kernel& kernel, cl_uint first = 0) : kernel_(kernel), next_(first) {}
  KernelArgs& operator<<(const Plane& plane);
  template <typename T>
  KernelArgs& operator<<(const T& value) {
    kernel_.setArg(next_++, value);
    return *this;
  }
  // A by-value argument of n bytes (a struct the kernel declares).
  KernelArgs& bytes(const void* data, size_t n) {
    kernel_.setArg(next_++, n, data);
    return *this;
  }
  cl_uint next() const { return next_; }

 private:
  cl::Kernel& kernel_;
  cl_uint next_;
};

// The same plane seen from another first row, with `rows` rows.
Plane plane_rows(const Plane& plane, int first_row, int rows);
// Columns a stage input keeps left of column 0 (and right of its last) for a halo of halo_x:
// clf/contract.h's CLF_HALO4, the float4 margin rule the kernels rely on.
inline int plane_margin(int halo_x) { return CLF_HALO4(halo_x); }

class Stage {
 public:
  Device& device() const { return *device_; }
  const cl::CommandQueue& queue() const { return *queue_; }
  int channels() const { return channels_; }
  int width() const { return output_.width; }
  int rows() const { return output_.rows; }
  // The image row of output row 0 (strips start anywhere): for filters whose result at a pixel
  // depends on where it lies in the image (a grid anchored at row 0), so that a strip gives the
  // rows the whole image gives.
  int first_row() const { return first_row_; }
  // The image's height: rows first_row() + r outside [0, image_rows()) are outside the image (a
  // filter that applies the border rule between steps of its own needs it: morphology's open).
  int image_rows() const { return image_rows_; }
  // The type of the values in input() (the planes are float whatever it is): a filter may take a
  // path of its own for integer data, a 256-bin histogram for u8, say. For the first filter of a
  // chain, the image's sample type, its values not scaled (0..255 for u8, 0..65535 for u16); for
  // the others f32, since their input is the filter before's float result, not rounded.
  PixelType pixel_type() const { return pixel_type_; }
  // Input is valid on [-halo.x, width + halo.x) x [-halo.y, rows + halo.y), borders already
  // filled; its margin is plane_margin(halo.x) columns. Never the same memory as output().
  const Plane& input() const { return input_; }
  // Float planes, width x rows, written by the filter; may be read back within the stage.
  const Plane& output() const { return output_; }
  // Scratch planes (Filter::temp_planes() of them): width x rows with the filter's halo around
  // them, as input() has: writable on [-halo.x, width + halo.x) x [-halo.y, rows + halo.y).
  const Plane& temp(int index) const;
  // Enqueues `kernel` on the stage's queue; errors name the kernel ("... from
  // clEnqueueNDRangeKernel(sobel_magnitude)"). Give a local size (or use launch_items): with
  // cl::NullRange the driver picks one that divides the global size, so every new image size is
  // a new group shape (PoCL compiles the kernel again for each) and a size with a large prime
  // factor runs in groups of a few work-items.
  void launch(const cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
              const char* name) const;
  // Enqueues `kernel` over `items` work-items (x, y, z) in groups of items_group(), the global
  // size rounded up to whole groups: the kernel returns for ids at or past `items`.
  // private_bytes: what a work-item keeps in private arrays (see items_group).
  void launch_items(const cl::Kernel& kernel, const cl::NDRange& items, const char* name,
                    size_t private_bytes = 0) const;
  // The group launch_items takes, one shape whatever the image's size: 32 x 8 work-items on
  // GPUs, 16 x 4 on CPUs, fewer where the device or the kernel allows at most `most`. On CPUs, at
  // most 1 MiB of private arrays a group: PoCL keeps every work-item's on its thread's stack.
  cl::NDRange items_group(size_t dimensions, size_t private_bytes = 0, size_t most = 256) const;
  // Runs `work`, which enqueues on the stage's queue by itself (a library such as VkFFT launching
  // its own kernels): profiled as one span named `name`, between two markers.
  template <typename Work>
  void enqueue_span(const char* name, Work&& work) const {
    cl::Event begin = mark(name);
    work(queue_->get());
    end_span(begin, name);
  }

 private:
  friend struct detail::StageBinder;
  Device* device_ = nullptr;
  const cl::CommandQueue* queue_ = nullptr;
  int channels_ = 0;
  int first_row_ = 0;
  int image_rows_ = 0;
  PixelType pixel_type_ = PixelType::f32;
  Plane input_, output_;
  std::vector<Plane> temps_;
  detail::Trace* trace_ = nullptr;         // every launch is noted there
  cl::Event mark(const char* name) const;  // a marker, with its event when profiling
  void end_span(const cl::Event& begin, const char* name) const;
};

}  // namespace clf

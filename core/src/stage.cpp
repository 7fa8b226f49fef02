// Plane and Stage: what a filter's enqueue() works with.
#include "clf/stage.hpp"

#include <algorithm>

#include "clf/error.hpp"
#include "stream/trace.hpp"
#include "util.hpp"

namespace clf {

cl_uint Plane::set_args(cl::Kernel& kernel, cl_uint first) const {
  kernel.setArg(first++, buffer);
  kernel.setArg(first++, origin);
  kernel.setArg(first++, pitch);
  kernel.setArg(first++, plane_stride);
  return first;
}

KernelArgs& KernelArgs::operator<<(const Plane& plane) {
  next_ = plane.set_args(kernel_, next_);
  return *this;
}

Plane plane_rows(const Plane& plane, int first_row, int rows) {
  Plane view = plane;
  view.origin += first_row * plane.pitch;
  view.rows = rows;
  return view;
}

const Plane& Stage::temp(int index) const {
  if (index < 0 || size_t(index) >= temps_.size())
    throw Error(ErrorKind::usage, "filter asked for temp plane " + std::to_string(index) +
                                      " but declared " + std::to_string(temps_.size()) +
                                      " in temp_planes()");
  return temps_[size_t(index)];
}

void Stage::launch(const cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
                   const char* name) const {
  cl::Event event;
  cl_check(queue_->enqueueNDRangeKernel(kernel, cl::NullRange, global, local, nullptr,
                                        trace_->event(event)),
           "clEnqueueNDRangeKernel", name);
  trace_->command(detail::Track::compute, name, event);
}

cl::NDRange Stage::items_group(size_t dimensions, size_t private_bytes, size_t most) const {
  const DeviceInfo& info = device_->info();
  most = std::clamp<size_t>(std::min(most, info.max_work_group_size), 1, info.is_gpu ? 256 : 64);
  if (!info.is_gpu && private_bytes > 0) {
    const size_t fit = std::max<size_t>(1, (size_t(1) << 20) / private_bytes);
    while (most > fit) most /= 2;
  }
  if (dimensions == 1) return cl::NDRange(most);
  const size_t x = std::min(info.is_gpu ? size_t(32) : size_t(16), most);
  return dimensions == 2 ? cl::NDRange(x, most / x) : cl::NDRange(x, most / x, 1);
}

void Stage::launch_items(const cl::Kernel& kernel, const cl::NDRange& items, const char* name,
                         size_t private_bytes) const {
  const size_t dims = items.dimensions();
  // A kernel may take fewer work-items a group than the device (registers, on some GPUs).
  size_t most = 0;
  cl_check(kernel.getWorkGroupInfo(device_->device(), CL_KERNEL_WORK_GROUP_SIZE, &most),
           "clGetKernelWorkGroupInfo", name);
  const cl::NDRange local = items_group(dims, private_bytes, most);
  auto up = [&](size_t d) { return detail::round_up(items[d], local[d]); };
  const cl::NDRange global = dims == 1   ? cl::NDRange(up(0))
                             : dims == 2 ? cl::NDRange(up(0), up(1))
                                         : cl::NDRange(up(0), up(1), items[2]);
  launch(kernel, global, local, name);
}

// Both markers are enqueued whether the run is profiled or not: profiling changes no command.
cl::Event Stage::mark(const char* name) const {
  cl::Event marker;
  cl_check(queue_->enqueueMarkerWithWaitList(nullptr, trace_->event(marker)),
           "clEnqueueMarkerWithWaitList", name);
  return marker;
}

void Stage::end_span(const cl::Event& begin, const char* name) const {
  const cl::Event end = mark(name);
  trace_->command(detail::Track::compute, name, end, 0, begin);
}

}  // namespace clf

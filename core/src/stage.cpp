// Plane and Stage: what a filter's enqueue() works with.
#include "clf/stage.hpp"

#include "clf/error.hpp"
#include "stream/trace.hpp"

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

// Pipeline: the chain of configured filters; Stage and Plane: what a filter's enqueue() works with.
#include "clf/pipeline.hpp"

#include <cstdint>

#include "clf/error.hpp"
#include "clf/registry.hpp"
#include "host_copy.hpp"
#include "streamer.hpp"

namespace clf {

cl_uint Plane::set_args(cl::Kernel& kernel, cl_uint first) const {
  kernel.setArg(first++, buffer);
  kernel.setArg(first++, origin);
  kernel.setArg(first++, pitch);
  kernel.setArg(first++, plane_stride);
  return first;
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
                                        events_ ? &event : nullptr),
           "clEnqueueNDRangeKernel", name);
  if (events_) {
    events_->push_back(event);
    event_names_->push_back(name);
  }
}

struct Pipeline::Link {
  std::shared_ptr<const FilterFactory> factory;  // keeps the plugin library loaded
  std::unique_ptr<Filter> filter;
};

Pipeline::Pipeline(std::shared_ptr<Device> device)
    : device_(std::move(device)),
      resources_(std::make_unique<detail::StreamResources>()),
      mutex_(std::make_unique<std::mutex>()) {
  if (!device_) throw Error(ErrorKind::usage, "Pipeline needs a device");
}
Pipeline::~Pipeline() {
  resources_.reset();  // its buffers count against the device, which may outlive us
  // Filters before factories: a filter's code lives in the plugin its factory keeps loaded.
  for (auto& link : links_) link.filter.reset();
}
Pipeline::Pipeline(Pipeline&&) noexcept = default;

void Pipeline::add(std::shared_ptr<const FilterFactory> factory,
                   const std::map<std::string, std::string>& params) {
  if (!factory) throw Error(ErrorKind::usage, "Pipeline::add: no filter factory");
  Params valid = validate_params(factory->name(), factory->params(), params);
  auto filter = factory->create(valid, *device_);
  if (!filter) throw Error(ErrorKind::plugin, factory->name() + ": create() returned no filter");
  std::lock_guard<std::mutex> lock(*mutex_);
  links_.push_back(Link{std::move(factory), std::move(filter)});
}

void Pipeline::add(const Registry& registry, const std::string& spec) {
  FilterSpec parsed = parse_filter_spec(spec);
  add(registry.get(parsed.name), parsed.params);
}

void Pipeline::add(std::unique_ptr<Filter> filter) {
  if (!filter) throw Error(ErrorKind::usage, "Pipeline::add: null filter");
  std::lock_guard<std::mutex> lock(*mutex_);
  links_.push_back(Link{nullptr, std::move(filter)});
}

size_t Pipeline::size() const { return links_.size(); }
const Filter& Pipeline::filter(size_t index) const { return *links_.at(index).filter; }

Halo Pipeline::halo() const {
  Halo total;
  for (const auto& link : links_) {
    total.x += link.filter->halo().x;
    total.y += link.filter->halo().y;
  }
  return total;
}

namespace {
// True when out's storage survives the run (it already has in's shape) and shares bytes with in's.
bool shares_memory(const Image& in, const Image& out) {
  if (out.empty() || out.width() != in.width() || out.height() != in.height() ||
      out.channels() != in.channels() || out.type() != in.type())
    return false;
  const auto a = reinterpret_cast<std::uintptr_t>(in.data()), b = reinterpret_cast<std::uintptr_t>(out.data());
  return a < b + out.byte_size() && b < a + in.byte_size();
}
}  // namespace

namespace {
// An in-memory image as a row source or sink (the streamer's staged transport for heap images).
class ImageRows final : public RowSource, public RowSink {
 public:
  explicit ImageRows(const Image& image, Image* writable = nullptr) : image_(image), writable_(writable) {}
  ImageShape shape() const override {
    return {image_.width(), image_.height(), image_.channels(), image_.type()};
  }
  void read(int begin, int end, std::byte* rows) override {
    detail::copy_rows(rows, image_.row(begin), image_.row_bytes() * size_t(end - begin));
  }
  void write(int begin, int end, const std::byte* rows) override {
    detail::copy_rows(writable_->row(begin), rows, image_.row_bytes() * size_t(end - begin));
  }

 private:
  const Image& image_;
  Image* writable_;
};

RunStats stream_images(Device& device, const std::vector<Filter*>& chain, const Image& in, Image& out,
                       const RunOptions& options, detail::StreamResources& resources) {
  if (out.width() != in.width() || out.height() != in.height() || out.channels() != in.channels() ||
      out.type() != in.type())
    out = Image(in.width(), in.height(), in.channels(), in.type());
  ImageRows source(in), sink(out, &out);
  detail::Endpoints ends;
  ends.shape = source.shape();
  ends.source = &source;
  ends.sink = &sink;
  ends.in = &in;
  ends.out = &out;
  return detail::stream(device, chain, ends, options, resources);
}
}  // namespace

RunStats Pipeline::run(const Image& in, Image& out, const RunOptions& options) {
  if (in.empty()) throw Error(ErrorKind::usage, "Pipeline::run: empty input image");
  std::lock_guard<std::mutex> lock(*mutex_);
  std::vector<Filter*> chain;
  for (auto& link : links_) chain.push_back(link.filter.get());
  if (&in == &out || shares_memory(in, out)) {
    // The streamer reads rows of `in` after writing earlier rows of `out`.
    Image copy = in;
    return stream_images(*device_, chain, copy, out, options, *resources_);
  }
  return stream_images(*device_, chain, in, out, options, *resources_);
}

RunStats Pipeline::run(RowSource& source, RowSink& sink, const RunOptions& options) {
  const ImageShape shape = source.shape();
  checked_image_bytes(shape.width, shape.height, shape.channels, pixel_type_size(shape.type), "Pipeline::run source");
  std::lock_guard<std::mutex> lock(*mutex_);
  std::vector<Filter*> chain;
  for (auto& link : links_) chain.push_back(link.filter.get());
  detail::Endpoints ends;
  ends.shape = shape;
  ends.source = &source;
  ends.sink = &sink;
  return detail::stream(*device_, chain, ends, options, *resources_);
}

}  // namespace clf

// Pipeline: the chain of configured filters on one device or several, and its two run()s.
#include "clf/pipeline.hpp"

#include <cstdint>

#include "clf/error.hpp"
#include "clf/registry.hpp"
#include "host_copy.hpp"
#include "stream/stream.hpp"

namespace clf {

struct Pipeline::Link {
  std::shared_ptr<const FilterFactory> factory;  // keeps the plugin library loaded
  std::vector<std::unique_ptr<Filter>> filters;  // filters[d] runs on devices_[d]
};

Pipeline::Pipeline(std::shared_ptr<Device> device)
    : Pipeline(std::vector<std::shared_ptr<Device>>{std::move(device)}) {}

Pipeline::Pipeline(std::vector<std::shared_ptr<Device>> devices)
    : devices_(std::move(devices)), mutex_(std::make_unique<std::mutex>()) {
  if (devices_.empty()) throw Error(ErrorKind::usage, "Pipeline needs a device");
  for (const auto& device : devices_) {
    if (!device) throw Error(ErrorKind::usage, "Pipeline needs a device (got a null one)");
    resources_.push_back(std::make_unique<detail::StreamResources>());
  }
}
Pipeline::~Pipeline() {
  resources_.clear();  // their buffers count against the devices, which may outlive us
  // Filters before factories: a filter's code lives in the plugin its factory keeps loaded.
  for (auto& link : links_) link.filters.clear();
}
Pipeline::Pipeline(Pipeline&&) noexcept = default;

namespace {
// A halo past any image clfilter takes is a plugin's mistake: refused before any plan is made.
void check_halo(const Filter& filter, const std::string& name) {
  const Halo h = filter.halo();
  if (h.x < 0 || h.y < 0 || h.x > max_halo || h.y > max_halo)
    throw Error(ErrorKind::plugin, name + ": a halo of " + std::to_string(h.x) + "x" +
                                       std::to_string(h.y) + " pixels is outside 0.." +
                                       std::to_string(max_halo) + ", what any image could need");
}
}  // namespace

void Pipeline::add(std::shared_ptr<const FilterFactory> factory,
                   const std::map<std::string, std::string>& params) {
  if (!factory) throw Error(ErrorKind::usage, "Pipeline::add: no filter factory");
  Params valid = validate_params(factory->name(), factory->params(), params);
  Link link{factory, {}};
  for (const auto& device : devices_) {
    auto filter = factory->create(valid, *device);
    if (!filter) throw Error(ErrorKind::plugin, factory->name() + ": create() returned no filter");
    check_halo(*filter, factory->name());
    link.filters.push_back(std::move(filter));
  }
  std::lock_guard<std::mutex> lock(*mutex_);
  links_.push_back(std::move(link));
}

void Pipeline::add(const Registry& registry, const std::string& spec) {
  FilterSpec parsed = parse_filter_spec(spec);
  add(registry.get(parsed.name), parsed.params);
}

void Pipeline::add(std::unique_ptr<Filter> filter) {
  if (!filter) throw Error(ErrorKind::usage, "Pipeline::add: null filter");
  if (devices_.size() > 1)
    throw Error(ErrorKind::usage,
                "Pipeline::add: a filter created by hand runs on one device; this pipeline has " +
                    std::to_string(devices_.size()) + " (add it by factory or spec instead)");
  check_halo(*filter, "Pipeline::add");
  std::lock_guard<std::mutex> lock(*mutex_);
  Link link;
  link.filters.push_back(std::move(filter));
  links_.push_back(std::move(link));
}

size_t Pipeline::size() const { return links_.size(); }
const Filter& Pipeline::filter(size_t index) const { return *links_.at(index).filters.front(); }

Halo Pipeline::halo() const {
  Halo total;
  for (const auto& link : links_) {
    total.x += link.filters.front()->halo().x;
    total.y += link.filters.front()->halo().y;
  }
  return total;
}

namespace {
// True when out's storage survives the run (it already has in's shape) and shares bytes with in's.
bool shares_memory(const Image& in, const Image& out) {
  if (out.empty() || out.width() != in.width() || out.height() != in.height() ||
      out.channels() != in.channels() || out.type() != in.type())
    return false;
  const auto a = reinterpret_cast<std::uintptr_t>(in.data()),
             b = reinterpret_cast<std::uintptr_t>(out.data());
  return a < b + out.byte_size() && b < a + in.byte_size();
}
}  // namespace

namespace {
// An in-memory image as a row source or sink (the streamer's staged transport for heap images).
class ImageRows final : public RowSource, public RowSink {
 public:
  explicit ImageRows(const Image& image, Image* writable = nullptr)
      : image_(image), writable_(writable) {}
  ImageShape shape() const override {
    return {image_.width(), image_.height(), image_.channels(), image_.type()};
  }
  void read(int begin, int end, std::byte* rows) override {
    detail::copy_rows(rows, image_.row(begin), image_.row_bytes() * size_t(end - begin));
  }
  void write(int begin, int end, const std::byte* rows) override {
    detail::copy_rows(writable_->row(begin), rows, image_.row_bytes() * size_t(end - begin));
  }
  std::unique_ptr<RowSource> second_reader() const override {
    return std::make_unique<ImageRows>(image_);
  }

 private:
  const Image& image_;
  Image* writable_;
};

}  // namespace

RunStats Pipeline::stream(const detail::Endpoints& ends, const RunOptions& options) {
  std::vector<detail::Lane> lanes(devices_.size());
  for (size_t d = 0; d < devices_.size(); ++d) {
    lanes[d].device = devices_[d].get();
    lanes[d].resources = resources_[d].get();
    for (auto& link : links_) lanes[d].chain.push_back(link.filters[d].get());
  }
  return detail::stream(lanes, ends, options);
}

namespace {
// As Python refuses it: a run of nothing is a mistake, not a slow copy.
void check_filters(size_t count) {
  if (count == 0)
    throw Error(ErrorKind::usage,
                "Pipeline::run: no filters added (add one, e.g. "
                "\"gaussian:sigma=2\", before running)");
}
}  // namespace

RunStats Pipeline::run(const Image& in, Image& out, const RunOptions& options) {
  if (in.empty()) throw Error(ErrorKind::usage, "Pipeline::run: empty input image");
  check_filters(size());
  std::lock_guard<std::mutex> lock(*mutex_);
  // The streamer reads rows of `in` after writing earlier rows of `out`: overlapping storage is
  // copied first.
  Image copy;
  const bool aliased = &in == &out || shares_memory(in, out);
  if (aliased) copy = in;
  const Image& source_image = aliased ? copy : in;
  if (out.width() != in.width() || out.height() != in.height() || out.channels() != in.channels() ||
      out.type() != in.type())
    out = Image(in.width(), in.height(), in.channels(), in.type());
  ImageRows source(source_image), sink(out, &out);
  detail::Endpoints ends;
  ends.shape = source.shape();
  ends.source = &source;
  ends.sink = &sink;
  ends.in = &source_image;
  ends.out = &out;
  return stream(ends, options);
}

RunStats Pipeline::run(RowSource& source, RowSink& sink, const RunOptions& options) {
  const ImageShape shape = source.shape();
  checked_image_bytes(shape.width, shape.height, shape.channels, pixel_type_size(shape.type),
                      "Pipeline::run source");
  check_filters(size());
  std::lock_guard<std::mutex> lock(*mutex_);
  detail::Endpoints ends;
  ends.shape = shape;
  ends.source = &source;
  ends.sink = &sink;
  return stream(ends, options);
}

RunStats Pipeline::run(const DeviceImage& in, DeviceImage& out, const RunOptions& options) {
  if (in.empty()) throw Error(ErrorKind::usage, "Pipeline::run: empty input device image");
  check_filters(size());
  if (devices_.size() > 1)
    throw Error(ErrorKind::usage,
                "Pipeline::run: a device image runs on a pipeline of one device "
                "(this one spreads strips over " +
                    std::to_string(devices_.size()) + ")");
  if (&in.device() != devices_.front().get())
    throw Error(ErrorKind::usage,
                "Pipeline::run: the image is on " + in.device().info().label() +
                    (in.device().info().label() == device().info().label()
                         ? " in another context (another Device) than the pipeline's"
                         : ", the pipeline on " + device().info().label()) +
                    "; a device image is used on the Device it was made on");
  std::lock_guard<std::mutex> lock(*mutex_);
  if (out.empty() || out.device_ptr() != in.device_ptr() || out.width() != in.width() ||
      out.height() != in.height() || out.channels() != in.channels() || out.type() != in.type() ||
      out.overlaps(in))
    out = DeviceImage(in.device_ptr(), in.width(), in.height(), in.channels(), in.type());
  detail::Endpoints ends;
  ends.shape = {in.width(), in.height(), in.channels(), in.type()};
  ends.device_in = &in;
  ends.device_out = &out;
  return stream(ends, options);
}

}  // namespace clf

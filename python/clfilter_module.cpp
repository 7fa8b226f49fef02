// clfilter._clfilter: the core for Python (pybind11). numpy arrays in and out (uint8, uint16,
// float16, float32; HxW or HxWxC; other types are converted by clfilter/__init__.py), one Pipeline
// per chain, errors as Python exceptions.
// The Python face (filter, Pipeline, dask_filter) is in clfilter/__init__.py over this.
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>

#include "clf/clf.hpp"
#if defined(CLF_PYTHON_FILES)
#include "batch.hpp"
#include "row_files.hpp"
#endif

namespace py = pybind11;

namespace {

// The CLF_* environment, read once, before the module's first OpenCL call (PoCL's kernel cache
// made writable there); one Registry for the process (plugins load once); devices opened once per
// selector.
const clf::Environment& environment() {
  static const clf::Environment env = [] {
    clf::Environment read = clf::read_environment();
    clf::use_writable_pocl_cache(read);
    return read;
  }();
  return env;
}

// One Registry per list of extra plugin directories (each before CLF_PLUGIN_PATH's), kept for the
// process: plugins load once.
const clf::Registry& registry(const std::vector<std::string>& plugin_dirs = {}) {
  static std::mutex mutex;
  static std::map<std::vector<std::string>, std::unique_ptr<clf::Registry>> made;
  std::lock_guard<std::mutex> lock(mutex);
  auto& r = made[plugin_dirs];
  if (!r) {
    std::vector<std::string> dirs = plugin_dirs;
    for (const auto& d : environment().plugin_path) dirs.push_back(d);
    r = std::make_unique<clf::Registry>(dirs);
  }
  return *r;
}

std::string device_id(const clf::Device& device) {
  return std::to_string(device.info().platform_index) + ":" +
         std::to_string(device.info().device_index);
}

// Devices opened once per selector: one ("gpu", "P:D", a name) or several ("all", "cpu,cpu"), as
// the command line takes them. Selectors of one device share one Device per physical device
// ("gpu", "" and "0:0" may name the same): a DeviceImage is used on the Device (the OpenCL
// context) it was made on, so to_device(a, "gpu") must meet Pipeline(..., device="0:0") there.
std::vector<std::shared_ptr<clf::Device>> devices_for(const std::string& selector) {
  static std::mutex mutex;
  static std::map<std::string, std::vector<std::shared_ptr<clf::Device>>> open;
  static std::map<std::string, std::shared_ptr<clf::Device>> by_id;
  std::lock_guard<std::mutex> lock(mutex);
  auto& d = open[selector];
  if (d.empty()) {
    const std::string chosen = selector.empty() ? environment().device : selector;
    const bool several = chosen == "all" || chosen.find(',') != std::string::npos;
    if (several) {
      d = clf::open_devices(chosen, environment().device_options());
    } else {
      auto one = clf::Device::open(chosen, environment().device_options());
      auto& known = by_id[device_id(*one)];
      if (!known) known = one;
      d = {known};
    }
  }
  return d;
}

// A context made outside clfilter (pyopencl's), adopted once while someone holds it: images and
// pipelines made for it meet on one Device.
std::shared_ptr<clf::Device> adopted(uintptr_t context, uintptr_t device) {
  static std::mutex mutex;
  static std::map<std::pair<uintptr_t, uintptr_t>, std::weak_ptr<clf::Device>> made;
  std::lock_guard<std::mutex> lock(mutex);
  auto& weak = made[{context, device}];
  auto d = weak.lock();
  if (!d) {
    d = clf::Device::adopt(reinterpret_cast<cl_context>(context),
                           reinterpret_cast<cl_device_id>(device), environment().device_options());
    weak = d;
  }
  return d;
}

// The Device a Python call names: an adopted context when `context` is given, else a selector.
std::vector<std::shared_ptr<clf::Device>> devices_named(const std::string& selector,
                                                        uintptr_t context, uintptr_t device) {
  if (context) return {adopted(context, device)};
  return devices_for(selector);
}

clf::PixelType pixel_type(const py::dtype& dtype) {
  // By kind and size, in this machine's byte order (a byte-swapped array is refused by name), read
  // through Python attributes: pybind11's C accessors (kind(), itemsize()) read numpy's descriptor
  // struct, whose layout numpy 2 changed (itemsize 0 under pybind11 3.0 with numpy 2).
  const char kind = dtype.attr("kind").cast<std::string>().at(0);
  const auto size = dtype.attr("itemsize").cast<int>();
  const bool native = dtype.attr("isnative").cast<bool>();
  if (native && kind == 'u' && size == 1) return clf::PixelType::u8;
  if (native && kind == 'u' && size == 2) return clf::PixelType::u16;
  if (native && kind == 'f' && size == 4) return clf::PixelType::f32;
  if (native && kind == 'f' && size == 2) return clf::PixelType::f16;
  throw py::type_error("clfilter: arrays of uint8, uint16, float16 or float32 only (got " +
                       std::string(py::str(py::handle(dtype))) + ")");
}

const char* dtype_name(clf::PixelType type) {
  switch (type) {
    case clf::PixelType::u8:
      return "uint8";
    case clf::PixelType::u16:
      return "uint16";
    case clf::PixelType::f16:
      return "float16";
    case clf::PixelType::f32:
      break;
  }
  return "float32";
}

// Arrays are made and converted by numpy itself (ascontiguousarray, empty) and read through the
// buffer protocol: the same on every pybind11 and numpy. Under pybind11 3.0 with numpy 2, the
// array constructor computed zero strides (every element aliasing the first), so a result written
// row by row ran past a one-element allocation.
py::array c_order(const py::handle& input) {
  return py::module_::import("numpy").attr("ascontiguousarray")(input);
}
py::array empty_like(const py::array& like) {
  return py::module_::import("numpy").attr("empty")(like.attr("shape"), like.attr("dtype"));
}

// An array as the clf::Image the streamer reads or writes, over the array's own memory (C order:
// rows of interleaved channels). The caller keeps the array alive for the image's lifetime.
clf::Image image_over(const py::array& array) {
  const py::buffer_info info = array.request();
  if (info.ndim != 2 && info.ndim != 3)
    throw py::value_error("clfilter: expected an HxW or HxWxC array (got " +
                          std::to_string(info.ndim) + " dimensions)");
  const auto h = info.shape[0], w = info.shape[1], c = info.ndim == 3 ? info.shape[2] : 1;
  const std::string shape = std::string(py::str(array.attr("shape")));
  if (h < 1 || w < 1 || c < 1)
    throw py::value_error("clfilter: cannot filter an empty array (shape " + shape + ")");
  // A first axis short enough to be channels is likely CxHxW (as torch keeps images): say so.
  const bool channels_first = h <= clf::max_image_channels;
  if (c > clf::max_image_channels)
    throw py::value_error(
        "clfilter: cannot filter an array of shape " + shape + ": " + std::to_string(c) +
        " channels, more than an image's " + std::to_string(clf::max_image_channels) +
        (channels_first ? " (channels go last, HxWxC; for CxHxW pass a.transpose(1, 2, 0))" : ""));
  if (h > INT32_MAX || w > INT32_MAX)
    throw py::value_error("clfilter: cannot filter an array of shape " + shape +
                          ": a side past 2^31 - 1 pixels");
  // Rows of interleaved channels, nothing else: the streamer addresses the memory that way.
  py::ssize_t step = info.itemsize;
  for (size_t i = info.shape.size(); i-- > 0; step *= info.shape[i])
    if (info.shape[i] > 1 && info.strides[i] != step)
      throw std::logic_error(
          "clfilter: internal error: an array not in C order reached the core (strides " +
          std::string(py::str(array.attr("strides"))) + ")");
  // The streamer only reads the input; an Image over external storage is not const-typed.
  auto* data = static_cast<std::byte*>(info.ptr);
  return clf::Image(
      int(w), int(h), int(c), pixel_type(array.dtype()), data, [] {}, false);
}

py::dict stats_dict(const clf::RunStats& s) {
  py::dict d;
  d["wall_ms"] = s.wall_ms;
  d["strips"] = s.strips;
  d["strip_rows"] = s.strip_rows;
  d["slots"] = s.slots;
  d["bytes_uploaded"] = s.bytes_uploaded;
  d["bytes_downloaded"] = s.bytes_downloaded;
  d["device_bytes_peak"] = s.device_bytes_peak;
  d["zero_copy"] = s.zero_copy;
  d["host_enqueue_ms"] = s.host_enqueue_ms;
  d["profiled"] = s.profiled;
  d["upload_busy_ms"] = s.upload_busy_ms;
  d["compute_busy_ms"] = s.compute_busy_ms;
  d["download_busy_ms"] = s.download_busy_ms;
  d["summary"] = s.summary();
  return d;
}

// An image in device memory, with the shape and dtype its array had (HxW or HxWxC).
class PyDeviceImage {
 public:
  PyDeviceImage(clf::DeviceImage image, std::vector<py::ssize_t> shape)
      : image_(std::move(image)), shape_(std::move(shape)) {}

  // `array` (C order, a type the core takes: the Python layer's _checked) copied to the device.
  static PyDeviceImage upload(const py::array& array, const std::shared_ptr<clf::Device>& device) {
    const py::array in = c_order(array);
    const clf::Image host = image_over(in);
    std::vector<py::ssize_t> shape(in.shape(), in.shape() + in.ndim());
    py::gil_scoped_release release;
    clf::DeviceImage image(device, host.width(), host.height(), host.channels(), host.type());
    image.write(host);
    return PyDeviceImage(std::move(image), std::move(shape));
  }

  const clf::DeviceImage& image() const {
    if (image_.empty())
      throw py::value_error("clfilter: this DeviceImage was released (its device memory freed)");
    return image_;
  }
  const std::vector<py::ssize_t>& shape() const { return shape_; }

  // A new numpy array with the image, or the image written into `out` (C order, its shape and
  // dtype: the Python layer checks).
  py::array get(const py::object& into) const {
    const clf::DeviceImage& source = image();
    py::array out = into.is_none() ? py::array(py::module_::import("numpy").attr("empty")(
                                         py::tuple(py::cast(shape_)), dtype()))
                                   : py::array(into);
    clf::Image host = image_over(out);
    py::gil_scoped_release release;
    source.read(host);
    return out;
  }
  void release() { image_ = clf::DeviceImage(); }
  std::string dtype() const { return dtype_name(image().type()); }
  std::string device() const { return image().device().info().label(); }
  size_t nbytes() const { return image().byte_size(); }

 private:
  clf::DeviceImage image_;
  std::vector<py::ssize_t> shape_;
};

// A chain built once on one device, run on many arrays (programs and strip buffers reused).
class PyPipeline {
 public:
  PyPipeline(const std::vector<std::string>& specs, const std::string& selector,
             const std::vector<std::string>& plugin_dirs, uintptr_t context, uintptr_t device)
      : pipeline_(devices_named(selector, context, device)) {
    if (specs.empty()) throw py::value_error("clfilter: no filter given (e.g. 'gaussian:sigma=2')");
    for (const auto& spec : specs) pipeline_.add(registry(plugin_dirs), spec);
  }

  // `input` (checked by the Python layer: HxW or HxWxC, a type the core takes) is read in place
  // when it is C-contiguous (copied once otherwise). The result goes to `out` when given (C order,
  // the input's shape and type: a numpy.memmap makes an output larger than memory), else to a new
  // array. The GIL is released while the device works; `progress` (done, total), if given, and
  // Ctrl-C are seen between strips.
  py::array run(const py::array& input, int strip_rows, const py::object& progress,
                const py::object& into) {
    if (!py::isinstance<py::array>(input)) throw py::type_error("clfilter: expected a numpy array");
    const py::array in = c_order(input);
    const clf::Image in_image = image_over(in);
    py::array out = into.is_none() ? empty_like(in) : py::array(into);
    clf::Image out_image = image_over(out);
    const clf::RunOptions options = run_options(strip_rows, progress);
    py::gil_scoped_release release;
    stats_ = pipeline_.run(in_image, out_image, options);
    return out;
  }

  // A DeviceImage through the chain into `into` (a DeviceImage of its shape on the same device,
  // else a new one), nothing crossing the bus.
  PyDeviceImage run_device(const PyDeviceImage& input, int strip_rows, const py::object& progress,
                           PyDeviceImage* into) {
    clf::DeviceImage out = into ? into->image() : clf::DeviceImage();
    const clf::RunOptions options = run_options(strip_rows, progress);
    {
      py::gil_scoped_release release;
      stats_ = pipeline_.run(input.image(), out, options);
    }
    return PyDeviceImage(out, input.shape());
  }

  // Buffers of the pipeline's context (pyopencl arrays'), each at a byte offset: `shape` (HxW or
  // HxWxC) of `dtype` from one into the other.
  void run_buffers(uintptr_t in, size_t in_offset, uintptr_t out, size_t out_offset,
                   const std::vector<py::ssize_t>& shape, const py::dtype& dtype, int strip_rows,
                   const py::object& progress) {
    if (shape.size() != 2 && shape.size() != 3)
      throw py::value_error("clfilter: expected an HxW or HxWxC array");
    const clf::PixelType type = pixel_type(dtype);
    for (py::ssize_t extent : shape)
      if (extent < 1 || extent > INT32_MAX)
        throw py::value_error("clfilter: cannot filter an array with an extent of " +
                              std::to_string(extent));
    const int h = int(shape[0]), w = int(shape[1]), c = shape.size() == 3 ? int(shape[2]) : 1;
    const auto& device = pipeline_.devices().front();
    const clf::DeviceImage source =
        clf::DeviceImage::over(device, reinterpret_cast<cl_mem>(in), in_offset, w, h, c, type);
    clf::DeviceImage target =
        clf::DeviceImage::over(device, reinterpret_cast<cl_mem>(out), out_offset, w, h, c, type);
    if (source.overlaps(target))
      throw py::value_error("clfilter: out shares memory with the input; give another array");
    const clf::RunOptions options = run_options(strip_rows, progress);
    py::gil_scoped_release release;
    stats_ = pipeline_.run(source, target, options);
    source.wait();  // pyopencl's queues know nothing of clfilter's events: done before returning
  }

  uintptr_t context_handle() const {
    return reinterpret_cast<uintptr_t>(pipeline_.device().context()());
  }

  std::pair<int, int> halo() const {
    const clf::Halo h = pipeline_.halo();
    return {h.y, h.x};
  }
  // Each link's border as the core parsed it, so Python never reads a spec itself.
  std::vector<std::string> borders() const {
    std::vector<std::string> names;
    for (size_t i = 0; i < pipeline_.size(); ++i)
      names.push_back(clf::border_mode_name(pipeline_.filter(i).border().mode));
    return names;
  }
  py::dict stats() const { return stats_dict(stats_); }
  const std::shared_ptr<clf::Device>& device_ptr() const { return pipeline_.devices().front(); }
  std::vector<std::string> describe() const {
    std::vector<std::string> lines;
    for (size_t i = 0; i < pipeline_.size(); ++i) lines.push_back(pipeline_.filter(i).describe());
    return lines;
  }
  std::string device_label() const {
    std::string label;
    for (const auto& d : pipeline_.devices())
      label += (label.empty() ? "" : " + ") + d->info().label();
    return label;
  }

 private:
  // Called on this thread (RunOptions' rule), between strips: the GIL for Python's callback and
  // its pending signals; an exception (KeyboardInterrupt) ends the run, cancelled.
  clf::RunOptions run_options(int strip_rows, const py::object& progress) {
    clf::RunOptions options;
    options.strip_rows = strip_rows;
    options.profile = profile_;
    // The callback by address (it outlives the run): copies of the function hold no reference
    // that would be counted without the GIL.
    options.progress = [callback = &progress](int done, int total) {
      py::gil_scoped_acquire gil;
      if (!callback->is_none()) (*callback)(done, total);
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    };
    return options;
  }

  clf::Pipeline pipeline_;
  clf::RunStats stats_;

 public:
  bool profile_ = false;  // collect device timings (stats()'s *_busy_ms)
};

py::list devices() {
  environment();  // before the first OpenCL call
  py::list list;
  for (const auto& d : clf::list_devices()) {
    py::dict info;
    info["id"] = std::to_string(d.platform_index) + ":" + std::to_string(d.device_index);
    info["name"] = d.name;
    info["platform"] = d.platform_name;
    info["type"] = d.is_gpu ? "gpu" : d.is_cpu ? "cpu" : "other";
    info["memory_bytes"] = d.global_mem_bytes;
    info["label"] = d.label();
    list.append(info);
  }
  return list;
}

py::list filters(const std::vector<std::string>& plugin_dirs) {
  py::list list;
  for (const auto& f : registry(plugin_dirs).factories()) {
    py::dict filter;
    filter["name"] = f->name();
    filter["summary"] = f->summary();
    py::list params;
    for (const auto& p : f->params()) {
      py::dict param;
      param["name"] = p.name;
      param["type"] = clf::param_type_name(p.type);
      param["default"] =
          p.default_value.empty() ? py::object(py::none()) : py::object(py::str(p.default_value));
      param["help"] = p.help;
      param["min"] = p.min;  // -inf / inf: open
      param["max"] = p.max;
      param["min_exclusive"] = p.min_exclusive;
      param["max_exclusive"] = p.max_exclusive;
      param["range"] = p.range_text();
      param["choices"] = p.choices;
      params.append(param);
    }
    filter["params"] = params;
    list.append(filter);
  }
  return list;
}

#if defined(CLF_PYTHON_FILES)
// Files through the chain on the command line's batch engine (cli/batch.hpp): IN... written to
// output_dir/<name>, as `clfilter IN... --output-dir DIR`. The GIL is released for the whole
// batch; Python's signals are checked on this thread between strips and files, and a Ctrl-C
// stops the batch as the command line's does (KeyboardInterrupt once the job threads stop).
py::list filter_files(const std::vector<std::string>& inputs, const std::string& output_dir,
                      const std::vector<std::string>& specs, int jobs, const std::string& selector,
                      const std::vector<std::string>& plugin_dirs, int quality,
                      const std::string& compression, const std::string& io,
                      const std::string& type) {
  if (specs.empty()) throw py::value_error("clfilter: no filter given (e.g. 'gaussian:sigma=2')");
  if (io != "auto" && io != "oiio")
    throw py::value_error("clfilter: io is 'auto' or 'oiio' (got '" + io + "')");
  const std::optional<clf::PixelType> pixel_type = clf::pixel_type_named(type);
  if (!type.empty() && !pixel_type)
    throw py::value_error("clfilter: type is one of " + std::string(clf::pixel_type_names) +
                          " (got '" + type + "')");
  for (const auto& spec : specs) {  // every spec checked before a file or the device opens
    const clf::FilterSpec parsed = clf::parse_filter_spec(spec);
    const auto factory = registry(plugin_dirs).get(parsed.name);
    clf::validate_params(factory->name(), factory->params(), parsed.params);
  }
  py::list list;
  if (inputs.empty()) return list;
  const std::vector<clf::FileJob> plan = clf::plan_jobs(inputs, output_dir, "");
  clf::prepare_output_dir(output_dir, "output_dir");  // as the command line's --output-dir
  std::atomic<bool> cancel{false};
  clf::BatchOptions options;
  options.io = io;
  options.output.quality = quality;
  options.output.compression = compression;
  options.output.type = pixel_type;
  options.run.cancel = &cancel;
  options.workers = jobs;
  options.poll = [&] {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {  // KeyboardInterrupt: raised again as the batch ends
      PyErr_Clear();
      cancel = true;
    }
  };
  std::vector<clf::FileResult> results;
  {
    py::gil_scoped_release release;
    clf::file_io(io, plan.front()).check_writable(plan.front().out);
    results = clf::run_files(
        plan, devices_for(selector),
        [&](const std::shared_ptr<clf::Device>& device, int) {
          auto pipeline = std::make_unique<clf::Pipeline>(device);
          for (const auto& spec : specs) pipeline->add(registry(plugin_dirs), spec);
          return pipeline;
        },
        options);
  }
  for (const clf::FileResult& r : results) {
    py::dict d;
    d["input"] = r.in;
    d["output"] = r.out;
    d["written"] = r.written;
    d["error"] = r.error.empty() ? py::object(py::none()) : py::object(py::str(r.error));
    d["warnings"] = r.warnings;
    d["format"] = r.format;
    d["ms"] = r.ms;
    list.append(d);
  }
  return list;
}
#endif

// clfilter.tune: clf::tune on one device, its winners applied to that device for the module's
// later calls. progress(line) runs in this thread, with the GIL; a signal stops the run there.
py::dict tune(const std::string& selector, uintptr_t context, uintptr_t cl_device,
              const std::vector<std::string>& chain, const std::vector<std::pair<int, int>>& sizes,
              const py::object& progress) {
  const auto devices = devices_named(selector, context, cl_device);
  if (devices.size() != 1)
    throw py::value_error("clfilter.tune: '" + selector + "' names " +
                          std::to_string(devices.size()) + " devices: tune one at a time");
  clf::TuneOptions options;
  options.chain = chain;
  options.sizes = sizes;
  options.progress = [&progress](const std::string& line) {
    py::gil_scoped_acquire gil;
    if (!progress.is_none()) progress(line);
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
  };
  std::vector<clf::TuneResult> results;
  {
    py::gil_scoped_release release;
    results = clf::tune(devices.front(), registry(), options);
  }
  py::list families;
  for (const clf::TuneResult& r : results) {
    py::dict family;
    family["family"] = r.family;
    family["chosen"] = r.chosen;
    family["database_ms"] = r.database_ms;
    family["chosen_ms"] = r.chosen_ms;
    family["candidates"] = r.candidates;
    family["refused"] = r.failed;
    family["summary"] = r.summary();
    families.append(family);
  }
  py::dict result;
  result["file"] = clf::tuned_file(*devices.front());
  result["families"] = families;
  return result;
}

}  // namespace

PYBIND11_MODULE(_clfilter, m) {
  m.doc() = "clfilter's core: OpenCL image filters over numpy arrays (see the clfilter package)";
  // clf::Error by kind: what the caller gave is a ValueError, the run being cancelled is Python's
  // own KeyboardInterrupt (already set when a signal cancelled it), the rest a RuntimeError.
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const clf::Error& e) {
      if (e.kind() == clf::ErrorKind::usage)
        PyErr_SetString(PyExc_ValueError, e.what());
      else if (e.kind() == clf::ErrorKind::cancelled)
        PyErr_SetString(PyExc_KeyboardInterrupt, e.what());
      else
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  py::class_<PyDeviceImage>(m, "DeviceImage")
      .def_property_readonly("shape",
                             [](const PyDeviceImage& i) { return py::tuple(py::cast(i.shape())); })
      .def_property_readonly("dtype", &PyDeviceImage::dtype)
      .def_property_readonly("device", &PyDeviceImage::device)
      .def_property_readonly("nbytes", &PyDeviceImage::nbytes)
      .def("get", &PyDeviceImage::get, py::arg("out") = py::none())
      .def("release", &PyDeviceImage::release);
  m.def(
      "to_device",
      [](const py::array& array, const std::string& selector, uintptr_t context, uintptr_t device) {
        const auto devices = devices_named(selector, context, device);
        if (devices.size() != 1)
          throw py::value_error("clfilter: a DeviceImage lives on one device ('" + selector +
                                "' names " + std::to_string(devices.size()) + ")");
        return PyDeviceImage::upload(array, devices.front());
      },
      py::arg("array"), py::arg("device") = "", py::arg("context") = 0, py::arg("cl_device") = 0);
  m.def(
      "context_handle",
      [](const std::string& selector, uintptr_t context, uintptr_t device) {
        const auto devices = devices_named(selector, context, device);
        if (devices.size() != 1)
          throw py::value_error("clfilter: '" + selector + "' names " +
                                std::to_string(devices.size()) + " devices, not one");
        const clf::Device& d = *devices.front();
        return std::pair<uintptr_t, uintptr_t>(reinterpret_cast<uintptr_t>(d.context()()),
                                               reinterpret_cast<uintptr_t>(d.device()()));
      },
      py::arg("device") = "", py::arg("context") = 0, py::arg("cl_device") = 0);
  py::class_<PyPipeline>(m, "Pipeline")
      .def(py::init<const std::vector<std::string>&, const std::string&,
                    const std::vector<std::string>&, uintptr_t, uintptr_t>(),
           py::arg("specs"), py::arg("device") = "",
           py::arg("plugin_dirs") = std::vector<std::string>{}, py::arg("context") = 0,
           py::arg("cl_device") = 0)
      .def("run", &PyPipeline::run, py::arg("array"), py::arg("strip_rows") = 0,
           py::arg("progress") = py::none(), py::arg("out") = py::none())
      .def("run_device", &PyPipeline::run_device, py::arg("image"), py::arg("strip_rows") = 0,
           py::arg("progress") = py::none(), py::arg("out") = nullptr)
      .def("run_buffers", &PyPipeline::run_buffers)
      .def_property_readonly("context_handle", &PyPipeline::context_handle)
      .def_readwrite("profile", &PyPipeline::profile_)
      .def_property_readonly("halo", &PyPipeline::halo)
      .def_property_readonly("borders", &PyPipeline::borders)
      .def_property_readonly("device", &PyPipeline::device_label)
      .def("describe", &PyPipeline::describe)
      .def("stats", &PyPipeline::stats);
  m.def("devices", &devices);
  m.def("tune", &tune);
  m.def("filters", &filters, py::arg("plugin_dirs") = std::vector<std::string>{});
#if defined(CLF_PYTHON_FILES)
  m.def("filter_files", &filter_files);
#endif
}

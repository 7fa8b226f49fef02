// Device discovery and choice, program building with an in-memory and on-disk cache, and the
// counted allocator that the streamer's memory budget relies on.
#include "clf/device.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "buffer_pool.hpp"
#include "clf/error.hpp"
#include "device_twin.hpp"
#include "embedded.hpp"
#include "program_cache.hpp"
#include "testing.hpp"
#include "tuning_database.hpp"
#include "tuning_state.hpp"
#include "util.hpp"

namespace fs = std::filesystem;

namespace clf {
using detail::trim;
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::vector<cl::Platform> platforms() {
  std::vector<cl::Platform> list;
  cl_int err = cl::Platform::get(&list);
  if (err == CL_PLATFORM_NOT_FOUND_KHR || (err == CL_SUCCESS && list.empty()))
    throw Error(
        ErrorKind::device,
        "no OpenCL platform found: install a driver (for the CPU on Debian: apt-get install "
        "pocl-opencl-icd) and check OCL_ICD_VENDORS / /etc/OpenCL/vendors",
        CL_PLATFORM_NOT_FOUND_KHR);
  cl_check(err, "clGetPlatformIDs");
  return list;
}

// Programs built with these options flush denormals (or are free to: fast or unsafe math).
bool flushes_denormals(const std::string& build_options) {
  for (const char* flush :
       {"-cl-denorms-are-zero", "-cl-fast-relaxed-math", "-cl-unsafe-math-optimizations"})
    if (build_options.find(flush) != std::string::npos) return true;
  return false;
}

DeviceInfo describe(const cl::Platform& platform, const cl::Device& device, int p, int d) {
  DeviceInfo info;
  info.platform_index = p;
  info.device_index = d;
  info.platform_name = trim(platform.getInfo<CL_PLATFORM_NAME>());
  info.name = trim(device.getInfo<CL_DEVICE_NAME>());
  info.vendor = trim(device.getInfo<CL_DEVICE_VENDOR>());
  info.version = trim(device.getInfo<CL_DEVICE_VERSION>());
  info.driver_version = trim(device.getInfo<CL_DRIVER_VERSION>());
  const cl_device_type type = device.getInfo<CL_DEVICE_TYPE>();
  info.is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
  info.is_cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  info.fp32_denormals = (device.getInfo<CL_DEVICE_SINGLE_FP_CONFIG>() & CL_FP_DENORM) != 0;
  info.global_mem_bytes = device.getInfo<CL_DEVICE_GLOBAL_MEM_SIZE>();
  info.max_alloc_bytes = device.getInfo<CL_DEVICE_MAX_MEM_ALLOC_SIZE>();
  info.local_mem_bytes = device.getInfo<CL_DEVICE_LOCAL_MEM_SIZE>();
  info.max_work_group_size = device.getInfo<CL_DEVICE_MAX_WORK_GROUP_SIZE>();
  info.compute_units = int(device.getInfo<CL_DEVICE_MAX_COMPUTE_UNITS>());
  return info;
}

struct Found {
  DeviceInfo info;
  cl::Platform platform;
  cl::Device device;
};

std::vector<Found> all_devices() {
  std::vector<Found> found;
  auto list = platforms();
  for (size_t p = 0; p < list.size(); ++p) {
    std::vector<cl::Device> devices;
    // A platform without devices answers CL_DEVICE_NOT_FOUND: skip it, others may have some.
    if (list[p].getDevices(CL_DEVICE_TYPE_ALL, &devices) != CL_SUCCESS) continue;
    for (size_t d = 0; d < devices.size(); ++d)
      found.push_back({describe(list[p], devices[d], int(p), int(d)), list[p], devices[d]});
  }
  return found;
}

cl::CommandQueue open_host_queue(const DeviceInfo& info, const cl::Context& context,
                                 const cl::Device& device) {
  cl_int err = CL_SUCCESS;
  cl::CommandQueue queue(context, device, 0, &err);
  cl_check(err, "clCreateCommandQueue", info.name);
  return queue;
}

std::string device_list_text(const std::vector<Found>& found) {
  std::string text;
  for (const auto& f : found) text += "\n  " + f.info.label();
  return text.empty() ? " (none)" : text;
}

}  // namespace

std::string DeviceInfo::label() const {
  std::string kind = is_gpu ? "GPU" : is_cpu ? "CPU" : "other";
  return std::to_string(platform_index) + ":" + std::to_string(device_index) + " " + name + " (" +
         kind + ", " + platform_name + ", " + version + ", " +
         std::to_string(global_mem_bytes >> 20) + " MiB)";
}

const char* variant_name(Variant variant) { return variant == Variant::tiled ? "tiled" : "direct"; }

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> infos;
  for (auto& f : all_devices()) infos.push_back(f.info);
  return infos;
}

struct Device::Impl {
  DeviceInfo info;
  cl::Device device;
  cl::Context context;
  cl::CommandQueue host_queue;  // blocking host transfers: weights uploads, pinned maps
  detail::TuningState tuning;   // set before the device is handed out
  uint64_t alloc_limit = 0;
  std::string build_options;  // DeviceOptions::build_options, with a leading space
  std::shared_ptr<detail::ProgramCache> programs;  // shared with twins (device_twin.hpp)
  std::atomic<uint64_t> in_use{0}, peak{0};
  std::unique_ptr<detail::BufferPool> recycled;
};

namespace {
// The device `selector` names among `found` (Device::open's rules); nullptr when none.
const Found* select_device(const std::vector<Found>& found, const std::string& selector) {
  const std::string want = lower(selector);
  auto first_of = [&](bool gpu) -> const Found* {
    for (auto& f : found)
      if (gpu ? f.info.is_gpu : f.info.is_cpu) return &f;
    return nullptr;
  };
  if (want.empty()) {
    const Found* pick = first_of(true);
    if (!pick) pick = first_of(false);
    return pick ? pick : &found.front();
  }
  if (want == "gpu" || want == "cpu") return first_of(want == "gpu");
  const Found* pick = nullptr;
  if (int p = 0, d = 0, used = 0;
      std::sscanf(want.c_str(), "%d:%d%n", &p, &d, &used) == 2 && used == int(want.size())) {
    for (auto& f : found)
      if (f.info.platform_index == p && f.info.device_index == d) pick = &f;
    return pick;
  }
  for (auto& f : found)
    if (lower(f.info.name).find(want) != std::string::npos ||
        lower(f.info.platform_name).find(want) != std::string::npos)
      return &f;
  return nullptr;
}
}  // namespace

std::shared_ptr<Device> Device::open(const std::string& selector, const DeviceOptions& options) {
  auto found = all_devices();
  if (found.empty())
    throw Error(ErrorKind::device,
                "no OpenCL device found on any platform: install a driver (for the CPU on Debian: "
                "apt-get install pocl-opencl-icd)");
  const Found* pick = select_device(found, selector);
  if (!pick)
    throw Error(ErrorKind::device,
                "no OpenCL device matches '" + selector +
                    "' (use gpu, cpu, P:D or part of a name); devices:" + device_list_text(found));
  cl_int err = CL_SUCCESS;
  cl::Context context(pick->device, nullptr, nullptr, nullptr, &err);
  cl_check(err, "clCreateContext", pick->info.name);
  return make(pick->info, pick->device, context, options);
}

std::shared_ptr<Device> Device::adopt(cl_context context, cl_device_id device,
                                      const DeviceOptions& options) {
  if (!context || !device)
    throw Error(ErrorKind::usage, "Device::adopt: a null OpenCL context or device");
  const cl::Context shared(context, true);  // retained: the caller keeps its own reference
  std::vector<cl::Device> members;
  cl_check(shared.getInfo(CL_CONTEXT_DEVICES, &members), "clGetContextInfo", "CL_CONTEXT_DEVICES");
  const bool member = std::any_of(members.begin(), members.end(),
                                  [&](const cl::Device& d) { return d() == device; });
  for (const Found& f : all_devices())
    if (member && f.device() == device) return make(f.info, f.device, shared, options);
  throw Error(ErrorKind::usage, member ? "Device::adopt: the device is not on any OpenCL platform"
                                       : "Device::adopt: the device is not in the context");
}

std::shared_ptr<Device> Device::make(const DeviceInfo& info, const cl::Device& device,
                                     const cl::Context& context, const DeviceOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->info = info;
  impl->device = device;
  impl->context = context;
  impl->alloc_limit = options.alloc_limit;
  if (!options.build_options.empty()) impl->build_options = " " + options.build_options;
  if (flushes_denormals(options.build_options)) impl->info.fp32_denormals = false;
  std::string cache_dir;
  if (!options.cache_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.cache_dir, ec);
    if (!ec) cache_dir = options.cache_dir;  // a cache that cannot be made is not an error
  }
  impl->programs = std::make_shared<detail::ProgramCache>(
      info, context, device, std::move(cache_dir), options.pocl_kernel_cache);
  Tuning tuning;
  std::string source = detail::initial_tuning(tuning, impl->info, impl->programs->dir());
  impl->tuning.set(std::move(tuning), std::move(source));
  impl->host_queue = open_host_queue(impl->info, context, device);
  impl->recycled = std::make_unique<detail::BufferPool>(
      size_t(Device::recycled_buffers), info.global_mem_bytes / Device::recycled_share);
  return std::shared_ptr<Device>(new Device(std::move(impl)));
}

Device::Device(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Device::~Device() { impl_->recycled->clear(); }  // while the counts they give back still exist

DeviceBuffer Device::reuse(size_t bytes, std::vector<cl::Event>& pending) {
  return impl_->recycled->take(bytes, pending);
}
void Device::release_recycled() { impl_->recycled->clear(); }
void Device::recycle(DeviceBuffer buffer, std::vector<cl::Event> pending) {
  impl_->recycled->give(std::move(buffer), std::move(pending));
}
const DeviceInfo& Device::info() const { return impl_->info; }
const cl::Context& Device::context() const { return impl_->context; }
const cl::Device& Device::device() const { return impl_->device; }
const cl::CommandQueue& Device::host_queue() const { return impl_->host_queue; }
uint64_t Device::bytes_in_use() const { return impl_->in_use; }
uint64_t Device::peak_bytes_in_use() const { return impl_->peak; }
void Device::reset_peak() { impl_->peak = uint64_t(impl_->in_use); }
uint64_t Device::max_alloc_bytes() const {
  const uint64_t limit = impl_->alloc_limit, max = impl_->info.max_alloc_bytes;
  return limit && limit < max ? limit : max;
}
const Tuning& Device::tuning() const { return impl_->tuning.tuning(); }
void Device::set_tuning(const Tuning& tuning) {
  impl_->tuning.replace(tuning, ", then set by the program");
}
const std::string& Device::tuning_source() const { return impl_->tuning.source(); }
std::string Device::knob(const std::string& name, const std::string& fallback) const {
  return tuning_value(tuning(), name, fallback);
}
double Device::knob_number(const std::string& name, double fallback) const {
  return tuning_number(tuning(), name, fallback);
}
const std::string& Device::cache_dir() const { return impl_->programs->dir(); }
size_t Device::programs_built() const { return impl_->programs->built(); }
void Device::on_release(size_t bytes) { impl_->in_use -= bytes; }

std::vector<std::shared_ptr<Device>> open_devices(const std::string& selectors,
                                                  const DeviceOptions& options) {
  std::vector<std::shared_ptr<Device>> devices;
  if (lower(selectors) == "all") {
    const auto infos = list_devices();
    const bool any_gpu =
        std::any_of(infos.begin(), infos.end(), [](const DeviceInfo& d) { return d.is_gpu; });
    for (const auto& d : infos)
      if (d.is_gpu || !any_gpu)
        devices.push_back(Device::open(
            std::to_string(d.platform_index) + ":" + std::to_string(d.device_index), options));
    return devices;
  }
  std::istringstream list(selectors);
  for (std::string one; std::getline(list, one, ',');)
    devices.push_back(Device::open(one, options));
  if (devices.empty()) devices.push_back(Device::open("", options));
  return devices;
}

cl::Program Device::build(const std::string& name, const std::string& source,
                          const std::string& own_options, Helpers helpers) {
  Impl& d = *impl_;
  const bool loads = uses(helpers, Helpers::stage) && tuning().stage_with_loads;
  const std::string options = own_options + (loads ? " -D CLF_STAGE_LOADS" : "") + d.build_options;
  std::string full = clf_kernel_contract_h;
  if (uses(helpers, Helpers::border)) full += clf_kernel_border_clh;
  if (uses(helpers, Helpers::stage)) full += clf_kernel_stage_clh;
  if (uses(helpers, Helpers::correlate)) full += clf_kernel_correlate_clh;
  full += "\n#line 1 \"" + name + "\"\n" + source;
  return d.programs->get(name, full, options);
}

cl::Kernel Device::kernel(const cl::Program& program, const char* name) {
  cl_int err = CL_SUCCESS;
  cl::Kernel kernel(program, name, &err);
  cl_check(err, "clCreateKernel", name);
  return kernel;
}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    buffer_ = std::move(other.buffer_);
    bytes_ = other.bytes_;
    device_ = other.device_;
    other.bytes_ = 0;
    other.device_ = nullptr;
  }
  return *this;
}

void DeviceBuffer::release() {
  if (device_ && bytes_) device_->on_release(bytes_);
  buffer_ = cl::Buffer();
  bytes_ = 0;
  device_ = nullptr;
}

DeviceBuffer Device::alloc(size_t bytes, const char* what, cl_mem_flags flags) {
  Impl& d = *impl_;
  if (bytes == 0) bytes = 4;
  if (d.alloc_limit && d.in_use + bytes > d.alloc_limit)
    throw Error(ErrorKind::device,
                std::string("CL_MEM_OBJECT_ALLOCATION_FAILURE from clCreateBuffer(") + what + ", " +
                    std::to_string(bytes) + " bytes) [injected: limit " +
                    std::to_string(d.alloc_limit) + " bytes]",
                CL_MEM_OBJECT_ALLOCATION_FAILURE);
  if (bytes > max_alloc_bytes())
    throw Error(ErrorKind::device,
                std::string("CL_INVALID_BUFFER_SIZE from clCreateBuffer(") + what + "): " +
                    std::to_string(bytes) + " bytes is more than the device's max allocation " +
                    std::to_string(max_alloc_bytes()),
                CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_int err = CL_SUCCESS;
  DeviceBuffer buffer;
  buffer.buffer_ = cl::Buffer(d.context, flags, bytes, nullptr, &err);
  cl_check(err, "clCreateBuffer", what);
  buffer.bytes_ = bytes;
  buffer.device_ = this;
  const uint64_t now = d.in_use += bytes;
  uint64_t peak = d.peak;
  while (now > peak && !d.peak.compare_exchange_weak(peak, now)) {
  }
  return buffer;
}

Device::Pinned Device::pinned(size_t bytes, const char* what) {
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(impl_->context, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, nullptr,
                    &err);
  cl_check(err, "clCreateBuffer", what);
  cl::CommandQueue queue = impl_->host_queue;  // the unmap may run after this Device is gone
  void* host = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes,
                                      nullptr, nullptr, &err);
  cl_check(err, "clEnqueueMapBuffer", what);
  std::shared_ptr<void> owner(host, [buffer, queue](void* p) mutable {
    queue.enqueueUnmapMemObject(buffer, p);
    queue.finish();
  });
  return {owner, static_cast<std::byte*>(host)};
}

Image Device::pinned_image(int width, int height, int channels, PixelType type) {
  const uint64_t bytes =
      checked_image_bytes(width, height, channels, pixel_type_size(type), "image");
  Pinned memory;
  try {
    memory = pinned(bytes, "pinned image");
  } catch (const Error&) {
    return Image(width, height, channels, type);  // pinning is an optimisation, not a need
  }
  return Image(
      width, height, channels, type, memory.data, [owner = memory.owner] {}, true);
}

DeviceBuffer Device::upload(const void* data, size_t bytes, const char* what) {
  DeviceBuffer buffer = alloc(bytes, what, CL_MEM_READ_ONLY);
  cl_check(impl_->host_queue.enqueueWriteBuffer(buffer.get(), CL_TRUE, 0, bytes, data),
           "clEnqueueWriteBuffer", what);
  return buffer;
}

}  // namespace clf

namespace clf::detail {
void DeviceTesting::set_alloc_limit(Device& device, uint64_t limit) {
  device.impl_->alloc_limit = limit;
}

std::shared_ptr<Device> DeviceTwin::make(const Device& device, const Tuning& tuning) {
  const Device::Impl& of = *device.impl_;
  auto impl = std::make_unique<Device::Impl>();
  impl->info = of.info;
  impl->device = of.device;
  impl->context = of.context;
  impl->alloc_limit = of.alloc_limit;
  impl->build_options = of.build_options;
  impl->programs = of.programs;
  impl->tuning.set(tuning, of.tuning.source() + ", then set by the tuner");
  impl->host_queue = open_host_queue(of.info, of.context, of.device);
  impl->recycled = std::make_unique<BufferPool>(size_t(Device::recycled_buffers),
                                                of.info.global_mem_bytes / Device::recycled_share);
  return std::shared_ptr<Device>(new Device(std::move(impl)));
}
}  // namespace clf::detail

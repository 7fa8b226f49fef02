// Device discovery and choice, program building with an in-memory and on-disk cache, and the
// counted allocator that the streamer's memory budget relies on.
#include "clf/device.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "clf/error.hpp"
#include "embedded.hpp"
#include "testing.hpp"
#include "util.hpp"

namespace fs = std::filesystem;

namespace clf {
using detail::trim;
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

uint64_t fnv1a(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << std::hex << value;
  return out.str();
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

std::string device_list_text(const std::vector<Found>& found) {
  std::string text;
  for (const auto& f : found) text += "\n  " + f.info.label();
  return text.empty() ? " (none)" : text;
}

// GPUs' tuning, measured on the H100 (docs/PERFORMANCE.md has the current figures; the sweeps
// that chose each value are in its git history).
Tuning gpu_tuning() {
  Tuning tuning;
  // 4 x 4 outputs per work-item from aligned float4 reads (the blocked direct kernels). The tiled
  // variant (--variant tiled) uses 248x4 tiles of 64 work-items, whose 62 + 2 float4s per staged
  // row are one copy trip per work-item. Direct by default: NVIDIA runs async_work_group_copy as a
  // blocking loop plus a barrier per call, so a tile pays one global-memory latency per staged
  // row that direct reads overlap.
  tuning.variant = Variant::direct;
  // Tiled windows by async_work_group_copy: the work-items' own float4 loads won only the 9x9,
  // where direct reads beat both.
  tuning.stage_with_loads = false;
  tuning.vector_width = 4;
  tuning.tile_width = 248;
  tuning.tile_height = 4;
  tuning.group_width = 64;
  // Separable kernels past 7x7 take the tiled single pass below at every radius: with the
  // weights passed by value it beats the one pass in registers (8-row blocks) from radius 4.
  tuning.separable_rows = 0;
  // Blocked 2-D windows, rows per work-item by radius: 4, 6 at radius 3 and 4, 4 from 5, 8 from
  // 9. Taller blocks read each window row for more outputs; the sums they keep in registers cost
  // more than the reads save at middle radii.
  tuning.block_rows = {{3, 6}, {5, 4}, {9, 8}};
  // Blocked 2-D windows up to 33x33 (they beat one output per work-item there); past that the
  // unrolled code grows as r^3.
  tuning.blocked_max_radius = 16;
  // Separable filters: the tiled single pass, row results in __local (faster than two passes at
  // every radius measured). 32-column tiles, 128 rows for literal radii and 256 for radii as
  // arguments (each the faster of the two for its kind).
  tuning.separable_variant = Variant::tiled;
  tuning.separable_tile_width = 32;
  tuning.separable_tile_rows = 256;
  tuning.separable_literal_tile_rows = 128;
  tuning.separable_block_rows = 8;
  // Radii as arguments take 5 rows per work-item (against 6, 7 and 8, over radii 20 to 60).
  tuning.separable_arg_block_rows = 5;
  // Columns first (kernels/correlate.clh, clf_separable_columns) at radii 5 to 20: groups of 128
  // work-items over 256 columns walking down 32 rows in batches of 16. Rows first wins at radius
  // 4 and from 24. Each work-item keeps 2r + 16 rows of a float2 column in registers.
  tuning.separable_columns = {{5, 256, 16}, {21, 0, 0}};
  tuning.separable_columns_tile_rows = 32;
  // 16-column tiles where 32 would more than double the row work (large radii: the halo rows
  // leave 32-column tiles few rows of their own in 48 KiB of local memory).
  tuning.separable_min_tile_width = 16;
  // The tiled pass takes radii past 32 as arguments: one program per tile shape, where a radius
  // of its own costs a cold build each. Below 32 the literal radius is faster.
  tuning.radius_arg_above = 32;
  // 2-D windows by FFT (fft_pays): the direct taps one FFT unit costs, as measured.
  tuning.fft_tap_cost = 28;
  // method=fast from sigma 9: below it the exact tiled pass is as fast or faster.
  tuning.fast_gaussian_min_sigma = 9;
  return tuning;
}

Tuning cpu_tuning() {
  Tuning tuning;
  // On CPUs __local is only an extra copy through the same caches.
  // One SIMD register of outputs per work-item (16 floats = AVX-512; fine on AVX2 too).
  tuning.variant = Variant::direct;
  // The tiled variant stages with PoCL's async_work_group_copy, which beats the work-items' own
  // loads for every window.
  tuning.stage_with_loads = false;
  tuning.tile_width = 64;
  tuning.tile_height = 8;
  tuning.group_width = 64;
  tuning.vector_width = 16;
  // Windows of 7x7 and more: 4 vectors of 16 per work-item, each weight read feeding all 4
  // (slower below 49 taps; 8 vectors lose to 4).
  tuning.vectors = 4;
  tuning.vectors_min_taps = 49;
  // Radii past 12 as kernel arguments: a sweep of Gaussian sigmas (bench/compile_sweep.py) then
  // builds a few programs instead of one per radius. The loops the compiler can no longer unroll
  // cost little at large radii but much at small ones, so radii up to 12 (a bounded set) keep
  // their own programs.
  tuning.radius_arg_above = 12;
  // 2-D windows by FFT (fft_pays): the direct taps one FFT unit costs, as measured.
  tuning.fft_tap_cost = 45;
  return tuning;
}

Tuning default_tuning(const DeviceInfo& info) { return info.is_gpu ? gpu_tuning() : cpu_tuning(); }

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
  Tuning tuning;
  std::string cache_dir;
  uint64_t alloc_limit = 0;
  std::string build_options;  // DeviceOptions::build_options, with a leading space
  std::mutex programs_mutex;
  std::map<std::string, cl::Program> programs;
  size_t programs_built = 0;
  std::atomic<uint64_t> in_use{0}, peak{0};
  struct Recycled {
    DeviceBuffer buffer;
    std::vector<cl::Event> pending;
  };
  std::mutex recycled_mutex;
  std::deque<Recycled> recycled;  // the most recent last

  cl::Program try_disk_cache(const std::string& key, const std::string& options);
  void store_in_disk_cache(const std::string& key, const cl::Program& program);
};

std::shared_ptr<Device> Device::open(const std::string& selector, const DeviceOptions& options) {
  auto found = all_devices();
  if (found.empty())
    throw Error(ErrorKind::device,
                "no OpenCL device found on any platform: install a driver (for the CPU on Debian: "
                "apt-get install pocl-opencl-icd)");
  const Found* pick = nullptr;
  const std::string want = lower(selector);
  auto first_of = [&](bool gpu) -> const Found* {
    for (auto& f : found)
      if (gpu ? f.info.is_gpu : f.info.is_cpu) return &f;
    return nullptr;
  };
  if (want.empty()) {
    pick = first_of(true);
    if (!pick) pick = first_of(false);
    if (!pick) pick = &found.front();
  } else if (want == "gpu" || want == "cpu") {
    pick = first_of(want == "gpu");
  } else if (int p = 0, d = 0, used = 0;
             std::sscanf(want.c_str(), "%d:%d%n", &p, &d, &used) == 2 && used == int(want.size())) {
    for (auto& f : found)
      if (f.info.platform_index == p && f.info.device_index == d) pick = &f;
  } else {
    for (auto& f : found)
      if (lower(f.info.name).find(want) != std::string::npos ||
          lower(f.info.platform_name).find(want) != std::string::npos) {
        pick = &f;
        break;
      }
  }
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
  cl_int err = CL_SUCCESS;
  impl->host_queue = cl::CommandQueue(impl->context, impl->device, 0, &err);
  cl_check(err, "clCreateCommandQueue", impl->info.name);
  impl->tuning = default_tuning(impl->info);
  impl->alloc_limit = options.alloc_limit;
  if (!options.build_options.empty()) impl->build_options = " " + options.build_options;
  if (!options.cache_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.cache_dir, ec);
    if (!ec) impl->cache_dir = options.cache_dir;  // a cache that cannot be made is not an error
  }
  return std::shared_ptr<Device>(new Device(std::move(impl)));
}

Device::Device(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Device::~Device() { impl_->recycled.clear(); }  // while the counts they give back still exist

DeviceBuffer Device::reuse(size_t bytes, std::vector<cl::Event>& pending) {
  std::lock_guard<std::mutex> lock(impl_->recycled_mutex);
  auto& r = impl_->recycled;
  for (auto it = r.rbegin(); it != r.rend(); ++it)
    if (it->buffer.bytes() == bytes) {
      DeviceBuffer found = std::move(it->buffer);
      pending = std::move(it->pending);
      r.erase(std::next(it).base());
      return found;
    }
  return {};
}

void Device::release_recycled() {
  std::lock_guard<std::mutex> lock(impl_->recycled_mutex);
  impl_->recycled.clear();
}

void Device::recycle(DeviceBuffer buffer, std::vector<cl::Event> pending) {
  const uint64_t most = impl_->info.global_mem_bytes / recycled_share;
  if (buffer.bytes() > most) return;  // released here
  std::lock_guard<std::mutex> lock(impl_->recycled_mutex);
  auto& r = impl_->recycled;
  r.push_back({std::move(buffer), std::move(pending)});
  uint64_t total = 0;
  for (const auto& e : r) total += e.buffer.bytes();
  while (r.size() > size_t(recycled_buffers) || total > most) {
    total -= r.front().buffer.bytes();
    r.pop_front();  // released; OpenCL frees it once its queued commands have run
  }
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
const Tuning& Device::tuning() const { return impl_->tuning; }
void Device::set_tuning(const Tuning& tuning) { impl_->tuning = tuning; }
const std::string& Device::cache_dir() const { return impl_->cache_dir; }
size_t Device::programs_built() const { return impl_->programs_built; }
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

cl::Program Device::Impl::try_disk_cache(const std::string& key, const std::string& options) {
  if (cache_dir.empty()) return {};
  std::ifstream in(fs::path(cache_dir) / (key + ".bin"), std::ios::binary);
  if (!in) return {};
  std::vector<unsigned char> binary((std::istreambuf_iterator<char>(in)), {});
  if (binary.empty()) return {};
  cl_int err = CL_SUCCESS;
  cl::Program::Binaries binaries{binary};
  std::vector<cl_int> status;
  cl::Program program(context, {device}, binaries, &status, &err);
  if (err != CL_SUCCESS || program.build({device}, options.c_str()) != CL_SUCCESS)
    return {};  // stale or foreign binary: rebuild from source
  return program;
}

// Written to a temporary file and renamed, so that a process stopped midway leaves no torn file.
void Device::Impl::store_in_disk_cache(const std::string& key, const cl::Program& program) {
  if (cache_dir.empty()) return;
  auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  if (binaries.empty() || binaries[0].empty()) return;
  const fs::path path = fs::path(cache_dir) / (key + ".bin");
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary);
  out.write(reinterpret_cast<const char*>(binaries[0].data()), std::streamsize(binaries[0].size()));
  out.close();
  std::error_code ec;
  if (out) fs::rename(tmp, path, ec);
  if (!out || ec) fs::remove(tmp, ec);  // a cache that cannot be written is not an error
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
  const DeviceInfo& info = d.info;
  const std::string key = hex(fnv1a(info.platform_name + '\n' + info.name + '\n' + info.version +
                                    '\n' + info.driver_version + '\n' + options + '\n' + full));
  std::lock_guard<std::mutex> lock(d.programs_mutex);
  if (auto it = d.programs.find(key); it != d.programs.end()) return it->second;

  cl::Program program = d.try_disk_cache(key, options);
  if (!program()) {
    cl_int err = CL_SUCCESS;
    program = cl::Program(d.context, full, false, &err);
    cl_check(err, "clCreateProgramWithSource", name);
    err = program.build({d.device}, options.c_str());
    if (err != CL_SUCCESS) {
      std::string log = trim(program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(d.device));
      throw Error(ErrorKind::build,
                  "building OpenCL program '" + name + "' for " + info.name + " failed (" +
                      cl_error_name(err) + " from clBuildProgram, options '" + options + "'):\n" +
                      (log.empty() ? "(empty build log)" : log),
                  err);
    }
    ++d.programs_built;
    d.store_in_disk_cache(key, program);
  }
  d.programs.emplace(key, program);
  return program;
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
}  // namespace clf::detail

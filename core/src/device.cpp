// Device discovery and choice, program building with an in-memory and on-disk cache, and the
// counted allocator that the streamer's memory budget relies on.
#include "clf/device.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include "clf/error.hpp"
#include "embedded.hpp"

namespace fs = std::filesystem;

namespace clf {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string trim(std::string s) {
  while (!s.empty() && (s.back() == '\0' || std::isspace(static_cast<unsigned char>(s.back()))))
    s.pop_back();
  size_t start = 0;
  while (start < s.size() && std::isspace(static_cast<unsigned char>(s[start]))) ++start;
  return s.substr(start);
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
    throw Error(ErrorKind::device,
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

Tuning default_tuning(const DeviceInfo& info) {
  Tuning tuning;
  if (info.is_gpu) {
    // 4 x 4 outputs per work-item from aligned float4 reads (the blocked direct kernels); the
    // tiled variant (--variant tiled) uses 248x4 tiles of 64 work-items, whose 62 + 2 float4s per
    // staged row are one copy trip per work-item. Measured on an H100, 8192^2 f32, device-resident
    // (docs/PERFORMANCE.md): Sobel 3x3 361 GPix/s direct vs 318 tiled, 5x5 356 vs 311, copy kernel
    // 369. NVIDIA runs async_work_group_copy as a blocking loop plus a barrier per call (its PTX), so
    // a tile pays one global-memory latency per staged row that direct reads overlap.
    tuning.variant = Variant::direct;
    tuning.vector_width = 4;
    tuning.tile_width = 248;
    tuning.tile_height = 4;
    tuning.group_width = 64;
  } else {
    // On CPUs __local is only an extra copy through the same caches.
    // One SIMD register of outputs per work-item (16 floats = AVX-512; fine on AVX2 too).
    tuning.variant = Variant::direct;
    tuning.tile_width = 64;
    tuning.tile_height = 8;
    tuning.group_width = 64;
    tuning.vector_width = 16;
  }
  if (const char* v = std::getenv("CLF_VARIANT"); v && *v) tuning.variant = parse_variant(v);
  if (const char* t = std::getenv("CLF_TILE"); t && *t) parse_tile(t, tuning, "CLF_TILE");
  return tuning;
}

std::string default_cache_dir() {
  if (const char* off = std::getenv("CLF_NO_DISK_CACHE"); off && *off && std::string(off) != "0")
    return {};
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg)
    base = xdg;
  else if (const char* home = std::getenv("HOME"); home && *home)
    base = fs::path(home) / ".cache";
  else
    return {};
  std::error_code ec;
  fs::create_directories(base / "clfilter", ec);
  if (ec) return {};
  return (base / "clfilter").string();
}

}  // namespace

std::string DeviceInfo::label() const {
  std::string kind = is_gpu ? "GPU" : is_cpu ? "CPU" : "other";
  return std::to_string(platform_index) + ":" + std::to_string(device_index) + " " + name + " (" +
         kind + ", " + platform_name + ", " + version + ", " +
         std::to_string(global_mem_bytes >> 20) + " MiB)";
}

Variant parse_variant(const std::string& text) {
  if (text == "tiled") return Variant::tiled;
  if (text == "direct") return Variant::direct;
  throw Error(ErrorKind::usage, "unknown variant '" + text + "' (expected tiled or direct)");
}

const char* variant_name(Variant variant) {
  return variant == Variant::tiled ? "tiled" : "direct";
}

void parse_tile(const std::string& text, Tuning& tuning, const std::string& what) {
  int w = 0, h = 0, g = 0, used = 0;
  const int n = std::sscanf(text.c_str(), "%dx%d%n/%d%n", &w, &h, &used, &g, &used);
  if (n < 2 || used != int(text.size()) || w < 4 || w % 4 != 0 || h < 1 || w > 4096 || h > 64 ||
      (n == 3 && (g < 1 || g > 1024)))
    throw Error(ErrorKind::usage, what + " expects WxH or WxH/G with W a multiple of 4 up to 4096, "
                                         "H <= 64 and G <= 1024, e.g. 248x4/64 (got '" + text + "')");
  tuning.tile_width = w;
  tuning.tile_height = h;
  tuning.group_width = n == 3 ? g : std::min(w / 4, 128);
}

std::vector<DeviceInfo> list_devices() {
  std::vector<DeviceInfo> infos;
  for (auto& f : all_devices()) infos.push_back(f.info);
  return infos;
}

std::shared_ptr<Device> Device::open(const std::string& selector_arg) {
  std::string selector = selector_arg;
  if (selector.empty())
    if (const char* env = std::getenv("CLF_DEVICE")) selector = env;
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
    throw Error(ErrorKind::device, "no OpenCL device matches '" + selector +
                                       "' (use gpu, cpu, P:D or part of a name); devices:" +
                                       device_list_text(found));
  return std::shared_ptr<Device>(new Device(pick->info, pick->platform, pick->device));
}

std::vector<std::shared_ptr<Device>> open_devices(const std::string& selectors) {
  std::vector<std::shared_ptr<Device>> devices;
  if (lower(selectors) == "all") {
    const auto infos = list_devices();
    const bool any_gpu = std::any_of(infos.begin(), infos.end(), [](const DeviceInfo& d) { return d.is_gpu; });
    for (const auto& d : infos)
      if (d.is_gpu || !any_gpu)
        devices.push_back(Device::open(std::to_string(d.platform_index) + ":" + std::to_string(d.device_index)));
    return devices;
  }
  std::istringstream list(selectors);
  for (std::string one; std::getline(list, one, ',');) devices.push_back(Device::open(one));
  if (devices.empty()) devices.push_back(Device::open(""));
  return devices;
}

Device::Device(const DeviceInfo& info, cl::Platform platform, cl::Device device)
    : info_(info), platform_(std::move(platform)), device_(std::move(device)) {
  cl_int err = CL_SUCCESS;
  context_ = cl::Context(device_, nullptr, nullptr, nullptr, &err);
  cl_check(err, "clCreateContext", info_.name);
  host_queue_ = cl::CommandQueue(context_, device_, 0, &err);
  cl_check(err, "clCreateCommandQueue", info_.name);
  tuning_ = default_tuning(info_);
  cache_dir_ = default_cache_dir();
  if (const char* limit = std::getenv("CLF_INJECT_ALLOC_LIMIT"); limit && *limit)
    alloc_limit_ = std::strtoull(limit, nullptr, 10);
}

cl::Program Device::try_disk_cache(const std::string& key, const std::string& options) {
  if (cache_dir_.empty()) return {};
  std::ifstream in(fs::path(cache_dir_) / (key + ".bin"), std::ios::binary);
  if (!in) return {};
  std::vector<unsigned char> binary((std::istreambuf_iterator<char>(in)), {});
  if (binary.empty()) return {};
  cl_int err = CL_SUCCESS;
  cl::Program::Binaries binaries{binary};
  std::vector<cl_int> status;
  cl::Program program(context_, {device_}, binaries, &status, &err);
  if (err != CL_SUCCESS || program.build({device_}, options.c_str()) != CL_SUCCESS)
    return {};  // stale or foreign binary: rebuild from source
  return program;
}

cl::Program Device::build(const std::string& name, const std::string& source,
                          const std::string& options) {
  const std::string full = std::string(clf_kernel_border_clh) + clf_kernel_stage_clh +
                           clf_kernel_correlate_clh + "\n#line 1 \"" + name + "\"\n" + source;
  const std::string key =
      hex(fnv1a(info_.platform_name + '\n' + info_.name + '\n' + info_.version + '\n' +
                info_.driver_version + '\n' + options + '\n' + full));
  std::lock_guard<std::mutex> lock(programs_mutex_);
  if (auto it = programs_.find(key); it != programs_.end()) return it->second;

  cl::Program program = try_disk_cache(key, options);
  if (!program()) {
    cl_int err = CL_SUCCESS;
    program = cl::Program(context_, full, false, &err);
    cl_check(err, "clCreateProgramWithSource", name);
    err = program.build({device_}, options.c_str());
    if (err != CL_SUCCESS) {
      std::string log = trim(program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_));
      throw Error(ErrorKind::build,
                  "building OpenCL program '" + name + "' for " + info_.name + " failed (" +
                      cl_error_name(err) + " from clBuildProgram, options '" + options +
                      "'):\n" + (log.empty() ? "(empty build log)" : log),
                  err);
    }
    ++programs_built_;
    if (!cache_dir_.empty()) {
      auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
      if (!binaries.empty() && !binaries[0].empty()) {
        const fs::path path = fs::path(cache_dir_) / (key + ".bin");
        const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
        std::ofstream out(tmp, std::ios::binary);
        out.write(reinterpret_cast<const char*>(binaries[0].data()), std::streamsize(binaries[0].size()));
        out.close();
        std::error_code ec;
        if (out) fs::rename(tmp, path, ec);
        if (!out || ec) fs::remove(tmp, ec);  // a cache that cannot be written is not an error
      }
    }
  }
  programs_.emplace(key, program);
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
  if (bytes == 0) bytes = 4;
  if (alloc_limit_ && in_use_ + bytes > alloc_limit_)
    throw Error(ErrorKind::device,
                std::string("CL_MEM_OBJECT_ALLOCATION_FAILURE from clCreateBuffer(") + what + ", " +
                    std::to_string(bytes) + " bytes) [injected: limit " +
                    std::to_string(alloc_limit_) + " bytes]",
                CL_MEM_OBJECT_ALLOCATION_FAILURE);
  if (bytes > max_alloc_bytes())
    throw Error(ErrorKind::device,
                std::string("CL_INVALID_BUFFER_SIZE from clCreateBuffer(") + what + "): " +
                    std::to_string(bytes) + " bytes is more than the device's max allocation " +
                    std::to_string(max_alloc_bytes()),
                CL_MEM_OBJECT_ALLOCATION_FAILURE);
  cl_int err = CL_SUCCESS;
  DeviceBuffer buffer;
  buffer.buffer_ = cl::Buffer(context_, flags, bytes, nullptr, &err);
  cl_check(err, "clCreateBuffer", what);
  buffer.bytes_ = bytes;
  buffer.device_ = this;
  const uint64_t now = in_use_ += bytes;
  uint64_t peak = peak_;
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return buffer;
}

Device::Pinned Device::pinned(size_t bytes, const char* what) {
  cl_int err = CL_SUCCESS;
  cl::Buffer buffer(context_, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, nullptr, &err);
  cl_check(err, "clCreateBuffer", what);
  cl::CommandQueue queue = host_queue_;  // the unmap may run after this Device is gone
  void* host = queue.enqueueMapBuffer(buffer, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, nullptr,
                                      nullptr, &err);
  cl_check(err, "clEnqueueMapBuffer", what);
  std::shared_ptr<void> owner(host, [buffer, queue](void* p) mutable {
    queue.enqueueUnmapMemObject(buffer, p);
    queue.finish();
  });
  return {owner, static_cast<std::byte*>(host)};
}

Image Device::pinned_image(int width, int height, int channels, PixelType type) {
  const uint64_t bytes = checked_image_bytes(width, height, channels, pixel_type_size(type), "image");
  Pinned memory;
  try {
    memory = pinned(bytes, "pinned image");
  } catch (const Error&) {
    return Image(width, height, channels, type);  // pinning is an optimisation, not a need
  }
  return Image(width, height, channels, type, memory.data, [owner = memory.owner] {}, true);
}

DeviceBuffer Device::upload(const void* data, size_t bytes, const char* what) {
  DeviceBuffer buffer = alloc(bytes, what, CL_MEM_READ_ONLY);
  cl_check(host_queue_.enqueueWriteBuffer(buffer.get(), CL_TRUE, 0, bytes, data), "clEnqueueWriteBuffer",
           what);
  return buffer;
}

}  // namespace clf

// clf::Device: one OpenCL device with its context, program cache, counted allocator and tuning.
#pragma once
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clf/cl.hpp"
#include "clf/image.hpp"

namespace clf {

struct DeviceInfo {
  int platform_index = 0, device_index = 0;
  std::string platform_name, name, vendor, version, driver_version;
  bool is_gpu = false, is_cpu = false;
  uint64_t global_mem_bytes = 0, max_alloc_bytes = 0, local_mem_bytes = 0;
  size_t max_work_group_size = 0;
  int compute_units = 0;
  std::string label() const;  // "0:0 NVIDIA H100 (GPU, NVIDIA CUDA)"
};

// Every device of every platform. Throws Error(device) when no platform is installed.
std::vector<DeviceInfo> list_devices();

// How kernels are laid out on this device: picked per device type, overridable.
enum class Variant { tiled, direct };
struct Tuning {
  Variant variant = Variant::direct;
  int tile_width = 248, tile_height = 4;  // tiled: outputs per work-group; direct x4: H rows per work-item
  int group_width = 64;                   // work-items per group (1-D along x)
  int vector_width = 1;  // direct: outputs per work-item; 4 = 4 x tile_height blocks (GPUs), 16 = one row (CPUs)
};
Variant parse_variant(const std::string& text);  // "tiled" | "direct"; throws Error(usage)
// "WxH" or "WxH/G" (CLF_TILE, --tile) into tuning's tile; throws Error(usage) naming `what`.
void parse_tile(const std::string& text, Tuning& tuning, const std::string& what);
const char* variant_name(Variant variant);

class Device;

// A device buffer whose bytes are counted against the device's budget while it lives.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer&& other) noexcept { *this = std::move(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { release(); }

  const cl::Buffer& get() const { return buffer_; }
  size_t bytes() const { return bytes_; }
  explicit operator bool() const { return bytes_ != 0; }
  void release();

 private:
  friend class Device;
  cl::Buffer buffer_;
  size_t bytes_ = 0;
  Device* device_ = nullptr;
};

class Device;
// Several devices for a batch: "all" (every GPU, else every device), or a comma-separated list of
// selectors as Device::open takes them ("0:0,0:1", "gpu,cpu"). The same device named twice gets
// two contexts. Throws Error(device) naming the selector that matches nothing.
std::vector<std::shared_ptr<Device>> open_devices(const std::string& selectors);

class Device {
 public:
  // selector: "" (CLF_DEVICE, else first GPU, else first CPU), "gpu", "cpu", "P:D" indices, or a
  // case-insensitive substring of the device or platform name. Throws Error(device) naming it.
  static std::shared_ptr<Device> open(const std::string& selector = {});

  const DeviceInfo& info() const { return info_; }
  const cl::Context& context() const { return context_; }
  const cl::Device& device() const { return device_; }

  // Builds `source` (after the shared kernel prelude: border, staging and correlation helpers)
  // with `options`; cached in memory and on disk. Throws Error(build) with the build log.
  cl::Program build(const std::string& name, const std::string& source, const std::string& options);
  cl::Kernel kernel(const cl::Program& program, const char* name);

  // Counted allocation. Throws Error(device) with CL_MEM_OBJECT_ALLOCATION_FAILURE when the
  // allocation would pass the injected limit (tests) or the driver refuses.
  DeviceBuffer alloc(size_t bytes, const char* what, cl_mem_flags flags = CL_MEM_READ_WRITE);
  DeviceBuffer upload(const void* data, size_t bytes, const char* what);  // read-only constant data
  // Page-locked host memory (CL_MEM_ALLOC_HOST_PTR, mapped): the device DMAs from and to it
  // while kernels run. Unmapped when the last copy of `owner` goes. Throws Error(device).
  struct Pinned {
    std::shared_ptr<void> owner;
    std::byte* data = nullptr;
  };
  Pinned pinned(size_t bytes, const char* what);
  // A host image in page-locked memory (CL_MEM_ALLOC_HOST_PTR, mapped): the streamer DMAs straight
  // from and to it instead of copying through its staging buffers. Contents start undefined.
  // Falls back to ordinary memory when the driver cannot pin that much.
  Image pinned_image(int width, int height, int channels, PixelType type);
  uint64_t bytes_in_use() const { return in_use_; }
  uint64_t peak_bytes_in_use() const { return peak_; }
  void reset_peak() { peak_ = uint64_t(in_use_); }
  // Fault injection for tests (also env CLF_INJECT_ALLOC_LIMIT): allocations that would bring the
  // bytes in use past `limit` fail as if the device were out of memory. 0 disables.
  void set_alloc_limit(uint64_t limit) { alloc_limit_ = limit; }
  // The largest single buffer: CL_DEVICE_MAX_MEM_ALLOC_SIZE, or the injected limit when lower.
  uint64_t max_alloc_bytes() const {
    return alloc_limit_ && alloc_limit_ < info_.max_alloc_bytes ? alloc_limit_ : info_.max_alloc_bytes;
  }

  const Tuning& tuning() const { return tuning_; }
  void set_tuning(const Tuning& tuning) { tuning_ = tuning; }

  // Disk cache directory ("" when disabled by CLF_NO_DISK_CACHE or unusable).
  const std::string& cache_dir() const { return cache_dir_; }
  size_t programs_built() const { return programs_built_; }  // compiled from source (not cached)

 private:
  Device(const DeviceInfo& info, cl::Platform platform, cl::Device device);
  friend class DeviceBuffer;
  void on_release(size_t bytes) { in_use_ -= bytes; }
  cl::Program try_disk_cache(const std::string& key, const std::string& options);

  DeviceInfo info_;
  cl::Platform platform_;
  cl::Device device_;
  cl::Context context_;
  cl::CommandQueue host_queue_;  // blocking host transfers: weights uploads, pinned maps
  Tuning tuning_;
  std::string cache_dir_;
  std::mutex programs_mutex_;
  std::map<std::string, cl::Program> programs_;
  size_t programs_built_ = 0;
  std::atomic<uint64_t> in_use_{0};
  std::atomic<uint64_t> peak_{0};
  uint64_t alloc_limit_ = 0;
};

}  // namespace clf

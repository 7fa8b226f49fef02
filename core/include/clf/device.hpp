// clf::Device: one OpenCL device with its context, program cache, counted allocator and tuning.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clf/cl.hpp"
#include "clf/image.hpp"

namespace clf {

namespace detail {
struct DeviceTesting;  // tests' fault injection (core/src/testing.hpp)
struct DeviceTwin;     // the tuner's devices with a tuning of their own (core/src/device_twin.hpp)
}  // namespace detail

struct DeviceInfo {
  int platform_index = 0, device_index = 0;
  std::string platform_name, name, vendor, version, driver_version;
  bool is_gpu = false, is_cpu = false;
  // Float arithmetic in this device's programs keeps denormals: the device reports CL_FP_DENORM
  // and no build option (DeviceOptions::build_options) flushes them.
  bool fp32_denormals = false;
  uint64_t global_mem_bytes = 0, max_alloc_bytes = 0, local_mem_bytes = 0;
  size_t max_work_group_size = 0;
  int compute_units = 0;
  std::string label() const;  // "0:0 NVIDIA H100 (GPU, NVIDIA CUDA)"
};

// Every device of every platform. Throws Error(device) when no platform is installed.
std::vector<DeviceInfo> list_devices();

// How kernels are laid out on this device: from the tuning database (core/tuning/devices.tuning)
// by the device's type, platform, vendor and name; overridable (Device::set_tuning). Plugins read
// it by name (Device::knob), not through this struct, whose layout is not part of the plugin ABI.
enum class Variant { tiled, direct };
struct Tuning {
  Variant variant = Variant::direct;
  // Tiled: outputs per work-group; direct with vector_width 4: tile_height rows per work-item.
  int tile_width = 248, tile_height = 4;
  int group_width = 64;  // work-items per group (1-D along x)
  // Direct: outputs per work-item; 4 = 4 x tile_height blocks (GPUs), 16 = one row (CPUs).
  int vector_width = 1;
  // Direct with vector_width 8/16: windows of at least vectors_min_taps taps take `vectors`
  // vectors of outputs per work-item, each weight read feeding them all.
  int vectors = 1, vectors_min_taps = 0;
  // That kernel, and the tiled single-pass separable kernel, take the radii of windows past this
  // radius as arguments, one program serving them all (-1: a program per radius).
  int radius_arg_above = -1;
  // The blocked and tiled 2-D kernels unroll the whole window: windows of a larger radius take
  // the one-output-per-work-item kernel.
  int blocked_max_radius = 12;
  // Rows per work-item of blocked and tiled 2-D windows by their row radius ry: those of the last
  // entry (in increasing min_radius) whose min_radius is at most ry, tile_height below the first.
  // Taller blocks read each window row for more outputs, and hold more sums in registers.
  struct BlockRows {
    int min_radius = 0, rows = 0;
  };
  std::vector<BlockRows> block_rows = {{4, 8}};
  // The same for a window's max or min over centred segments (morphology's erode and dilate on
  // the correlation's kernels): each window row's extrema serve more output rows. 0: block_rows.
  int extremum_block_rows = 16;
  // Separable filters too large for one 2-D pass, on blocked devices, of radius at most
  // separable_max_radius: one pass, separable_rows output rows per work-item, the row results
  // kept in registers (0: not used).
  int separable_rows = 0, separable_max_radius = 0;
  // The other separable filters past one 2-D pass: direct = two passes through a temp plane;
  // tiled = one pass whose row results stay in __local for the column pass, in tiles of
  // separable_tile_width columns, at most separable_tile_rows rows and separable_block_rows
  // output rows per work-item (narrowed and shortened until they fit local memory; two passes
  // where none does; never narrower than separable_min_tile_width columns). Each group marches
  // down separable_steps tiles, computing the halo's row results once for all of them (0: chosen
  // per launch from the radius and the device).
  Variant separable_variant = Variant::direct;
  int separable_tile_width = 64, separable_tile_rows = 128, separable_block_rows = 8;
  int separable_literal_tile_rows = 0;  // tile rows of programs with literal radii (0: as above)
  int separable_arg_block_rows = 0;     // rows per work-item with radii as arguments (0: as above)
  int separable_min_tile_width = 32;
  int separable_steps = 0;
  // Tiled single passes of literal radii, columns first (kernels/correlate/separable_columns.clh,
  // clf_separable_columns) where an entry applies: that of the last entry (in increasing
  // min_radius) whose min_radius is at most the larger radius. A group of width / 2 work-items
  // owns `width` columns (a power of 2 from 32 to 1024; the horizontal halo's included) and walks
  // down separable_columns_tile_rows rows, keeping each float2 column's window in registers; every
  // `rows` rows it sums their column pass into __local and the row pass reads it from there.
  // Empty, a radius below the first entry, or an entry of width 0: rows first, as above.
  struct SeparableColumns {
    int min_radius = 0, width = 0, rows = 0;
  };
  std::vector<SeparableColumns> separable_columns;
  int separable_columns_tile_rows = 16;
  // The blocked and tiled kernels of literal radii (2-D windows, separable single passes) take
  // their weights as kernel arguments by value where they fit (false: from a __constant buffer,
  // as the other kernels do).
  bool taps_by_value = true;
  // The shared staging helper (kernels/stage.clh, clf_stage_window: the tiled 2-D kernels and
  // plugins' own) copies windows with the work-items' float4 loads and a barrier (-D
  // CLF_STAGE_LOADS) rather than async_work_group_copy.
  bool stage_with_loads = false;
  // 2-D windows by FFT (clf::fft_pays): the direct taps that cost as much as one unit of FFT work
  // (clf::fft_cost) on this device; 0 = never chosen on its own (method=fft still forces it).
  double fft_tap_cost = 0;
  // Knobs by name, "plugin.knob" (a plugin's own) or "stream.knob" (the streamer's) -> its value
  // as text (Device::knob reads them).
  std::map<std::string, std::string> knobs;
};
const char* variant_name(Variant variant);
// Tuning's fields by name, each as text: whole numbers, 0 or 1, direct or tiled, numbers, and the
// tables as entries of whole numbers joined by ':' separated by spaces ("block_rows=4:8 9:16").
// A name with a dot ("gaussian.fast_min_sigma") is a plugin's knob, a number kept as given.
// Unknown names and values out of form throw Error(usage) naming the field.
std::vector<std::string> tuning_field_names();
std::string tuning_field(const Tuning& tuning, const std::string& name);
void set_tuning_field(Tuning& tuning, const std::string& name, const std::string& value);
// tuning_field, except that a plugin's knob nothing set gives `fallback`; tuning_number reads the
// value as a number (0 or 1 for a flag) and throws Error(usage) for text ("direct").
std::string tuning_value(const Tuning& tuning, const std::string& name,
                         const std::string& fallback = "");
double tuning_number(const Tuning& tuning, const std::string& name, double fallback);
// "NAME=VALUE,NAME=VALUE" over `tuning`, in order; tuning_text gives every field that way.
void apply_tuning_text(Tuning& tuning, const std::string& text);
std::string tuning_text(const Tuning& tuning);

// The kernel helpers a program uses, prepended to its source by Device::build (clf/contract.h
// always is): border = kernels/border.clh (clf_border_interpolate), stage = kernels/stage.clh
// (CLF_PLANE, clf_stage_window), correlate = kernels/correlate/*.clh (the correlation kernels and
// the blocked helpers; with stage, which its tiled kernels use).
enum class Helpers : unsigned { none = 0, border = 1, stage = 2, correlate = 4 | 2, all = 7 };
inline Helpers operator|(Helpers a, Helpers b) { return Helpers(unsigned(a) | unsigned(b)); }
inline bool uses(Helpers set, Helpers one) {
  return (unsigned(set) & unsigned(one)) == unsigned(one);
}

// What a Device is opened with. The library reads no environment: clf::read_environment
// (clf/environment.hpp) is where a program turns CLF_* variables into these.
struct DeviceOptions {
  std::string cache_dir;  // compiled programs kept on disk here; "" = in memory only
  // Fault injection for tests: allocations that would bring the bytes in use past this fail as if
  // the device were out of memory, and it caps the largest buffer. 0 = off.
  uint64_t alloc_limit = 0;
  // Appended to every program's OpenCL build options (kernel experiments: -D switches, or
  // -cl-nv-verbose); part of the program cache's key like the rest of the options.
  std::string build_options;
  // PoCL keeps the kernels it compiles in a cache of its own (POCL_KERNEL_CACHE unset or not 0),
  // keyed by source, options and group size, where a build from source costs tens of milliseconds.
  // Then its programs are not written to cache_dir: handing out a binary costs PoCL a second
  // compile of every kernel in the program, seconds where the run compiled one.
  bool pocl_kernel_cache = true;
};

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

// Several devices: "all" (every GPU, else every device), or a comma-separated list of selectors
// as Device::open takes them ("0:0,0:1", "gpu,cpu"). The same device named twice gets two
// contexts. Throws Error(device) naming the selector that matches nothing.
std::vector<std::shared_ptr<Device>> open_devices(const std::string& selectors,
                                                  const DeviceOptions& options = {});

class Device {
 public:
  // selector: "" (first GPU, else first CPU), "gpu", "cpu", "P:D" indices, or a case-insensitive
  // substring of the device or platform name. Throws Error(device) naming it.
  static std::shared_ptr<Device> open(const std::string& selector = {},
                                      const DeviceOptions& options = {});
  // A device in a context someone else made (pyopencl, an embedding tool): buffers made there
  // are clfilter's to read and write (DeviceImage::over). The context is retained. Throws
  // Error(usage) when `device` is not in `context`.
  static std::shared_ptr<Device> adopt(cl_context context, cl_device_id device,
                                       const DeviceOptions& options = {});
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const;
  const cl::Context& context() const;
  const cl::Device& device() const;
  // An in-order queue for blocking host transfers (weights, DeviceImage's read and write).
  const cl::CommandQueue& host_queue() const;

  // Builds `source` after clf/contract.h and the helpers it names (all by default) with `options`;
  // cached in memory and, with a cache_dir, on disk. Throws Error(build) with the build log.
  cl::Program build(const std::string& name, const std::string& source, const std::string& options,
                    Helpers helpers = Helpers::all);
  cl::Kernel kernel(const cl::Program& program, const char* name);

  // Counted allocation. Throws Error(device) with CL_MEM_OBJECT_ALLOCATION_FAILURE when the
  // allocation would pass DeviceOptions::alloc_limit or the driver refuses.
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
  uint64_t bytes_in_use() const;
  uint64_t peak_bytes_in_use() const;
  void reset_peak();
  // The largest single buffer: CL_DEVICE_MAX_MEM_ALLOC_SIZE, or the alloc_limit when lower.
  uint64_t max_alloc_bytes() const;

  // The tuning a filter made now takes. set_tuning may run while other threads read it: each
  // tuning set is kept, as it is, while the device lives (a setting, not a per-run call).
  const Tuning& tuning() const;
  void set_tuning(const Tuning& tuning);
  // Where the tuning came from: "database [gpu] [device H200]", and ", then set by the program"
  // after set_tuning.
  const std::string& tuning_source() const;
  // tuning_value and tuning_number of this device's tuning: a field ("vector_width", "variant")
  // or a plugin's knob ("gaussian.fast_min_sigma"). What plugins use: Tuning's layout may change
  // without breaking them.
  std::string knob(const std::string& name, const std::string& fallback = "") const;
  double knob_number(const std::string& name, double fallback) const;  // a number's (0/1: bool)
  // Frees the buffers kept for the next device images (see DeviceImage); a run or an image that
  // finds the device out of memory does so before it tries again.
  void release_recycled();

  const std::string& cache_dir() const;  // "" when programs are kept in memory only
  size_t programs_built() const;         // compiled from source (not cached)

 private:
  struct Impl;
  explicit Device(std::unique_ptr<Impl> impl);
  static std::shared_ptr<Device> make(const DeviceInfo& info, const cl::Device& device,
                                      const cl::Context& context, const DeviceOptions& options);
  friend class DeviceBuffer;
  friend class DeviceImage;
  friend struct detail::DeviceTesting;
  friend struct detail::DeviceTwin;
  // The buffers of device images gone, kept for the next image of their size (core/src/
  // buffer_pool.hpp): at most recycled_buffers of them and 1/recycled_share of the device's memory.
  static constexpr int recycled_buffers = 4, recycled_share = 16;
  DeviceBuffer reuse(size_t bytes, std::vector<cl::Event>& pending);
  void recycle(DeviceBuffer buffer, std::vector<cl::Event> pending);
  void on_release(size_t bytes);
  std::unique_ptr<Impl> impl_;
};

}  // namespace clf

// The plugin interface: parameter specs, validated parameters, the per-strip Stage a filter enqueues
// its kernels on, Filter (one configured instance) and FilterFactory (what a plugin exports).
#pragma once
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clf/cl.hpp"
#include "clf/device.hpp"

#define BOOST_DLL_USE_STD_FS
#include <boost/dll/alias.hpp>

namespace clf {

// ---- parameters -------------------------------------------------------------------------------
enum class ParamType { float_, int_, bool_, enum_, matrix, string };
const char* param_type_name(ParamType type);

struct ParamSpec {
  std::string name;
  ParamType type = ParamType::float_;
  std::string default_value;  // "" = no default (optional unless required)
  std::string help;
  double min = -std::numeric_limits<double>::infinity();  // inclusive range for float/int
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;  // enum values
};

// A matrix literal "1,2,1;2,4,2;1,2,1": rows separated by ';', values by ',' or spaces, each a
// finite number that fits a 32-bit float. Errors quote the offending text unless !quote (text read
// from a file the user named: its contents are not echoed).
struct Matrix {
  int rows = 0, cols = 0;
  std::vector<double> values;  // row-major
  double at(int r, int c) const { return values[size_t(r) * cols + c]; }
};
Matrix parse_matrix(const std::string& text, const std::string& what, bool quote = true);  // Error(usage)

// Parameters after validation against their specs: every value parsed, in range, defaulted.
class Params {
 public:
  bool given(const std::string& name) const;  // set by the user, not defaulted
  bool has(const std::string& name) const;    // given or defaulted
  double get_float(const std::string& name) const;
  int get_int(const std::string& name) const;
  bool get_bool(const std::string& name) const;
  const std::string& get_string(const std::string& name) const;  // enum and string values
  Matrix get_matrix(const std::string& name) const;
  const std::map<std::string, std::string>& raw() const { return values_; }

 private:
  friend Params validate_params(const std::string&, const std::vector<ParamSpec>&,
                                const std::map<std::string, std::string>&);
  std::string filter_;
  std::map<std::string, std::string> values_;
  std::map<std::string, bool> given_;
  std::map<std::string, ParamType> types_;
};

// Checks every given value against its spec (unknown names, bad numbers, NaN/inf, numbers past a
// 32-bit float or, for ints, a 32-bit int, ranges, enum choices, matrix syntax) and fills defaults.
// Errors name the filter and the parameter.
Params validate_params(const std::string& filter, const std::vector<ParamSpec>& specs,
                       const std::map<std::string, std::string>& given);

// "gaussian:sigma=2,border=wrap" -> name + key/value map. A comma-separated piece without '=' is
// part of the previous value, so matrix literals need no quoting: "convolve:kernel=1,2,1;2,4,2".
struct FilterSpec {
  std::string name;
  std::map<std::string, std::string> params;
};
FilterSpec parse_filter_spec(const std::string& text);

// ---- borders (OpenCV names and semantics) ------------------------------------------------------
enum class BorderMode { replicate, reflect, reflect101, wrap, constant };
struct Border {
  BorderMode mode = BorderMode::reflect101;
  float value = 0.f;  // for constant
};
const char* border_mode_name(BorderMode mode);
// The `border` and `border_value` specs every filter accepts, and reading them back.
std::vector<ParamSpec> border_param_specs();
Border border_from_params(const Params& params);
// OpenCV's borderInterpolate: maps p outside [0, len) into it; -1 for constant.
int border_interpolate(int p, int len, BorderMode mode);

// ---- what a filter sees per strip --------------------------------------------------------------
struct Halo {
  int x = 0, y = 0;  // pixels needed on each side
};

// Float planes on the device, one per channel: pixel (x, y) of channel c is at
// buffer[origin + c * plane_stride + y * pitch + x]. Halo pixels sit at negative or past-the-end
// coordinates, inside the same allocation.
struct Plane {
  cl::Buffer buffer;
  int origin = 0, pitch = 0, plane_stride = 0;
  int width = 0, rows = 0;
  // Sets kernel arguments (buffer, origin, pitch, plane_stride) starting at `first`; returns next.
  cl_uint set_args(cl::Kernel& kernel, cl_uint first) const;
};
// The same plane seen from another first row, with `rows` rows.
Plane plane_rows(const Plane& plane, int first_row, int rows);
// Columns a stage input keeps left and right of its rows for a halo of halo_x: the halo rounded up
// to whole float4s, so that windows starting that far left are 16-byte aligned (CLF_HALO4 in
// kernels/stage.clh). The streamer lays planes out so; Tiling::check_input relies on it.
inline int plane_margin(int halo_x) { return (halo_x + 3) / 4 * 4; }

class Stage {
 public:
  Device& device() const { return *device_; }
  const cl::CommandQueue& queue() const { return *queue_; }
  int channels() const { return channels_; }
  int width() const { return output_.width; }
  int rows() const { return output_.rows; }
  // Input is valid on [-halo.x, width + halo.x) x [-halo.y, rows + halo.y), borders already filled.
  const Plane& input() const { return input_; }
  const Plane& output() const { return output_; }
  // Scratch planes (Filter::temp_planes() of them): width x rows with the filter's vertical halo
  // above and below, valid on [0, width) x [-halo.y, rows + halo.y).
  const Plane& temp(int index) const;
  // Enqueues `kernel` on the stage's queue; errors name the kernel ("... from
  // clEnqueueNDRangeKernel(sobel_magnitude)"). local = cl::NullRange lets the driver choose.
  void launch(const cl::Kernel& kernel, const cl::NDRange& global, const cl::NDRange& local,
              const char* name) const;

  // Set by the streamer.
  Device* device_ = nullptr;
  const cl::CommandQueue* queue_ = nullptr;
  int channels_ = 0;
  Plane input_, output_;
  std::vector<Plane> temps_;
  std::vector<cl::Event>* events_ = nullptr;  // collects launches for profiling when non-null
  std::vector<std::string>* event_names_ = nullptr;
};

// ---- filters and factories ---------------------------------------------------------------------
class Filter {
 public:
  virtual ~Filter() = default;
  virtual Halo halo() const = 0;
  virtual Border border() const = 0;
  virtual int temp_planes() const { return 0; }
  virtual void enqueue(Stage& stage) = 0;
  // One line for -v: what was built ("gaussian sigma 2x2 radius 8, separable, tiled 256x8").
  virtual std::string describe() const = 0;
};

class FilterFactory {
 public:
  virtual ~FilterFactory() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<ParamSpec> params() const = 0;
  // `params` are already validated against params(); create() checks relations between them,
  // builds kernels and throws Error(usage) naming the filter and parameter for bad combinations.
  virtual std::unique_ptr<Filter> create(const Params& params, Device& device) const = 0;
};

// ---- the plugin entry ----------------------------------------------------------------------------
// Bumped whenever Filter, FilterFactory, Stage, Plane, Params, ParamSpec, Error or PluginManifest
// change layout or meaning. 2: the plugin boundary (Error's vtable in the core) and the ABI tag.
constexpr int plugin_abi_version = 2;

struct PluginManifest {
  std::vector<std::shared_ptr<FilterFactory>> factories;
};

// What else must match between the core and a plugin for C++ objects to cross: the C++ ABI, the
// standard library and its string ABI, and the sizes of the types that cross. Each side computes
// it from its own headers and compiler; the registry refuses a plugin whose tag differs.
inline const std::string& plugin_abi_tag() {
  static const std::string tag = [] {
    std::string t = "abi " + std::to_string(plugin_abi_version);
#if defined(__GXX_ABI_VERSION)
    t += "; c++abi itanium";
#else
    t += "; c++abi other";
#endif
#if defined(_LIBCPP_VERSION)
    t += "; libc++ " + std::to_string(_LIBCPP_ABI_VERSION);
#elif defined(__GLIBCXX__)
    t += "; libstdc++ cxx11-abi " + std::to_string(_GLIBCXX_USE_CXX11_ABI);
#else
    t += "; stdlib unknown";
#endif
    t += "; sizes";
    for (size_t size : {sizeof(ParamSpec), sizeof(Params), sizeof(Matrix), sizeof(Plane), sizeof(Stage),
                        sizeof(Halo), sizeof(Border), sizeof(PluginManifest), sizeof(Tuning),
                        sizeof(DeviceInfo), sizeof(std::string), sizeof(std::shared_ptr<int>)})
      t += " " + std::to_string(size);
    return t;
  }();
  return tag;
}

}  // namespace clf

// In exactly one source file of a plugin: CLF_PLUGIN(function) where `function` returns a
// clf::PluginManifest. Exports, through Boost.DLL aliases, the ABI version and tag (checked before
// anything else is touched) and the entry that lists the plugin's factories.
#define CLF_PLUGIN(entry_function)                                                           \
  namespace clf_plugin_exports {                                                             \
  static int abi_version_export() { return ::clf::plugin_abi_version; }                      \
  static const char* abi_tag_export() { return ::clf::plugin_abi_tag().c_str(); }            \
  static ::clf::PluginManifest entry_export() { return entry_function(); }                   \
  }                                                                                          \
  BOOST_DLL_ALIAS(clf_plugin_exports::abi_version_export, clf_plugin_abi_version)            \
  BOOST_DLL_ALIAS(clf_plugin_exports::abi_tag_export, clf_plugin_abi_tag)                    \
  BOOST_DLL_ALIAS(clf_plugin_exports::entry_export, clf_plugin_entry)

// Shared by the test files: one device and registry per process, random images, conversions to
// the reference's doubles, and comparisons that report where they failed.
#pragma once
#include <Imath/half.h>

#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <string>

#include "clf/clf.hpp"
#include "reference/reference.hpp"

namespace test {

inline std::shared_ptr<clf::Device> device() {
  static std::shared_ptr<clf::Device> d = [] {
    const clf::Environment env = clf::read_environment();  // CLF_DEVICE picks the device under test
    auto device = clf::Device::open(env.device, env.device_options());
    // method=fast's boxes from sigma 5 on every device, so that the tests reach them below a
    // device's own crossover (GPUs take the exact kernel up to sigma 24; a test checks that).
    clf::Tuning t = device->tuning();
    t.knobs["gaussian.fast_min_sigma"] = "5";
    device->set_tuning(t);
    return device;
  }();
  return d;
}

// A second device for the tests of several devices: another device of the same name and kind as
// device() where the machine has one (two GPUs of a host), else a second context on device()'s
// (each lane still has its own queues, buffers and built filters).
inline std::shared_ptr<clf::Device> second_device() {
  const clf::DeviceInfo& first = device()->info();
  std::string pick =
      std::to_string(first.platform_index) + ":" + std::to_string(first.device_index);
  for (const auto& d : clf::list_devices())
    if (d.name == first.name && d.is_gpu == first.is_gpu &&
        (d.platform_index != first.platform_index || d.device_index != first.device_index)) {
      pick = std::to_string(d.platform_index) + ":" + std::to_string(d.device_index);
      break;
    }
  auto second = clf::Device::open(pick, clf::read_environment().device_options());
  second->set_tuning(device()->tuning());  // device()'s test knobs too
  return second;
}

inline const clf::Registry& registry() {
  static clf::Registry r({CLF_TEST_PLUGIN_DIR}, false);
  return r;
}

// Deterministic random image; floats in [0, 1], integers over their full range.
inline clf::Image random_image(int w, int h, int c, clf::PixelType type, unsigned seed = 1) {
  clf::Image img(w, h, c, type);
  std::mt19937 rng(seed * 7919u + unsigned(w * 31 + h * 17 + c));
  std::uniform_real_distribution<float> unit(0.f, 1.f);
  const size_t n = size_t(w) * h * c;
  for (size_t i = 0; i < n; ++i) {
    const float u = unit(rng);
    switch (type) {
      case clf::PixelType::u8:
        img.pixels<uint8_t>()[i] = uint8_t(u * 255.f + 0.5f);
        break;
      case clf::PixelType::u16:
        img.pixels<uint16_t>()[i] = uint16_t(u * 65535.f + 0.5f);
        break;
      case clf::PixelType::f16:
        img.pixels<uint16_t>()[i] = Imath::half(u).bits();
        break;
      case clf::PixelType::f32:
        img.pixels<float>()[i] = u;
        break;
    }
  }
  return img;
}

inline double value(const clf::Image& img, size_t i) {
  switch (img.type()) {
    case clf::PixelType::u8:
      return img.pixels<uint8_t>()[i];
    case clf::PixelType::u16:
      return img.pixels<uint16_t>()[i];
    case clf::PixelType::f16: {
      Imath::half h;
      h.setBits(img.pixels<uint16_t>()[i]);
      return float(h);
    }
    case clf::PixelType::f32:
      return img.pixels<float>()[i];
  }
  return 0;
}

inline ref::Image to_ref(const clf::Image& img) {
  ref::Image r{img.width(), img.height(), img.channels(), {}};
  const size_t n = size_t(img.width()) * img.height() * img.channels();
  for (size_t i = 0; i < n; ++i) r.values.push_back(value(img, i));
  return r;
}

// The reference value as stored in `type`: OpenCV rounds half to even and saturates integers.
inline double stored(double v, clf::PixelType type) {
  switch (type) {
    case clf::PixelType::u8:
      return std::min(255.0, std::max(0.0, std::nearbyint(v)));
    case clf::PixelType::u16:
      return std::min(65535.0, std::max(0.0, std::nearbyint(v)));
    case clf::PixelType::f16:
      return float(Imath::half(float(v)));
    case clf::PixelType::f32:
      return v;
  }
  return v;
}

// Max difference allowed: 1e-5 for f32 (inputs in [0, 1]), half precision for f16. Integers are
// exact (OpenCV's rounding, half to even, and saturation): near_tie() names the one exception.
inline double tolerance(clf::PixelType type, double magnitude) {
  switch (type) {
    case clf::PixelType::u8:
    case clf::PixelType::u16:
      return 0.0;
    case clf::PixelType::f16:
      return 2e-3 * std::max(1.0, std::abs(magnitude));
    case clf::PixelType::f32:
      return 1e-5 * std::max(1.0, std::abs(magnitude));
  }
  return 0;
}

// How near a rounding tie (x.5) the float64 reference may lie and float32 arithmetic still put it
// on either side: 1e-4, or 16 float32 ulps of the largest partial sum, the kernel's sum of
// |weights| times the type's largest value (one ulp of 65535 is 0.004: a u16 blur is known to a
// few hundredths). Capped at a half: where float32 cannot tell (a 7x7 derivative of u16 data), any
// neighbour of the reference is accepted. Truncation in place of rounding still fails on every u8
// result and every u16 result of a smoothing kernel away from the ties.
inline double tie_band(clf::PixelType type, double kernel_l1) {
  const double largest = (type == clf::PixelType::u8 ? 255.0 : 65535.0) * std::max(1.0, kernel_l1);
  const double ulp = std::ldexp(1.0, std::ilogb(largest) - 23);
  return std::min(0.5, std::max(1e-4, 16 * ulp));
}
inline bool near_tie(double v, clf::PixelType type, double kernel_l1) {
  return std::abs(v - std::floor(v) - 0.5) <= tie_band(type, kernel_l1);
}

// Checks every sample of `got` against the reference; reports the first mismatch's position.
// `kernel_l1` (sum of |weights|) scales the float tolerance: a 7x7 derivative sums terms hundreds
// of times larger than its result, and float rounding grows with them.
inline void check_matches(const clf::Image& got, const ref::Image& want, double kernel_l1 = 1) {
  REQUIRE(got.width() == want.width);
  REQUIRE(got.height() == want.height);
  REQUIRE(got.channels() == want.channels);
  const size_t n = want.values.size();
  size_t bad = n;
  double worst = 0;
  for (size_t i = 0; i < n; ++i) {
    const double expect = stored(want.values[i], got.type());
    const double diff = std::abs(value(got, i) - expect);
    const bool integer = got.type() == clf::PixelType::u8 || got.type() == clf::PixelType::u16;
    const bool tie = integer && near_tie(want.values[i], got.type(), kernel_l1) && diff <= 1;
    if (!tie && !(diff <= tolerance(got.type(), std::max(std::abs(expect), kernel_l1))) && bad == n)
      bad = i;
    if (diff > worst) worst = diff;
  }
  INFO("worst difference " << worst);
  if (bad != n) {
    const size_t px = bad / want.channels;
    INFO("first mismatch at x=" << px % want.width << " y=" << px / want.width
                                << " c=" << bad % want.channels << ": got " << value(got, bad)
                                << ", want " << stored(want.values[bad], got.type()));
    CHECK(bad == n);
  } else {
    CHECK(bad == n);
  }
}

inline bool identical(const clf::Image& a, const clf::Image& b) {
  return a.width() == b.width() && a.height() == b.height() && a.channels() == b.channels() &&
         a.type() == b.type() && std::equal(a.data(), a.data() + a.byte_size(), b.data());
}

// Every kernel layout the filters can take: direct (the device's vector width), direct one output
// per work-item, direct 4-wide blocks, tiled (small tiles and blocks, so small images span
// several).
struct Layout {
  clf::Variant variant;
  int vector_width;
  const char* name;
  int separable_rows = -1;     // -1: the device's default
  bool columns_first = false;  // tiled: the separable single pass sums columns first
};
inline const std::vector<Layout>& layouts() {
  static const std::vector<Layout> all = {
      {clf::Variant::direct, 0, "direct"},
      {clf::Variant::direct, 1, "direct x1"},
      {clf::Variant::direct, 4, "direct 4x2 blocks", 0},
      {clf::Variant::direct, 4, "direct 4x2 blocks, separable in one pass of 3-row blocks", 3},
      {clf::Variant::tiled, 0, "tiled"},
      {clf::Variant::tiled, 0, "tiled, separable columns first", -1, true}};
  return all;
}

inline clf::Image run_chain(const std::vector<std::string>& specs, const clf::Image& in,
                            const clf::RunOptions& options = {}, clf::RunStats* stats = nullptr) {
  clf::Pipeline pipeline(device());
  for (const auto& s : specs) pipeline.add(registry(), s);
  clf::Image out;
  clf::RunStats st = pipeline.run(in, out, options);
  if (stats) *stats = st;
  return out;
}

// `specs` on `in` with RunOptions::poison (each strip's planes NaN before it), in one strip and,
// where strip_rows > 0, in strips of that many rows: the bits of the run without it.
inline void check_poisoned(const std::vector<std::string>& specs, const clf::Image& in,
                           int strip_rows) {
  const clf::Image want = run_chain(specs, in);
  clf::RunOptions poisoned;
  poisoned.poison = true;
  CHECK(identical(run_chain(specs, in, poisoned), want));
  if (strip_rows > 0) {
    poisoned.strip_rows = strip_rows;
    CHECK(identical(run_chain(specs, in, poisoned), want));
  }
}

// Sets the device's kernel variant (and for direct, the outputs per work-item; 0 keeps the
// device's default) for the scope of a test.
// A full-rank w x h kernel of small integers (exact in float), as convolve's kernel=; its values
// in `values`.
inline std::string full_rank_kernel(int w, int h, std::vector<double>& values) {
  std::string text;
  values.clear();
  for (int r = 0; r < h; ++r)
    for (int c = 0; c < w; ++c) {
      const int v = (r * 13 + c * 7 + r * c) % 11 - 5;
      values.push_back(v);
      text += (c ? "," : r ? ";" : "") + std::to_string(v);
    }
  return text;
}
inline double l1_norm(const std::vector<double>& values) {
  double l1 = 0;
  for (double v : values) l1 += std::abs(v);
  return l1;
}

// The shared device's tuning as it was, put back at the end of the scope (a test may change it).
struct TuningScope {
  clf::Tuning saved = device()->tuning();
  TuningScope() = default;
  TuningScope(const TuningScope&) = delete;
  TuningScope& operator=(const TuningScope&) = delete;
  ~TuningScope() { device()->set_tuning(saved); }
};

// A kernel layout for the scope (and the tuning put back after it).
struct VariantScope : TuningScope {
  explicit VariantScope(clf::Variant v, int vector_width = 0, int separable_rows = -1,
                        bool columns_first = false) {
    clf::Tuning t = saved;
    t.variant = v;
    if (vector_width > 0) t.vector_width = vector_width;
    if (separable_rows >= 0) {  // -1 keeps the device's default
      t.separable_rows = separable_rows;
      t.separable_max_radius = 8;
    }
    t.separable_variant = v;
    if (v == clf::Variant::tiled && separable_rows < 0) t.separable_rows = 0;  // tiled kernel only
    if (v == clf::Variant::tiled) {  // small tiles so that small test images span several
      t.tile_width = 32;
      t.tile_height = 4;
      t.group_width = 16;
      t.separable_tile_width = 32;  // 8 x 3 work-items, 4 rows each: 32 x 12 tiles
      t.separable_tile_rows = 12;
      t.separable_block_rows = 4;
      t.separable_steps = 3;            // groups march down 3 tiles, the ring wrapping round
      t.separable_min_tile_width = 32;  // the same tiles on every device
      t.separable_literal_tile_rows = 0;
      t.separable_arg_block_rows = 0;
      // Columns first: groups of 64 columns (32 float2 work-items, 2 ceil(r / 4) float4s the
      // halo) walking down 6 rows in batches of 2, both buffers taken; else rows first.
      t.separable_columns.clear();
      if (columns_first) t.separable_columns = {{0, 64, 2}};
      t.separable_columns_tile_rows = 6;
    } else if (vector_width == 4) {  // blocks of 4x2 outputs (4x8 from radius 4), 8 work-items
      t.tile_height = 2;             // per group, on every device
      t.block_rows = {{4, 8}};
      t.group_width = 8;
    }
    device()->set_tuning(t);
  }
};

}  // namespace test

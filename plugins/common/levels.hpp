// Whether a stage's input holds u8 levels only: whole values 0..255 in the image (the first filter
// of a chain on a u8 image: Stage::pixel_type) and in its halo (a constant border on a level).
// Methods that index by value take them: the median's 256-bin histogram, the bilateral's table of
// colour distances. sixteen_bit_keys: the same for 16-bit keys, u16 levels or half values (the
// median's two-level histogram).
#pragma once
#include <clf/border.hpp>
#include <clf/image.hpp>
#include <cmath>

namespace clf_plugins {

// Whether v is a whole number in 0..most.
inline bool is_level(float v, float most) { return v >= 0 && v <= most && v == std::floor(v); }

inline bool u8_levels(clf::PixelType type, const clf::Border& border) {
  return type == clf::PixelType::u8 &&
         (border.mode != clf::BorderMode::constant || is_level(border.value, 255));
}

// Whether v is a half-precision value (infinities and NaN are).
inline bool is_half_value(float v) {
  const float a = std::abs(v);
  if (!std::isfinite(a) || a == 0) return true;
  if (a > 65504) return false;
  int e = 0;
  std::frexp(a, &e);                                              // a = m 2^e, 0.5 <= m < 1
  const float steps = std::ldexp(a, a < 0x1p-14f ? 24 : 11 - e);  // in units of its half ulp
  return steps == std::floor(steps);
}

inline bool sixteen_bit_keys(clf::PixelType type, const clf::Border& border) {
  const bool constant = border.mode == clf::BorderMode::constant;
  if (type == clf::PixelType::u16) return !constant || is_level(border.value, 65535);
  return type == clf::PixelType::f16 && (!constant || is_half_value(border.value));
}

}  // namespace clf_plugins

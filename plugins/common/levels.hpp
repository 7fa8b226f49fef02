// Whether a stage's input holds u8 levels only: whole values 0..255 in the image (the first filter
// of a chain on a u8 image: Stage::pixel_type) and in its halo (a constant border on a level).
// Methods that index by value take them: the median's 256-bin histogram, the bilateral's table of
// colour distances.
#pragma once
#include <clf/border.hpp>
#include <clf/image.hpp>
#include <cmath>

namespace clf_plugins {

inline bool u8_levels(clf::PixelType type, const clf::Border& border) {
  const float v = border.value;
  return type == clf::PixelType::u8 &&
         (border.mode != clf::BorderMode::constant || (v >= 0 && v <= 255 && v == std::floor(v)));
}

}  // namespace clf_plugins

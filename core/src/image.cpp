// clf::Image storage and the checked size arithmetic every allocation of pixels goes through.
#include "clf/image.hpp"

#include <cstring>

#include "clf/error.hpp"

namespace clf {

size_t pixel_type_size(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return 1;
    case PixelType::u16:
      return 2;
    case PixelType::f16:
      return 2;
    case PixelType::f32:
      return 4;
  }
  return 0;
}

const char* pixel_type_name(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return "u8";
    case PixelType::u16:
      return "u16";
    case PixelType::f16:
      return "f16";
    case PixelType::f32:
      return "f32";
  }
  return "?";
}

std::optional<PixelType> pixel_type_named(const std::string& name) {
  for (PixelType t : {PixelType::u8, PixelType::u16, PixelType::f16, PixelType::f32})
    if (name == pixel_type_name(t)) return t;
  return std::nullopt;
}

uint64_t checked_image_bytes(int64_t width, int64_t height, int64_t channels, size_t type_size,
                             const std::string& what) {
  const std::string dims =
      std::to_string(width) + "x" + std::to_string(height) + "x" + std::to_string(channels);
  if (width <= 0 || height <= 0 || channels <= 0)
    throw Error(ErrorKind::usage, what + ": invalid image size " + dims);
  if (channels > max_image_channels)
    throw Error(ErrorKind::usage, what + ": " + std::to_string(channels) +
                                      " channels is more than clfilter supports (" +
                                      std::to_string(max_image_channels) + ")");
  uint64_t bytes = 0;
  if (__builtin_mul_overflow(uint64_t(width), uint64_t(height), &bytes) ||
      __builtin_mul_overflow(bytes, uint64_t(channels), &bytes) ||
      __builtin_mul_overflow(bytes, uint64_t(type_size), &bytes) || bytes > max_image_bytes ||
      width > INT32_MAX || height > INT32_MAX)
    throw Error(ErrorKind::usage, what + ": image of " + dims + " pixels is too large (limit " +
                                      std::to_string(max_image_bytes >> 30) + " GiB)");
  return bytes;
}

Image::Image(int width, int height, int channels, PixelType type)
    : width_(width),
      height_(height),
      channels_(channels),
      type_(type),
      bytes_(checked_image_bytes(width, height, channels, pixel_type_size(type), "image")),
      data_(new std::byte[bytes_](), std::default_delete<std::byte[]>()) {}

Image::Image(int width, int height, int channels, PixelType type, std::byte* storage,
             std::function<void()> release, bool pinned)
    : width_(width),
      height_(height),
      channels_(channels),
      type_(type),
      bytes_(checked_image_bytes(width, height, channels, pixel_type_size(type), "image")),
      pinned_(pinned),
      data_(storage, [release = std::move(release)](std::byte*) {
        if (release) release();
      }) {}

Image::Image(const Image& other) { *this = other; }

Image& Image::operator=(const Image& other) {
  if (this == &other) return *this;
  Image copy =
      other.empty() ? Image() : Image(other.width_, other.height_, other.channels_, other.type_);
  if (!other.empty()) std::memcpy(copy.data(), other.data(), other.bytes_);
  return *this = std::move(copy);
}

}  // namespace clf

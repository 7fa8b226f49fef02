// clf::Image: a host image, interleaved channels, one of the four pixel types clfilter streams.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace clf {

enum class PixelType { u8, u16, f16, f32 };

size_t pixel_type_size(PixelType type);
const char* pixel_type_name(PixelType type);

// Largest image clfilter accepts: refused before allocation rather than failing half-way.
constexpr uint64_t max_image_bytes = uint64_t(1) << 40;
constexpr int max_image_channels = 64;

class Image {
 public:
  Image() = default;
  // Zero-filled. Throws Error(usage) for non-positive or overflowing sizes.
  Image(int width, int height, int channels, PixelType type);

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  PixelType type() const { return type_; }
  bool empty() const { return data_.empty(); }
  size_t pixel_bytes() const { return size_t(channels_) * pixel_type_size(type_); }
  size_t row_bytes() const { return size_t(width_) * pixel_bytes(); }
  size_t byte_size() const { return data_.size(); }

  std::byte* data() { return data_.data(); }
  const std::byte* data() const { return data_.data(); }
  std::byte* row(int y) { return data_.data() + size_t(y) * row_bytes(); }
  const std::byte* row(int y) const { return data_.data() + size_t(y) * row_bytes(); }
  template <class T>
  T* pixels() { return reinterpret_cast<T*>(data_.data()); }
  template <class T>
  const T* pixels() const { return reinterpret_cast<const T*>(data_.data()); }

 private:
  int width_ = 0, height_ = 0, channels_ = 0;
  PixelType type_ = PixelType::f32;
  std::vector<std::byte> data_;
};

// Checked width * height * channels * bytes; throws Error(usage) naming `what` on overflow or when
// the result exceeds max_image_bytes.
uint64_t checked_image_bytes(int64_t width, int64_t height, int64_t channels, size_t type_size,
                             const std::string& what);

}  // namespace clf

// clf::Image: a host image, interleaved channels, one of the four pixel types clfilter streams.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "clf/contract.h"

namespace clf {

// Numbered as the kernels' CLF_PIXEL (clf/contract.h).
enum class PixelType {
  u8 = CLF_PIXEL_U8,
  u16 = CLF_PIXEL_U16,
  f16 = CLF_PIXEL_F16,
  f32 = CLF_PIXEL_F32
};

size_t pixel_type_size(PixelType type);
const char* pixel_type_name(PixelType type);
// The type of that name ("u8", "u16", "f16", "f32"); std::nullopt for any other.
std::optional<PixelType> pixel_type_named(const std::string& name);
// Those names, as choices are listed: "u8 u16 f16 f32".
constexpr const char* pixel_type_names = "u8 u16 f16 f32";

// Largest image clfilter accepts: refused before allocation rather than failing half-way.
constexpr uint64_t max_image_bytes = uint64_t(1) << 40;
constexpr int max_image_channels = 64;

class Image {
 public:
  Image() = default;
  // Zero-filled heap memory. Throws Error(usage) for non-positive or overflowing sizes.
  Image(int width, int height, int channels, PixelType type);
  // Pixels in memory someone else owns; `release` runs when the last copy of the storage goes.
  // `pinned` marks page-locked memory the device can DMA from and to directly (the streamer then
  // skips its staging copies). See Device::pinned_image.
  Image(int width, int height, int channels, PixelType type, std::byte* storage,
        std::function<void()> release, bool pinned);
  // Copies are deep (into heap memory); moves keep the storage.
  Image(const Image& other);
  Image& operator=(const Image& other);
  Image(Image&&) noexcept = default;
  Image& operator=(Image&&) noexcept = default;

  int width() const { return width_; }
  int height() const { return height_; }
  int channels() const { return channels_; }
  PixelType type() const { return type_; }
  bool empty() const { return bytes_ == 0; }
  bool pinned() const { return pinned_; }
  size_t pixel_bytes() const { return size_t(channels_) * pixel_type_size(type_); }
  size_t row_bytes() const { return size_t(width_) * pixel_bytes(); }
  size_t byte_size() const { return bytes_; }

  std::byte* data() { return data_.get(); }
  const std::byte* data() const { return data_.get(); }
  std::byte* row(int y) { return data() + size_t(y) * row_bytes(); }
  const std::byte* row(int y) const { return data() + size_t(y) * row_bytes(); }
  template <class T>
  T* pixels() {
    return reinterpret_cast<T*>(data());
  }
  template <class T>
  const T* pixels() const {
    return reinterpret_cast<const T*>(data());
  }

 private:
  int width_ = 0, height_ = 0, channels_ = 0;
  PixelType type_ = PixelType::f32;
  size_t bytes_ = 0;
  bool pinned_ = false;
  std::shared_ptr<std::byte> data_;
};

// Checked width * height * channels * bytes; throws Error(usage) naming `what` on overflow or when
// the result exceeds max_image_bytes.
uint64_t checked_image_bytes(int64_t width, int64_t height, int64_t channels, size_t type_size,
                             const std::string& what);

}  // namespace clf

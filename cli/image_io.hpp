// clf_io: image files <-> clf::Image through OpenImageIO, with writes that never leave a partial
// file.
#pragma once
#include <OpenImageIO/imageio.h>

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "clf/image.hpp"
#include "file_rows.hpp"

namespace clf {

struct ImageFile {
  Image image;
  OIIO::ImageSpec
      spec;  // the file's spec: data and display windows, channel names, metadata, formats
  // What the file holds that the output cannot keep, one sentence each naming the file: parts
  // (subimages) and MIP levels after the first, pixel types that lose precision in float.
  std::vector<std::string> warnings;
};

// Reads the first subimage. u8/u16/half/float files keep their type; other types are read as f32
// (and written back in their own type by write_image_file). Throws Error(io) naming the file.
// Refuses images past `max_bytes` of pixels (0: half this machine's memory) before allocating, and
// decodes the first rows before allocating the whole image, so a lying header costs an error, not
// memory. `allocate` makes the pixel storage (e.g. Device::pinned_image, so the streamer can DMA
// from it); default: heap. `cancel` is checked between chunks of rows: set, the read stops with
// Error(cancelled).
using ImageAllocator = std::function<Image(int width, int height, int channels, PixelType type)>;
ImageFile read_image_file(const std::string& path, const ImageAllocator& allocate = {},
                          uint64_t max_bytes = 0, const std::atomic<bool>* cancel = nullptr);

// OpenImageIO's type for pixels of that type.
OIIO::TypeDesc type_desc(PixelType type);

// Throws Error(io) when `path` cannot be written: unknown format, missing or read-only directory.
void check_writable(const std::string& path);

// Writes through a temporary file beside `path`, then renames it over `path`: a failure or
// `cancel` (checked while the pixels are written and before the rename) leaves no partial file and
// `path` untouched. `spec` (the input's) gives metadata, channel names, data and display windows,
// and the pixel format(s) the file is written in; `image` must have its size and channel count.
void write_image_file(const std::string& path, const Image& image, const OIIO::ImageSpec& spec,
                      const std::atomic<bool>* cancel = nullptr);

}  // namespace clf

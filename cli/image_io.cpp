// Image files through OpenImageIO: type mapping, size checks, atomic writes.
#include "image_io.hpp"

#include <unistd.h>

#include <OpenImageIO/imagebuf.h>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <vector>

#include "clf/error.hpp"
#include "jpeg_guard.hpp"

namespace fs = std::filesystem;

namespace clf {
namespace {

PixelType pixel_type_of(const OIIO::TypeDesc& format, bool mixed) {
  if (mixed) return PixelType::f32;
  if (format == OIIO::TypeDesc::UINT8) return PixelType::u8;
  if (format == OIIO::TypeDesc::UINT16) return PixelType::u16;
  if (format == OIIO::TypeDesc::HALF) return PixelType::f16;
  return PixelType::f32;
}

OIIO::TypeDesc type_desc(PixelType type) {
  switch (type) {
    case PixelType::u8: return OIIO::TypeDesc::UINT8;
    case PixelType::u16: return OIIO::TypeDesc::UINT16;
    case PixelType::f16: return OIIO::TypeDesc::HALF;
    case PixelType::f32: return OIIO::TypeDesc::FLOAT;
  }
  return OIIO::TypeDesc::FLOAT;
}

std::string clean(std::string message) {
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) message.pop_back();
  return message.empty() ? "unknown error" : message;
}

}  // namespace

// Formats that float holds exactly (every u8/i8/u16/i16/half value, and float itself).
bool exact_in_float(OIIO::TypeDesc t) {
  return t == OIIO::TypeDesc::UINT8 || t == OIIO::TypeDesc::INT8 || t == OIIO::TypeDesc::UINT16 ||
         t == OIIO::TypeDesc::INT16 || t == OIIO::TypeDesc::HALF || t == OIIO::TypeDesc::FLOAT;
}

void check_cancel(const std::atomic<bool>* cancel, const std::string& what) {
  if (cancel && cancel->load()) throw Error(ErrorKind::cancelled, "interrupted while " + what);
}

// What a file holds beyond its first subimage's top level, and formats float cannot hold exactly.
std::vector<std::string> lost_in_output(OIIO::ImageInput& in, const std::string& path) {
  std::vector<std::string> lost;
  const OIIO::ImageSpec spec = in.spec();
  int parts = 1;
  while (parts < 1024 && in.seek_subimage(parts, 0)) ++parts;
  if (parts > 1)
    lost.push_back("'" + path + "' has " + std::to_string(parts) +
                   " parts (subimages); only the first is filtered and written");
  if (in.seek_subimage(0, 1))
    lost.push_back("'" + path + "' has MIP levels; only the full-resolution level is filtered and written");
  in.geterror();  // a failed seek past the last part is not an error of the file
  in.seek_subimage(0, 0);
  std::vector<OIIO::TypeDesc> formats = spec.channelformats;
  if (formats.empty()) formats.push_back(spec.format);
  for (const auto& f : formats)
    if (!exact_in_float(f)) {
      lost.push_back("'" + path + "': " + std::string(f.c_str()) +
                     " pixels are filtered in 32-bit float (24-bit precision) and written back as " +
                     f.c_str());
      break;
    }
  return lost;
}

ImageFile read_image_file(const std::string& path, const ImageAllocator& allocate, uint64_t max_bytes,
                          const std::atomic<bool>* cancel) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, "cannot read '" + path + "': no such file");
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, "cannot read '" + path + "': it is a directory");
  const std::string jpeg_problem = jpeg_metadata_problem(path);
  if (!jpeg_problem.empty()) throw Error(ErrorKind::io, "cannot read '" + path + "': " + jpeg_problem);
  auto in = OIIO::ImageInput::open(path);
  if (!in)
    throw Error(ErrorKind::io, "cannot read '" + path + "': " + clean(OIIO::geterror()));
  ImageFile file;
  file.warnings = lost_in_output(*in, path);
  file.spec = in->spec();
  const auto& s = file.spec;
  const std::string what = "cannot read '" + path + "'";
  if (s.depth > 1)
    throw Error(ErrorKind::io, what + ": volume images (depth " + std::to_string(s.depth) + ") are not supported");
  const PixelType type = pixel_type_of(s.format, !s.channelformats.empty());
  // Refuse absurd headers before allocating anything: past the format limits, or past the caller's
  // limit (default: half this machine's memory, as input and output both live in memory).
  uint64_t bytes = 0;
  try {
    bytes = checked_image_bytes(s.width, s.height, s.nchannels, pixel_type_size(type), what);
  } catch (const Error& e) {
    throw Error(ErrorKind::io, e.what());
  }
  const uint64_t memory = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGE_SIZE));
  const uint64_t limit = max_bytes ? max_bytes : memory / 2;
  if (limit && bytes > limit)
    throw Error(ErrorKind::io, what + ": a " + std::to_string(s.width) + "x" + std::to_string(s.height) + "x" +
                                   std::to_string(s.nchannels) + " image needs " + std::to_string(bytes >> 20) +
                                   " MiB, more than " +
                                   (max_bytes ? "the limit of " + std::to_string(max_bytes >> 20) + " MiB"
                                              : "half this machine's " + std::to_string(memory >> 20) + " MiB") +
                                   "; the image is too large");

  // Rows [begin, end) into `dst` (tiled files: `begin` on a tile boundary). Some readers report
  // damage (a JPEG cut short: "Premature end of JPEG file") and still return true with the missing
  // part filled in; a filtered copy of a damaged image is not what the user asked for, so any
  // reported error refuses the file.
  const size_t row_bytes = size_t(bytes / uint64_t(s.height));
  auto read_rows = [&](int begin, int end, std::byte* dst) {
    const bool ok = s.tile_width > 0
                        ? in->read_tiles(0, 0, s.x, s.x + s.width, s.y + begin, s.y + end, s.z, s.z + 1, 0,
                                         s.nchannels, type_desc(type), dst)
                        : in->read_scanlines(0, 0, s.y + begin, s.y + end, s.z, 0, s.nchannels, type_desc(type), dst);
    const std::string problem = in->geterror();
    if (!ok || !problem.empty()) throw Error(ErrorKind::io, what + ": " + clean(problem));
  };
  // Decode the first rows (about 1 MiB, whole tiles) before committing memory to the whole image:
  // a header that lies (57 bytes claiming 11 GB of pixels) must cost an error, not 11 GB of pinned
  // or zero-filled memory.
  const int64_t tile_rows = s.tile_height > 0 ? s.tile_height : 1;
  const int64_t mib_rows = std::max<int64_t>(1, int64_t((size_t(1) << 20) / row_bytes));
  const int head_rows = int(std::min<int64_t>(s.height, (mib_rows + tile_rows - 1) / tile_rows * tile_rows));
  std::vector<std::byte> head(size_t(head_rows) * row_bytes);
  read_rows(0, head_rows, head.data());
  if (allocate) {
    file.image = allocate(s.width, s.height, s.nchannels, type);
  } else {
    // Not zero-filled: every byte is decoded into below.
    auto* storage = new std::byte[bytes];
    file.image = Image(s.width, s.height, s.nchannels, type, storage, [storage] { delete[] storage; }, false);
  }
  std::memcpy(file.image.data(), head.data(), head.size());
  // The rest in chunks of about 16 MiB (whole tiles), so an interrupt is seen within one of them.
  const int64_t chunk_rows =
      std::max<int64_t>(1, int64_t((size_t(16) << 20) / row_bytes) / tile_rows) * tile_rows;
  for (int64_t y = head_rows; y < s.height; y += chunk_rows) {
    check_cancel(cancel, "reading '" + path + "'");
    const int end = int(std::min<int64_t>(s.height, y + chunk_rows));
    read_rows(int(y), end, file.image.row(int(y)));
  }
  in->close();
  return file;
}

void check_writable(const std::string& path) {
  const fs::path p(path);
  if (!OIIO::ImageOutput::create(path))
    throw Error(ErrorKind::io, "cannot write '" + path + "': " + clean(OIIO::geterror()));
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::io, "cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::io, "cannot write '" + path + "': directory '" + dir.string() + "' is not writable");
  if (fs::is_directory(p, ec)) throw Error(ErrorKind::io, "cannot write '" + path + "': it is a directory");
}

void write_image_file(const std::string& path, const Image& image, const OIIO::ImageSpec& in_spec,
                      const std::atomic<bool>* cancel) {
  check_writable(path);
  const fs::path p(path);
  // Same directory (rename stays atomic) and same extension (OpenImageIO picks the format by it).
  const fs::path tmp = (p.has_parent_path() ? p.parent_path() : fs::path(".")) /
                       (".clfilter-" + std::to_string(::getpid()) + "-" + p.filename().string());
  auto out = OIIO::ImageOutput::create(tmp.string());
  if (!out) throw Error(ErrorKind::io, "cannot write '" + path + "': " + clean(OIIO::geterror()));
  // The input's spec as it is: data window inside the display window, channel names, metadata, and
  // its pixel format(s), into which OpenImageIO converts the image's own type as it writes.
  OIIO::ImageSpec spec = in_spec;
  if (spec.width != image.width() || spec.height != image.height() || spec.nchannels != image.channels())
    throw Error(ErrorKind::io, "cannot write '" + path + "': the image is " + std::to_string(image.width()) + "x" +
                                   std::to_string(image.height()) + "x" + std::to_string(image.channels()) +
                                   ", its spec says " + std::to_string(spec.width) + "x" +
                                   std::to_string(spec.height) + "x" + std::to_string(spec.nchannels));
  if (spec.format == OIIO::TypeDesc::UNKNOWN) spec.set_format(type_desc(image.type()));  // no file behind it
  auto fail = [&](const std::string& why) {
    out.reset();
    std::error_code ec;
    fs::remove(tmp, ec);
    return Error(ErrorKind::io, "cannot write '" + path + "': " + why);
  };
  if (!out->open(tmp.string(), spec)) throw fail(clean(out->geterror()));
  // The writer asks after each chunk whether to go on: an interrupt stops it there.
  auto stop = [](void* flag, float) { return flag && static_cast<const std::atomic<bool>*>(flag)->load(); };
  const bool wrote = out->write_image(type_desc(image.type()), image.data(), OIIO::AutoStride, OIIO::AutoStride,
                                      OIIO::AutoStride, stop, const_cast<std::atomic<bool>*>(cancel));
  if (!wrote && !(cancel && cancel->load())) throw fail(clean(out->geterror()));
  if (!out->close() && !(cancel && cancel->load())) throw fail(clean(out->geterror()));
  if (cancel && cancel->load()) {
    out.reset();
    std::error_code ec;
    fs::remove(tmp, ec);
    throw Error(ErrorKind::cancelled, "interrupted while writing '" + path + "'");
  }
  std::error_code ec;
  fs::rename(tmp, p, ec);
  if (ec) throw fail("rename from temporary file failed: " + ec.message());
}

}  // namespace clf

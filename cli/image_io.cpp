// Image files through OpenImageIO: type mapping, size checks, atomic writes.
#include "image_io.hpp"

#include <unistd.h>

#include <OpenImageIO/imagebuf.h>
#include <filesystem>

#include "clf/error.hpp"

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

ImageFile read_image_file(const std::string& path, const ImageAllocator& allocate) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, "cannot read '" + path + "': no such file");
  if (fs::is_directory(path, ec)) throw Error(ErrorKind::io, "cannot read '" + path + "': it is a directory");
  auto in = OIIO::ImageInput::open(path);
  if (!in)
    throw Error(ErrorKind::io, "cannot read '" + path + "': " + clean(OIIO::geterror()));
  ImageFile file;
  file.spec = in->spec();
  const auto& s = file.spec;
  if (s.depth > 1)
    throw Error(ErrorKind::io, "cannot read '" + path + "': volume images (depth " +
                                   std::to_string(s.depth) + ") are not supported");
  const PixelType type = pixel_type_of(s.format, !s.channelformats.empty());
  // Refuse absurd headers before allocating anything: past the format limits, or past this
  // machine's memory (input and output both live in memory).
  uint64_t bytes = 0;
  try {
    bytes = checked_image_bytes(s.width, s.height, s.nchannels, pixel_type_size(type), "cannot read '" + path + "'");
  } catch (const Error& e) {
    throw Error(ErrorKind::io, e.what());
  }
  const uint64_t memory = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGE_SIZE));
  if (memory && 2 * bytes > memory)
    throw Error(ErrorKind::io, "cannot read '" + path + "': a " + std::to_string(s.width) + "x" +
                                   std::to_string(s.height) + "x" + std::to_string(s.nchannels) +
                                   " image needs " + std::to_string(2 * bytes >> 20) +
                                   " MiB for input and output, more than this machine's " +
                                   std::to_string(memory >> 20) + " MiB; the image is too large");
  file.image = allocate ? allocate(s.width, s.height, s.nchannels, type)
                        : Image(s.width, s.height, s.nchannels, type);
  const bool ok = in->read_image(0, 0, 0, s.nchannels, type_desc(type), file.image.data());
  // Some readers report damage (a JPEG cut short: "Premature end of JPEG file") and still return
  // true with the missing part filled in; a filtered copy of a damaged image is not what the user
  // asked for, so any reported error refuses the file.
  const std::string problem = in->geterror();
  if (!ok || !problem.empty())
    throw Error(ErrorKind::io, "cannot read '" + path + "': " + clean(problem));
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
  OIIO::ImageSpec spec = in_spec;
  spec.width = spec.full_width = image.width();
  spec.height = spec.full_height = image.height();
  spec.x = spec.y = spec.full_x = spec.full_y = 0;
  spec.nchannels = image.channels();
  spec.set_format(type_desc(image.type()));
  spec.channelformats.clear();
  auto fail = [&](const std::string& why) {
    out.reset();
    std::error_code ec;
    fs::remove(tmp, ec);
    return Error(ErrorKind::io, "cannot write '" + path + "': " + why);
  };
  if (!out->open(tmp.string(), spec)) throw fail(clean(out->geterror()));
  if (!out->write_image(type_desc(image.type()), image.data())) throw fail(clean(out->geterror()));
  if (!out->close()) throw fail(clean(out->geterror()));
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

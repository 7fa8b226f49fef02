// Image files through OpenImageIO: type mapping, size checks, atomic writes.
#include "image_io.hpp"

#include <OpenImageIO/filesystem.h>
#include <OpenImageIO/imagebuf.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <vector>

#include "clf/error.hpp"
#include "exr_guard.hpp"
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

// OpenImageIO's message as one line: readers often give the cause, then the same cause wrapped
// ("Read error: hit end of file", "PNG read error: IDAT: Read error: hit end of file"); a line
// that another line contains is left out.
std::string clean(const std::string& message) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in(message);
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    if (!line.empty()) lines.push_back(line);
  }
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    bool within = false;
    for (size_t j = 0; j < lines.size() && !within; ++j)
      within =
          j != i && lines[j].find(lines[i]) != std::string::npos && (lines[j] != lines[i] || j < i);
    if (!within) out += (out.empty() ? "" : "; ") + lines[i];
  }
  return out.empty() ? "unknown error" : out;
}

}  // namespace

OIIO::TypeDesc type_desc(PixelType type) {
  switch (type) {
    case PixelType::u8:
      return OIIO::TypeDesc::UINT8;
    case PixelType::u16:
      return OIIO::TypeDesc::UINT16;
    case PixelType::f16:
      return OIIO::TypeDesc::HALF;
    case PixelType::f32:
      return OIIO::TypeDesc::FLOAT;
  }
  return OIIO::TypeDesc::FLOAT;
}

// The temporary file as OpenImageIO's writers see it: every write is checked here, so a writer
// that ignores a failed write (the PNG writer does) cannot hide a full disk. A failed write is
// reported to the writer as done, so no writer takes its own error path (libjpeg's calls exit());
// the sink checks failure() after each call and stops.
class CheckedFile final : public OIIO::Filesystem::IOProxy {
 public:
  explicit CheckedFile(const std::string& path) : IOProxy(path, Write) {
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
    if (fd_ < 0) failed_ = errno;
  }
  ~CheckedFile() override { close(); }
  const char* proxytype() const override { return "clfilter-checked"; }
  void close() override {
    if (fd_ < 0) return;
    flush_buffer();
    if (::close(fd_) != 0 && !failed_) failed_ = errno;
    fd_ = -1;
    m_mode = Closed;
  }
  bool seek(int64_t offset) override {
    flush_buffer();
    m_pos = offset;
    return true;
  }
  size_t read(void* buf, size_t size) override {
    const size_t got = pread(buf, size, m_pos);
    m_pos += int64_t(got);
    return got;
  }
  size_t write(const void* buf, size_t size) override {
    if (buffer_.size() + size > kBuffer) flush_buffer();
    if (size >= kBuffer) {
      put(buf, size, m_pos);
    } else {
      if (buffer_.empty()) buffer_at_ = m_pos;
      const auto* bytes = static_cast<const char*>(buf);
      buffer_.insert(buffer_.end(), bytes, bytes + size);
    }
    m_pos += int64_t(size);
    end_ = std::max(end_, m_pos);
    return size;
  }
  size_t pread(void* buf, size_t size, int64_t offset) override {
    flush_buffer();
    const ssize_t got = fd_ < 0 ? -1 : ::pread(fd_, buf, size, offset);
    return got < 0 ? 0 : size_t(got);
  }
  size_t pwrite(const void* buf, size_t size, int64_t offset) override {
    flush_buffer();
    put(buf, size, offset);
    end_ = std::max(end_, offset + int64_t(size));
    return size;
  }
  size_t size() const override { return size_t(end_); }
  // The first failure's cause ("No space left on device"), or empty.
  std::string failure() const { return failed_ ? std::strerror(failed_) : ""; }

 private:
  static constexpr size_t kBuffer = size_t(1) << 20;
  void put(const void* buf, size_t size, int64_t offset) {
    const auto* bytes = static_cast<const char*>(buf);
    while (size > 0 && !failed_) {
      const ssize_t n = ::pwrite(fd_, bytes, size, offset);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        failed_ = n < 0 ? errno : ENOSPC;
        break;
      }
      bytes += n;
      size -= size_t(n);
      offset += n;
    }
  }
  void flush_buffer() {
    if (buffer_.empty()) return;
    put(buffer_.data(), buffer_.size(), buffer_at_);
    buffer_.clear();
  }
  int fd_ = -1;
  int failed_ = 0;
  int64_t end_ = 0, buffer_at_ = 0;
  std::vector<char> buffer_;
};

// Formats that float holds exactly (every u8/i8/u16/i16/half value, and float itself).
bool exact_in_float(OIIO::TypeDesc t) {
  return t == OIIO::TypeDesc::UINT8 || t == OIIO::TypeDesc::INT8 || t == OIIO::TypeDesc::UINT16 ||
         t == OIIO::TypeDesc::INT16 || t == OIIO::TypeDesc::HALF || t == OIIO::TypeDesc::FLOAT;
}

// What a file holds beyond its first subimage's top level, and formats float cannot hold exactly.
std::vector<std::string> lost_in_output(OIIO::ImageInput& in, const std::string& path) {
  std::vector<std::string> lost;
  const OIIO::ImageSpec spec = in.spec();
  // Parts as the reader counts them ("oiio:subimages", set by the multi-image formats): seeking
  // through them would reopen each (for OpenEXR, its compressors too, slow on a hostile header).
  const int parts = spec.get_int_attribute("oiio:subimages", 1);
  if (parts > 1)
    lost.push_back("'" + path + "' has " + std::to_string(parts) +
                   " parts (subimages); only the first is filtered and written");
  // TIFF pages and GIF frames are not counted in the header: a second subimage is looked for
  // (one directory for TIFF, one frame for GIF), not counted, as counting reads every one. Only
  // there: other readers may not come back from a failed seek (WebP's cannot decode its first
  // image again).
  const std::string format = in.format_name();
  if (!spec.find_attribute("oiio:subimages") && (format == "tiff" || format == "gif")) {
    if (in.seek_subimage(1, 0))
      lost.push_back("'" + path +
                     "' has more than one subimage (pages or frames); only the first is filtered "
                     "and written");
    in.geterror();  // a failed seek past the last subimage is not an error of the file
    in.seek_subimage(0, 0);
  }
  if (spec.tile_width > 0) {  // MIP levels exist only in tiled files: only those are asked
    if (in.seek_subimage(0, 1))
      lost.push_back("'" + path +
                     "' has MIP levels; only the full-resolution level is filtered and written");
    in.geterror();  // a failed seek past the last level is not an error of the file
    in.seek_subimage(0, 0);
  }
  const std::string space = spec.get_string_attribute("jpeg:ColorSpace");
  if (space == "CMYK" || space == "YCCK")
    lost.push_back("'" + path + "' is a " + space +
                   " JPEG: it is read as RGB and written as RGB (the CMYK colour space and its "
                   "Adobe segment are not kept)");
  std::vector<OIIO::TypeDesc> formats = spec.channelformats;
  if (formats.empty()) formats.push_back(spec.format);
  for (const auto& f : formats)
    if (!exact_in_float(f)) {
      lost.push_back(
          "'" + path + "': " + std::string(f.c_str()) +
          " pixels are filtered in 32-bit float (24-bit precision) and written back as " +
          f.c_str());
      break;
    }
  return lost;
}

FileRowSource::FileRowSource(const std::string& path, const std::atomic<bool>* cancel)
    : path_(path), cancel_(cancel) {
  std::error_code ec;
  if (!fs::exists(path, ec)) throw Error(ErrorKind::io, "cannot read '" + path + "': no such file");
  if (fs::is_directory(path, ec))
    throw Error(ErrorKind::io, "cannot read '" + path + "': it is a directory");
  if (::access(path.c_str(), R_OK) != 0)  // OpenImageIO would say only "Could not open file"
    throw Error(ErrorKind::io, "cannot read '" + path + "': " + std::strerror(errno));
  for (const std::string& problem : {jpeg_metadata_problem(path), exr_header_problem(path)})
    if (!problem.empty()) throw Error(ErrorKind::io, "cannot read '" + path + "': " + problem);
  in_ = OIIO::ImageInput::open(path);
  if (!in_) throw Error(ErrorKind::io, "cannot read '" + path + "': " + clean(OIIO::geterror()));
  warnings_ = lost_in_output(*in_, path);
  spec_ = in_->spec();
  const std::string what = "cannot read '" + path + "'";
  if (spec_.depth > 1)
    throw Error(ErrorKind::io, what + ": volume images (depth " + std::to_string(spec_.depth) +
                                   ") are not supported");
  shape_ = {spec_.width, spec_.height, spec_.nchannels,
            pixel_type_of(spec_.format, !spec_.channelformats.empty())};
  try {  // sizes past the format limits, before any buffer is sized by them
    checked_image_bytes(shape_.width, shape_.height, shape_.channels, pixel_type_size(shape_.type),
                        what);
  } catch (const Error& e) {
    throw Error(ErrorKind::io, e.what());
  }
  rows_ = std::make_unique<ForwardRows>(path_, shape_.row_bytes(), shape_.height, spec_.tile_height,
                                        [this](int b, int e, std::byte* r) { decode(b, e, r); });
}

// Rows [begin, end) into `rows` (tiled files: `begin` on a tile boundary). Some readers report
// damage (a JPEG cut short: "Premature end of JPEG file") and still return true with the missing
// part filled in; a filtered copy of a damaged image is not what the user asked for, so any
// reported error refuses the file.
void FileRowSource::decode(int begin, int end, std::byte* rows) {
  check_cancel(cancel_, "reading '" + path_ + "'");
  const auto& s = spec_;
  const OIIO::TypeDesc type = type_desc(shape_.type);
  const bool ok =
      s.tile_width > 0
          ? in_->read_tiles(0, 0, s.x, s.x + s.width, s.y + begin, s.y + end, s.z, s.z + 1, 0,
                            s.nchannels, type, rows)
          : in_->read_scanlines(0, 0, s.y + begin, s.y + end, s.z, 0, s.nchannels, type, rows);
  const std::string problem = in_->geterror();
  if (!ok || !problem.empty())
    throw Error(ErrorKind::io, "cannot read '" + path_ + "': " + clean(problem));
}

ImageFile read_image_file(const std::string& path, const ImageAllocator& allocate,
                          uint64_t max_bytes, const std::atomic<bool>* cancel) {
  FileRowSource source(path, cancel);
  ImageFile file;
  file.spec = source.spec();
  file.warnings = source.warnings();
  const ImageShape shape = source.shape();
  const uint64_t bytes = uint64_t(shape.row_bytes()) * uint64_t(shape.height);
  // Refuse absurd headers before allocating the image: past the caller's limit (default: half this
  // machine's memory, as input and output both live in memory).
  const uint64_t memory = uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGE_SIZE));
  const uint64_t limit = max_bytes ? max_bytes : memory / 2;
  if (limit && bytes > limit)
    throw Error(ErrorKind::io,
                "cannot read '" + path + "': a " + std::to_string(shape.width) + "x" +
                    std::to_string(shape.height) + "x" + std::to_string(shape.channels) +
                    " image needs " + std::to_string(bytes >> 20) + " MiB, more than " +
                    (max_bytes ? "the limit of " + std::to_string(max_bytes >> 20) + " MiB"
                               : "half this machine's " + std::to_string(memory >> 20) + " MiB") +
                    "; the image is too large");
  // Decode the first rows (about 1 MiB) before committing memory to the whole image: a header that
  // lies (57 bytes claiming 11 GB of pixels) must cost an error, not 11 GB of pinned memory.
  const size_t row_bytes = shape.row_bytes();
  const int head_rows = int(std::min<int64_t>(
      shape.height, std::max<int64_t>(1, int64_t((size_t(1) << 20) / row_bytes))));
  std::vector<std::byte> head(size_t(head_rows) * row_bytes);
  source.read(0, head_rows, head.data());
  if (allocate) {
    file.image = allocate(shape.width, shape.height, shape.channels, shape.type);
  } else {
    // Not zero-filled: every byte is decoded into below.
    auto* storage = new std::byte[bytes];
    file.image = Image(
        shape.width, shape.height, shape.channels, shape.type, storage,
        [storage] { delete[] storage; }, false);
  }
  std::memcpy(file.image.data(), head.data(), head.size());
  const int chunk_rows = std::max(1, int((size_t(16) << 20) / row_bytes));
  for (int y = head_rows; y < shape.height; y += chunk_rows) {
    const int end = std::min(shape.height, y + chunk_rows);
    source.discard_before(y);
    source.read(y, end, file.image.row(y));
  }
  return file;
}

// The path first (a directory given as OUT is named so, not as an unknown format), then the
// format its extension names.
void check_writable(const std::string& path) {
  check_output_path(path);
  if (OIIO::ImageOutput::create(path)) return;
  std::string why = clean(OIIO::geterror());
  const std::string ext = fs::path(path).extension().string();
  if (why.find("could not find a format writer") != std::string::npos)
    why = (ext.empty() ? std::string("no extension to choose a format by")
                       : "no format OpenImageIO writes is named '" + ext + "'") +
          " (e.g. .exr, .png, .tif, .jpg)";
  throw Error(ErrorKind::io, "cannot write '" + path + "': " + why);
}

namespace {
// Channel counts three of OpenImageIO 2.4's writers take, refused before they open: given any
// other, the WebP writer's open fails and its destructor frees memory it never allocated (a crash),
// the DPX writer fails an assertion (an abort), either leaving its temporary file behind, and the
// HEIF writer opens for one channel, then reads past each row (AddressSanitizer) and fails at
// close.
std::string channels_problem(const std::string& format, int channels) {
  struct Limit {
    const char *format, *counts;
    std::vector<int> allowed;
  };
  static const Limit limits[] = {{"webp", "3 or 4 channels (RGB, RGBA)", {3, 4}},
                                 {"heif", "3 or 4 channels (RGB, RGBA)", {3, 4}},
                                 {"dpx", "1, 3 or 4 channels (grey, RGB, RGBA)", {1, 3, 4}}};
  for (const Limit& limit : limits)
    if (format == limit.format &&
        std::find(limit.allowed.begin(), limit.allowed.end(), channels) == limit.allowed.end())
      return "the " + format + " format holds " + limit.counts + "; this image has " +
             std::to_string(channels) + " (write .png, .tif or .exr)";
  return "";
}
}  // namespace

FileRowSink::FileRowSink(const std::string& path, const OIIO::ImageSpec& spec, PixelType type,
                         const std::atomic<bool>* cancel, bool format_asked)
    : path_(path),
      tmp_(path),
      cancel_(cancel),
      spec_(spec),
      type_(type),
      format_asked_(format_asked) {
  check_writable(path);
  out_ = OIIO::ImageOutput::create(tmp_.temp().string());
  if (!out_) throw Error(ErrorKind::io, "cannot write '" + path + "': " + clean(OIIO::geterror()));
  const std::string problem = channels_problem(out_->format_name(), spec_.nchannels);
  if (!problem.empty()) throw Error(ErrorKind::io, "cannot write '" + path + "': " + problem);
  // The input's spec as it is: data window inside the display window, channel names, metadata, and
  // its pixel format(s), into which OpenImageIO converts the image's own type as it writes.
  if (spec_.format == OIIO::TypeDesc::UNKNOWN)
    spec_.set_format(type_desc(type));  // no file behind it
  if (spec_.tile_width > 0 && spec_.tile_height > 0 && out_->supports("tiles")) {
    tile_rows_ = spec_.tile_height;
  } else {
    spec_.tile_width = spec_.tile_height = spec_.tile_depth = 0;
  }
  row_bytes_ = size_t(spec_.width) * size_t(spec_.nchannels) * pixel_type_size(type);
  // One level is written, whatever the input had: no MIP header that promises more, and no
  // digest of the input's pixels, which the filters changed.
  for (const char* name : {"textureformat", "openexr:levelmode", "openexr:roundingmode",
                           "oiio:AverageColor", "oiio:SHA-1"})
    spec_.erase_attribute(name);
  // Encoders that compress the image as a whole: OpenImageIO's writers for these formats gather
  // every scanline (libwebp, libheif, OpenJPEG, libjxl, the GIF and SGI writers) and encode at
  // close.
  static const char* const whole_image_formats[] = {"webp",   "heif", "jpeg2000",
                                                    "jpegxl", "gif",  "sgi"};
  const std::string format = out_->format_name();
  for (const char* name : whole_image_formats)
    if (format == name)
      whole_image_note_ =
          "'" + path + "': the " + format + " encoder holds the whole image (" +
          std::to_string((uint64_t(row_bytes_) * uint64_t(spec_.height)) >> 20) +
          " MiB) and encodes it when the last strip lands; memory is the image, not a few strips";
}

namespace {
std::string type_name(OIIO::TypeDesc t) {
  const PixelType named = pixel_type_of(t, false);
  return type_desc(named) == t ? pixel_type_name(named) : t.c_str();
}
}  // namespace

// The encoder opens with the first rows: a run that fails before them (a device error, a budget
// too small) leaves no temporary file, and no half-started encoder complaining as it closes.
// TIFF is written by path: OpenImageIO 2.4's TIFF writer over an IOProxy (its own IOFile too)
// writes a directory without ImageLength for some specs (a PNG's), and libtiff reports a failed
// write itself (the full-disk test holds it to that).
void FileRowSink::open() {
  if (out_->supports("ioproxy") && std::string(out_->format_name()) != "tiff") {
    file_ = std::make_unique<CheckedFile>(tmp_.temp().string());
    check_file();
    out_->set_ioproxy(file_.get());
  }
  if (!out_->open(tmp_.temp().string(), spec_)) fail(writer_error());
  check_file();
  written_spec_ = out_->spec();
  if (format_asked_ && written_spec_.format != spec_.format)
    fail("the " + std::string(out_->format_name()) + " format does not hold " +
         type_name(spec_.format) + " pixels (--type " + type_name(spec_.format) +
         "; it would write " + type_name(written_spec_.format) + ")");
  opened_ = true;
}

std::string FileRowSink::written() const {
  const OIIO::ImageSpec& s = written_spec_;
  std::string types;
  if (s.channelformats.empty()) {
    types = type_name(s.format);
  } else {  // per channel, each type once, in channel order
    for (const auto& f : s.channelformats)
      if (types.find(type_name(f)) == std::string::npos)
        types += (types.empty() ? "" : "/") + type_name(f);
  }
  return std::to_string(s.width) + "x" + std::to_string(s.height) + ", " +
         std::to_string(s.nchannels) + (s.nchannels == 1 ? " channel, " : " channels, ") + types;
}

namespace {
// Whether every value of type `from` is a value of type `to` (u8 in half, u16 in float; not u16
// in half, nor float in u16).
bool holds_every(OIIO::TypeDesc to, OIIO::TypeDesc from) {
  if (to == from) return true;
  const auto bits = [](OIIO::TypeDesc t) {  // an integer's magnitude bits, a float's mantissa's
    if (t.is_floating_point()) return t.size() == 2 ? 11 : t.size() == 4 ? 24 : 53;
    return int(t.size()) * 8 - (t.is_signed() ? 1 : 0);
  };
  if (from.is_floating_point()) return to.is_floating_point() && to.size() >= from.size();
  if (!to.is_floating_point() && from.is_signed() && !to.is_signed()) return false;
  return bits(to) >= bits(from);
}
}  // namespace

// A type the format cannot hold is converted by the encoder without a word (PNG takes floats as
// u8, JPEG u16 as u8): named here, once, with the type it became.
void FileRowSink::note_narrowed(const std::string& format) {
  const int channels = std::min(spec_.nchannels, written_spec_.nchannels);
  for (int c = 0; c < channels; ++c) {
    const OIIO::TypeDesc asked = spec_.channelformat(c), got = written_spec_.channelformat(c);
    if (holds_every(got, asked)) continue;
    std::string how = "with less range or precision";
    if (asked.is_floating_point() && got == OIIO::TypeDesc::UINT8)
      how = "0..1 as 0..255, values outside it clipped";
    else if (asked.is_floating_point() && got == OIIO::TypeDesc::UINT16)
      how = "0..1 as 0..65535, values outside it clipped";
    warnings_.push_back("'" + path_ + "': the " + format + " format does not hold " +
                        type_name(asked) + " pixels; they are written as " + type_name(got) + " (" +
                        how + ")");
    return;
  }
}

// What the encoder wrote, from the file's own header: some writers take channels or types they
// cannot store and drop or convert them silently (JPEG drops alpha, writes floats as u8).
void FileRowSink::note_written() {
  auto in = OIIO::ImageInput::open(tmp_.temp().string());
  if (!in) {
    OIIO::geterror();
    return;
  }
  const std::string format = in->format_name();
  written_spec_ = in->spec();
  const int kept = written_spec_.nchannels;
  note_narrowed(format);
  if (kept >= spec_.nchannels) return;
  std::string dropped;
  for (int c = kept; c < spec_.nchannels; ++c)
    dropped += (dropped.empty() ? "" : ", ") + std::string(spec_.channel_name(c));
  warnings_.push_back("'" + path_ + "': the " + format + " format holds " + std::to_string(kept) +
                      " of the image's " + std::to_string(spec_.nchannels) + " channels; " +
                      dropped + (spec_.nchannels - kept == 1 ? " is" : " are") + " not written");
}

// out_ closes, then file_, before tmp_ removes an uncommitted file.
FileRowSink::~FileRowSink() = default;

void FileRowSink::fail(const std::string& why) {
  out_.reset();
  file_.reset();
  tmp_.abandon();
  throw Error(ErrorKind::io, "cannot write '" + path_ + "': " + why);
}

// The writer's message, and the system's cause when the write failed at the disk: libtiff says
// "Write error at scanline 32" where errno says "File too large" or "No space left on device".
std::string FileRowSink::writer_error() {
  const int cause = errno;
  std::string message = clean(out_->geterror());
  if (cause == ENOSPC || cause == EFBIG || cause == EDQUOT || cause == EIO || cause == EROFS)
    message = std::string(std::strerror(cause)) + " (" + message + ")";
  return message;
}

void FileRowSink::check_file() {
  if (file_ && !file_->failure().empty()) fail(file_->failure());
}

// Writers without IOProxy support (SGI, ICO, RLA, FITS, HEIF: whole-image formats, so reading
// one back costs no more memory than writing it) write the file themselves, unchecked: it is read
// back whole before it may replace anything.
void FileRowSink::verify_unproxied() {
  auto in = OIIO::ImageInput::open(tmp_.temp().string());
  std::vector<float> pixels(in ? size_t(in->spec().image_pixels()) * size_t(in->spec().nchannels)
                               : 0);
  if (!in || !in->read_image(0, 0, 0, -1, OIIO::TypeDesc::FLOAT, pixels.data()) || in->has_error())
    fail("the written file does not read back whole (" +
         clean(in ? in->geterror() : OIIO::geterror()) + "); is the disk full?");
}

void FileRowSink::write(int begin, int end, const std::byte* rows) {
  if (begin != written_ || end < begin || end > spec_.height)
    throw Error(ErrorKind::usage, "writing '" + path_ + "': rows " + std::to_string(begin) +
                                      " to " + std::to_string(end) + " after " +
                                      std::to_string(written_) +
                                      " written (rows go in order, once)");
  if (!opened_) open();
  const OIIO::TypeDesc type = type_desc(type_);
  const int chunk = std::max(1, int((size_t(16) << 20) / row_bytes_));
  for (int y = begin; y < end;) {
    check_cancel(cancel_, "writing '" + path_ + "'");
    if (tile_rows_ == 0) {  // scanlines, in chunks so an interrupt is seen within one
      const int until = std::min(end, y + chunk);
      if (!out_->write_scanlines(spec_.y + y, spec_.y + until, spec_.z, type,
                                 rows + size_t(y - begin) * row_bytes_))
        fail(writer_error());
      check_file();
      y = until;
      continue;
    }
    // Tiles: rows gather into a band of whole tiles (the last band may be shorter).
    if (band_rows_ == 0) band_begin_ = y;
    const int band_height = std::min(tile_rows_, spec_.height - band_begin_);
    const int take = std::min(end - y, band_height - band_rows_);
    band_.resize(size_t(band_height) * row_bytes_);
    std::memcpy(band_.data() + size_t(band_rows_) * row_bytes_,
                rows + size_t(y - begin) * row_bytes_, size_t(take) * row_bytes_);
    band_rows_ += take;
    y += take;
    if (band_rows_ == band_height) flush_band();
  }
  written_ = end;
}

void FileRowSink::flush_band() {
  const auto& s = spec_;
  if (!out_->write_tiles(s.x, s.x + s.width, s.y + band_begin_, s.y + band_begin_ + band_rows_, s.z,
                         s.z + 1, type_desc(type_), band_.data()))
    fail(writer_error());
  check_file();
  band_rows_ = 0;
}

void FileRowSink::commit() {
  if (written_ != spec_.height)
    fail("only " + std::to_string(written_) + " of " + std::to_string(spec_.height) +
         " rows were written");
  const std::string format = out_->format_name();
  if (!out_->close()) fail(writer_error());
  out_.reset();
  if (file_) {
    file_->close();
    check_file();
    file_.reset();
  } else if (format != "tiff") {
    verify_unproxied();
  }
  note_written();
  tmp_.commit(cancel_);
}

void write_image_file(const std::string& path, const Image& image, const OIIO::ImageSpec& in_spec,
                      const std::atomic<bool>* cancel) {
  if (in_spec.width != image.width() || in_spec.height != image.height() ||
      in_spec.nchannels != image.channels())
    throw Error(ErrorKind::io,
                "cannot write '" + path + "': the image is " + std::to_string(image.width()) + "x" +
                    std::to_string(image.height()) + "x" + std::to_string(image.channels()) +
                    ", its spec says " + std::to_string(in_spec.width) + "x" +
                    std::to_string(in_spec.height) + "x" + std::to_string(in_spec.nchannels));
  FileRowSink sink(path, in_spec, image.type(), cancel);
  sink.write(0, image.height(), image.data());
  sink.commit();
}

}  // namespace clf

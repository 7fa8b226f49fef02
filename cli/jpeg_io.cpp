// JPEG files through libjpeg-turbo, as the streamer's RowSource and RowSink (see jpeg_io.hpp).
#include "jpeg_io.hpp"

// jpeglib.h uses FILE and size_t without including their headers: <cstdio> goes first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <csetjmp>
#include <cstring>
#include <filesystem>
#include <memory>
#include <vector>

#include "clf/error.hpp"
#include "row_files.hpp"

namespace clf {
namespace {

// libjpeg reports a fatal error through error_exit, which must not return: it jumps back to the
// setjmp in Codec::guard, which throws. Warnings (data cut short or corrupt: libjpeg fills the
// missing part in and goes on) are kept, and the file is refused after the call.
struct ErrorManager {
  jpeg_error_mgr mgr;
  std::jmp_buf jump;
  char error[JMSG_LENGTH_MAX] = "";
  char warning[JMSG_LENGTH_MAX] = "";
};

void on_error(j_common_ptr info) {
  auto* e = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, e->error);
  std::longjmp(e->jump, 1);
}

void on_message(j_common_ptr info, int level) {
  auto* e = reinterpret_cast<ErrorManager*>(info->err);
  if (level < 0 && e->warning[0] == '\0') (*info->err->format_message)(info, e->warning);
}

struct FileCloser {
  void operator()(FILE* f) const { std::fclose(f); }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

// The error manager of a libjpeg object. `guard(f)` runs f (libjpeg calls only, nothing with a
// destructor: a longjmp skips its frame) and throws Error(io) "<what>: <libjpeg's message>" on an
// error or a warning.
class Codec {
 public:
  explicit Codec(std::string what) : what_(std::move(what)) {
    jpeg_std_error(&errors_.mgr);
    errors_.mgr.error_exit = on_error;
    errors_.mgr.emit_message = on_message;
  }
  jpeg_error_mgr* errors() { return &errors_.mgr; }
  template <class F>
  void guard(F&& f) {
    if (setjmp(errors_.jump)) throw Error(ErrorKind::io, what_ + ": " + errors_.error);
    f();
    if (errors_.warning[0]) throw Error(ErrorKind::io, what_ + ": " + errors_.warning);
  }

 private:
  std::string what_;
  ErrorManager errors_;
};

// libjpeg's objects, destroyed with their owner (also when its constructor throws).
struct Decompress {
  explicit Decompress(jpeg_error_mgr* errors) {
    info.err = errors;
    jpeg_create_decompress(&info);
  }
  ~Decompress() { jpeg_destroy_decompress(&info); }
  jpeg_decompress_struct info{};
};
struct Compress {
  explicit Compress(jpeg_error_mgr* errors) {
    info.err = errors;
    jpeg_create_compress(&info);
  }
  ~Compress() { jpeg_destroy_compress(&info); }
  jpeg_compress_struct info{};
};

FilePtr open_file(const std::string& path, const char* mode) {
  return FilePtr(std::fopen(path.c_str(), mode));
}

// A segment worth carrying to the output: Exif, XMP, ICC, IPTC, comments and the like. Not JFIF
// (APP0, rewritten by the encoder), not Adobe's APP14 (its colour transform flag describes the
// input's encoding, not the YCbCr one written), not MPF (offsets into the input file).
bool carried(const jpeg_saved_marker_ptr m) {
  if (m->marker == JPEG_APP0 || m->marker == JPEG_APP0 + 14) return false;
  if (m->marker == JPEG_APP0 + 2 && m->data_length >= 4 && std::memcmp(m->data, "MPF", 4) == 0)
    return false;
  return true;
}

// What the encoder takes from the input.
// The quality (1..100) whose libjpeg-scaled standard luminance table is nearest the file's first
// quantization table, as ImageMagick and exiftool estimate it; 0 without one.
int quality_of(const jpeg_decompress_struct& info) {
  const JQUANT_TBL* table = info.quant_tbl_ptrs[0];
  if (!table) return 0;
  static const unsigned standard[DCTSIZE2] = {
      16, 11, 10, 16, 24,  40,  51,  61,  12, 12, 14, 19, 26,  58,  60,  55,
      14, 13, 16, 24, 40,  57,  69,  56,  14, 17, 22, 29, 51,  87,  80,  62,
      18, 22, 37, 56, 68,  109, 103, 77,  24, 35, 55, 64, 81,  104, 113, 92,
      49, 64, 78, 87, 103, 121, 120, 101, 72, 92, 95, 98, 112, 100, 103, 99};
  int best = 0;
  long best_error = -1;
  for (int q = 1; q <= 100; ++q) {
    const long scale = q < 50 ? 5000 / q : 200 - 2 * q;  // libjpeg's jpeg_quality_scaling
    long error = 0;
    // Both tables in natural (row-major) order, as libjpeg keeps them.
    for (int i = 0; i < DCTSIZE2; ++i) {
      const long want = std::clamp((long(standard[i]) * scale + 50) / 100, 1L, 255L);
      error += std::labs(want - long(table->quantval[i]));
    }
    if (best_error < 0 || error < best_error) best_error = error, best = q;
  }
  return best;
}

struct Header {
  int width = 0, height = 0, components = 0;
  int quality = 0;  // estimated from the quantization tables
  int h_sampling[3] = {1, 1, 1}, v_sampling[3] = {1, 1, 1};
  bool jfif = false;
  UINT8 density_unit = 0;
  UINT16 x_density = 1, y_density = 1;
  std::vector<std::pair<int, std::vector<JOCTET>>> segments;  // marker code, contents
};

class JpegInput final : public InputFile {
 public:
  JpegInput(const std::string& path, const std::atomic<bool>* cancel)
      : path_(path), cancel_(cancel), codec_("cannot read '" + path + "'"), jpeg_(codec_.errors()) {
    file_ = open_file(path, "rb");
    if (!file_) throw Error(ErrorKind::io, "cannot read '" + path + "': " + std::strerror(errno));
    codec_.guard([&] {
      jpeg_stdio_src(&info_, file_.get());
      jpeg_save_markers(&info_, JPEG_COM, 0xffff);
      for (int n = 1; n < 16; ++n) jpeg_save_markers(&info_, JPEG_APP0 + n, 0xffff);
      jpeg_read_header(&info_, TRUE);
    });
    check_memory();
    codec_.guard([&] {
      info_.out_color_space = info_.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
      jpeg_start_decompress(&info_);
    });
    shape_ = {int(info_.output_width), int(info_.output_height), info_.output_components,
              PixelType::u8};
    read_header();
    rows_ = std::make_unique<ForwardRows>(path, shape_.row_bytes(), shape_.height, 1,
                                          [this](int b, int e, std::byte* r) { decode(b, e, r); });
  }
  ImageShape shape() const override { return shape_; }
  void read(int begin, int end, std::byte* rows) override { rows_->read(begin, end, rows); }
  void discard_before(int row) override { rows_->discard_before(row); }
  std::unique_ptr<RowSource> second_reader() const override {
    return std::make_unique<JpegInput>(path_, cancel_);
  }
  const std::vector<std::string>& warnings() const override { return warnings_; }
  void prefetch(int rows) override { rows_->prefetch(rows); }
  const Header& header() const { return header_; }

 private:
  // A progressive JPEG is decoded from every coefficient of the image, held at once (2 bytes
  // each): refused past half this machine's memory, before libjpeg allocates it.
  void check_memory() {
    if (!jpeg_has_multiple_scans(&info_)) return;
    const uint64_t bytes =
        2 * uint64_t(info_.image_width) * info_.image_height * uint64_t(info_.num_components);
    const uint64_t memory =
        uint64_t(::sysconf(_SC_PHYS_PAGES)) * uint64_t(::sysconf(_SC_PAGE_SIZE));
    if (bytes > memory / 2)
      throw Error(ErrorKind::io, "cannot read '" + path_ + "': a progressive " +
                                     std::to_string(info_.image_width) + "x" +
                                     std::to_string(info_.image_height) + " JPEG is decoded from " +
                                     std::to_string(bytes >> 20) +
                                     " MiB of coefficients, more than half this machine's memory");
  }

  void read_header() {
    header_.width = shape_.width;
    header_.height = shape_.height;
    header_.components = shape_.channels;
    for (int c = 0; c < std::min(3, info_.num_components); ++c) {
      header_.h_sampling[c] = info_.comp_info[c].h_samp_factor;
      header_.v_sampling[c] = info_.comp_info[c].v_samp_factor;
    }
    header_.quality = quality_of(info_);
    header_.jfif = info_.saw_JFIF_marker;
    header_.density_unit = info_.density_unit;
    header_.x_density = info_.X_density;
    header_.y_density = info_.Y_density;
    for (jpeg_saved_marker_ptr m = info_.marker_list; m; m = m->next)
      if (carried(m))
        header_.segments.emplace_back(m->marker,
                                      std::vector<JOCTET>(m->data, m->data + m->data_length));
  }

  void decode(int begin, int end, std::byte* rows) {
    check_cancel(cancel_, "reading '" + path_ + "'");
    std::vector<JSAMPROW> pointers(size_t(end - begin));
    for (int y = begin; y < end; ++y)
      pointers[size_t(y - begin)] =
          reinterpret_cast<JSAMPROW>(rows + size_t(y - begin) * shape_.row_bytes());
    JSAMPARRAY at = pointers.data();
    codec_.guard([&] {
      // Rows before `begin` are skipped (a wrap border's second reader starts near the bottom).
      if (int(info_.output_scanline) < begin)
        jpeg_skip_scanlines(&info_, JDIMENSION(begin) - info_.output_scanline);
      if (int(info_.output_scanline) != begin) return;
      while (int(info_.output_scanline) < end) {
        const JDIMENSION done =
            jpeg_read_scanlines(&info_, at, JDIMENSION(end) - info_.output_scanline);
        if (done == 0) return;
        at += done;
      }
    });
    if (int(info_.output_scanline) < end)
      throw Error(ErrorKind::io, "cannot read '" + path_ + "': the decoder stopped at row " +
                                     std::to_string(info_.output_scanline));
  }

  std::string path_;
  const std::atomic<bool>* cancel_;
  Codec codec_;
  Decompress jpeg_;
  jpeg_decompress_struct& info_ = jpeg_.info;
  FilePtr file_;
  ImageShape shape_;
  Header header_;
  std::vector<std::string> warnings_;  // none: a JPEG's pixels and metadata all carry over
  std::unique_ptr<ForwardRows> rows_;
};

class JpegOutput final : public OutputFile {
 public:
  JpegOutput(const std::string& path, const Header& like, const OutputOptions& options,
             const std::atomic<bool>* cancel)
      : quality_(options.quality ? options.quality
                 : like.quality  ? like.quality
                                 : 98),
        tmp_(path),
        cancel_(cancel),
        height_(like.height),
        codec_("cannot write '" + path + "'"),
        jpeg_(codec_.errors()) {
    check_output_path(path);
    file_ = open_file(tmp_.temp().string(), "wb");
    if (!file_) throw Error(ErrorKind::io, "cannot write '" + path + "': " + std::strerror(errno));
    codec_.guard([&] { start(like); });
  }
  void write(int begin, int end, const std::byte* rows) override {
    if (begin != int(info_.next_scanline) || end < begin || end > height_)
      throw Error(ErrorKind::usage, "writing '" + tmp_.path() + "': rows " + std::to_string(begin) +
                                        " to " + std::to_string(end) + " after " +
                                        std::to_string(info_.next_scanline) +
                                        " written (rows go in order, once)");
    check_cancel(cancel_, "writing '" + tmp_.path() + "'");
    const size_t row_bytes = size_t(info_.image_width) * size_t(info_.input_components);
    std::vector<JSAMPROW> pointers(size_t(end - begin));
    for (int y = begin; y < end; ++y)
      pointers[size_t(y - begin)] =
          reinterpret_cast<JSAMPROW>(const_cast<std::byte*>(rows + size_t(y - begin) * row_bytes));
    guarded([&] { jpeg_write_scanlines(&info_, pointers.data(), JDIMENSION(end - begin)); });
  }

  void commit() override {
    if (int(info_.next_scanline) != height_)
      fail("only " + std::to_string(info_.next_scanline) + " of " + std::to_string(height_) +
           " rows were written");
    guarded([&] { jpeg_finish_compress(&info_); });
    FILE* f = file_.release();
    const bool write_failed = std::ferror(f) != 0;
    if (std::fclose(f) != 0 || write_failed) fail(std::strerror(errno));
    tmp_.commit(cancel_);
  }
  std::string whole_image_note() const override { return ""; }
  std::string written() const override {
    return std::to_string(info_.image_width) + "x" + std::to_string(info_.image_height) + ", " +
           std::to_string(info_.input_components) +
           (info_.input_components == 1 ? " channel" : " channels") + ", u8";
  }
  const std::vector<std::string>& warnings() const override { return warnings_; }

 private:
  void start(const Header& like) {
    jpeg_stdio_dest(&info_, file_.get());
    info_.image_width = JDIMENSION(like.width);
    info_.image_height = JDIMENSION(like.height);
    info_.input_components = like.components;
    info_.in_color_space = like.components == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_set_defaults(&info_);
    jpeg_set_quality(&info_, quality_, TRUE);
    if (like.components == 3)
      for (int c = 0; c < 3; ++c) {
        info_.comp_info[c].h_samp_factor = like.h_sampling[c];
        info_.comp_info[c].v_samp_factor = like.v_sampling[c];
      }
    if (like.jfif) {
      info_.density_unit = like.density_unit;
      info_.X_density = like.x_density;
      info_.Y_density = like.y_density;
    }
    jpeg_start_compress(&info_, TRUE);
    for (const auto& [marker, data] : like.segments)
      jpeg_write_marker(&info_, marker, data.data(), unsigned(data.size()));
  }

  // A failed fwrite becomes libjpeg's "Output file write error"; the cause is errno's.
  template <class F>
  void guarded(F&& f) {
    try {
      codec_.guard(std::forward<F>(f));
    } catch (...) {
      const int cause = errno;
      if (file_ && std::ferror(file_.get())) fail(std::strerror(cause));
      file_.reset();
      tmp_.abandon();
      throw;
    }
  }
  [[noreturn]] void fail(const std::string& why) {
    file_.reset();
    tmp_.abandon();
    throw Error(ErrorKind::io, "cannot write '" + tmp_.path() + "': " + why);
  }

  int quality_;
  TempOutput tmp_;  // removes an uncommitted file after file_ has closed it
  const std::atomic<bool>* cancel_;
  int height_;
  Codec codec_;
  Compress jpeg_;
  jpeg_compress_struct& info_ = jpeg_.info;
  FilePtr file_;
  std::vector<std::string> warnings_;  // none: a JPEG's channels all carry over
};

std::unique_ptr<InputFile> open_input(const std::string& path, const std::atomic<bool>* cancel) {
  return std::make_unique<JpegInput>(path, cancel);
}

std::unique_ptr<OutputFile> open_output(const std::string& path, const InputFile& like,
                                        const OutputOptions& options,
                                        const std::atomic<bool>* cancel) {
  if (!options.compression.empty())  // jpeg_direct() leaves --compression to OpenImageIO
    throw Error(ErrorKind::usage, "--compression goes through OpenImageIO: add --io oiio");
  if (options.type && *options.type != PixelType::u8) {  // as the OpenImageIO path refuses it
    const std::string type = pixel_type_name(*options.type);
    throw Error(ErrorKind::io, "cannot write '" + path + "': the jpeg format does not hold " +
                                   type + " pixels (--type " + type + "; it holds u8)");
  }
  return std::make_unique<JpegOutput>(path, dynamic_cast<const JpegInput&>(like).header(), options,
                                      cancel);
}

void check_writable(const std::string& path) {
  if (!names_jpeg(path))
    throw Error(ErrorKind::io, "cannot write '" + path + "': not a JPEG name (.jpg, .jpeg)");
  check_output_path(path);
}

}  // namespace

bool names_jpeg(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* e : {".jpg", ".jpeg", ".jpe", ".jfif", ".jfi", ".jif"})
    if (ext == e) return true;
  return false;
}

namespace {
// `f` of the header of `path` when it is a JPEG (by content) whose header libjpeg reads, else
// `otherwise`: a damaged file is the reader's to report, when it is opened as an input.
template <class T, class F>
T from_jpeg_header(const std::string& path, T otherwise, F&& f) {
  FilePtr file = open_file(path, "rb");
  unsigned char magic[3] = {};
  if (!file || std::fread(magic, 1, 3, file.get()) != 3 || magic[0] != 0xff || magic[1] != 0xd8 ||
      magic[2] != 0xff)
    return otherwise;
  std::rewind(file.get());
  Codec codec(path);
  Decompress jpeg(codec.errors());
  try {
    codec.guard([&] {
      jpeg_stdio_src(&jpeg.info, file.get());
      jpeg_read_header(&jpeg.info, TRUE);
    });
  } catch (const Error&) {
    return otherwise;
  }
  return f(jpeg.info);
}
}  // namespace

int estimated_jpeg_quality(const std::string& path) {
  return from_jpeg_header(path, 0,
                          [](const jpeg_decompress_struct& info) { return quality_of(info); });
}

bool jpeg_direct(const std::string& in, const std::string& out) {
  if (!names_jpeg(out)) return false;
  return from_jpeg_header(in, false, [](const jpeg_decompress_struct& info) {
    const J_COLOR_SPACE space = info.jpeg_color_space;
    return info.data_precision == 8 &&
           ((info.num_components == 1 && space == JCS_GRAYSCALE) ||
            (info.num_components == 3 && (space == JCS_YCbCr || space == JCS_RGB)));
  });
}

const IoModule& jpeg_io() {
  static const IoModule io{open_input, open_output, check_writable};
  return io;
}

}  // namespace clf

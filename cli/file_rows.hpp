// Image files as a RowSource and a RowSink through OpenImageIO: a strip of rows decoded or encoded
// at a time, so a file of any height streams through Pipeline::run in a few strips of memory.
#pragma once
#include <OpenImageIO/imageio.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "clf/rows.hpp"
#include "row_files.hpp"

namespace clf {

class CheckedFile;  // image_io.cpp: the temporary file, every write checked

// The first subimage of a file. u8/u16/half/float files keep their type; others are read as f32.
// The constructor checks what can be checked without pixels (missing file, JPEG metadata
// OpenImageIO would misread, volumes, sizes past the format limits) and throws Error(io) naming the
// file.
class FileRowSource final : public RowSource {
 public:
  FileRowSource(const std::string& path, const std::atomic<bool>* cancel = nullptr);
  ImageShape shape() const override { return shape_; }
  // Decodes forward only, keeping the rows from the discard point on for later calls. Throws
  // Error(io) on any error the reader reports (a damaged file is refused, not filled in), and
  // Error(cancelled) when `cancel` is set.
  void read(int begin, int end, std::byte* rows) override { rows_->read(begin, end, rows); }
  void discard_before(int row) override { rows_->discard_before(row); }
  void prefetch(int rows) { rows_->prefetch(rows); }
  // The same file opened again (for a wrap border's far rows).
  std::unique_ptr<RowSource> second_reader() const override {
    return std::make_unique<FileRowSource>(path_, cancel_);
  }
  const OIIO::ImageSpec& spec() const { return spec_; }
  const std::string& path() const { return path_; }
  // What the output cannot keep, one sentence each naming the file (see ImageFile::warnings).
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void decode(int begin, int end, std::byte* rows);
  std::string path_;
  const std::atomic<bool>* cancel_;
  std::unique_ptr<OIIO::ImageInput> in_;
  OIIO::ImageSpec spec_;
  ImageShape shape_;
  std::vector<std::string> warnings_;
  std::unique_ptr<ForwardRows> rows_;
};

// Writes a temporary file beside `path` (same extension, so the same format), renamed over `path`
// by commit(): until then `path` is untouched, and a sink destroyed without commit() removes its
// temporary file. `spec` (the input's) gives metadata, channel names, windows and the pixel
// format(s) to write, converted from `type`. Tiled specs are written a band of tiles at a time
// where the format has tiles, as scanlines where it has not.
class FileRowSink final : public RowSink {
 public:
  // `format_asked`: spec's pixel format was asked for (--type); a format that cannot hold it is
  // an error, where it is otherwise a warning.
  FileRowSink(const std::string& path, const OIIO::ImageSpec& spec, PixelType type,
              const std::atomic<bool>* cancel = nullptr, bool format_asked = false);
  ~FileRowSink() override;
  void write(int begin, int end, const std::byte* rows) override;
  void commit();
  // A sentence when the format's encoder needs the whole image before it writes (webp, heif, ...),
  // else empty.
  const std::string& whole_image_note() const { return whole_image_note_; }
  // The size, channels and pixel type(s) the encoder writes (JPEG: u8, whatever came in).
  std::string written() const;
  // Channels the format drops and types it narrows, named, one sentence each.
  const std::vector<std::string>& warnings() const { return warnings_; }

 private:
  void open();
  void flush_band();
  void check_file();
  std::string writer_error();
  void verify_unproxied();
  void note_written();
  void note_narrowed(const std::string& format);
  [[noreturn]] void fail(const std::string& why);
  std::string path_;
  TempOutput tmp_;  // declared before file_ and out_: they close before an uncommitted file goes
  const std::atomic<bool>* cancel_;
  std::unique_ptr<CheckedFile> file_;  // the temporary file, where the format takes an IOProxy
  std::unique_ptr<OIIO::ImageOutput> out_;
  OIIO::ImageSpec spec_;
  PixelType type_;
  size_t row_bytes_ = 0;
  int tile_rows_ = 0;            // > 0: tiled output, rows buffered into bands of this height
  std::vector<std::byte> band_;  // tiled: rows [band_begin_, band_begin_ + band_rows_)
  int band_begin_ = 0, band_rows_ = 0, written_ = 0;
  std::string whole_image_note_;
  OIIO::ImageSpec written_spec_;  // the encoder's spec, once open
  bool opened_ = false;
  bool format_asked_ = false;
  std::vector<std::string> warnings_;
};

}  // namespace clf

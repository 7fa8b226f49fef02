// clf_io_module: clf_io's file sources and sinks (OpenImageIO) behind the IoModule table, exported
// for clfilter to load at run time.
#define BOOST_DLL_USE_STD_FS
#include "io_module.hpp"

#include <dlfcn.h>
#include <png.h>

#include <boost/dll/alias.hpp>
#include <map>
#include <mutex>

#include "image_io.hpp"
#include "jpeg_io.hpp"

// libpng's own handler prints "libpng error: ..." to stderr before it jumps: OpenImageIO's PNG
// handler records the message and returns, and libpng then falls back to its default. This
// module's png_set_error_fn comes first in the lookup scope of the OpenImageIO it loads, so
// each handler OpenImageIO installs is wrapped: it runs, then jumps as the default would, without
// the print. OpenImageIO's message still reaches clfilter's error line.
namespace {
std::mutex png_handlers_mutex;
std::map<png_const_structrp, png_error_ptr>& png_handlers() {
  static std::map<png_const_structrp, png_error_ptr> handlers;
  return handlers;
}

void quiet_png_error(png_structp png, png_const_charp message) {
  png_error_ptr handler = nullptr;
  {
    std::lock_guard<std::mutex> lock(png_handlers_mutex);
    const auto it = png_handlers().find(png);
    if (it != png_handlers().end()) handler = it->second;
  }
  if (handler) handler(png, message);
  png_longjmp(png, 1);
}
}  // namespace

extern "C" __attribute__((visibility("default"))) void png_set_error_fn(png_structrp png,
                                                                        png_voidp error_ptr,
                                                                        png_error_ptr error_fn,
                                                                        png_error_ptr warning_fn) {
  using Setter = void (*)(png_structrp, png_voidp, png_error_ptr, png_error_ptr);
  static const auto real = [] {
    void* next = ::dlsym(RTLD_NEXT, "png_set_error_fn");
    if (!next)
      next = ::dlsym(::dlopen("libpng16.so.16", RTLD_LAZY | RTLD_NOLOAD), "png_set_error_fn");
    return reinterpret_cast<Setter>(next);
  }();
  if (!real) std::abort();  // no libpng behind OpenImageIO, yet it asks for a png handler
  if (error_fn) {
    std::lock_guard<std::mutex> lock(png_handlers_mutex);
    png_handlers()[png] = error_fn;
  }
  real(png, error_ptr, error_fn ? quiet_png_error : nullptr, warning_fn);
}

namespace {

class Input final : public clf::InputFile {
 public:
  Input(const std::string& path, const std::atomic<bool>* cancel) : file(path, cancel) {}
  clf::ImageShape shape() const override { return file.shape(); }
  void read(int begin, int end, std::byte* rows) override { file.read(begin, end, rows); }
  void discard_before(int row) override { file.discard_before(row); }
  std::unique_ptr<clf::RowSource> second_reader() const override { return file.second_reader(); }
  const std::vector<std::string>& warnings() const override { return file.warnings(); }
  void prefetch(int rows) override { file.prefetch(rows); }
  clf::FileRowSource file;
};

// The input's spec with the command line's encoding: --compression as OpenImageIO's "Compression"
// attribute (as oiiotool sets it); the quality as "jpeg:Q" for a JPEG (the input JPEG's own when
// not given, so both JPEG paths write alike) and as "CompressionQuality" for other formats.
OIIO::ImageSpec encoded_as(const std::string& path, const Input& like,
                           const clf::OutputOptions& options) {
  OIIO::ImageSpec spec = like.file.spec();
  if (options.type) {  // every channel in that type
    spec.channelformats.clear();
    spec.set_format(clf::type_desc(*options.type));
  }
  if (!options.compression.empty()) spec.attribute("Compression", options.compression);
  if (options.quality > 0) spec.attribute("CompressionQuality", options.quality);
  if (!clf::names_jpeg(path) || !options.compression.empty()) return spec;
  const int quality =
      options.quality ? options.quality : clf::estimated_jpeg_quality(like.file.path());
  if (quality > 0) spec.attribute("Compression", "jpeg:" + std::to_string(quality));
  return spec;
}

class Output final : public clf::OutputFile {
 public:
  Output(const std::string& path, const Input& like, const clf::OutputOptions& options,
         const std::atomic<bool>* cancel)
      : file(path, encoded_as(path, like, options), like.shape().type, cancel,
             options.type.has_value()) {}
  void write(int begin, int end, const std::byte* rows) override { file.write(begin, end, rows); }
  void commit() override { file.commit(); }
  std::string whole_image_note() const override { return file.whole_image_note(); }
  std::string written() const override { return file.written(); }
  const std::vector<std::string>& warnings() const override { return file.warnings(); }
  clf::FileRowSink file;
};

std::unique_ptr<clf::InputFile> open_input(const std::string& path,
                                           const std::atomic<bool>* cancel) {
  return std::make_unique<Input>(path, cancel);
}

std::unique_ptr<clf::OutputFile> open_output(const std::string& path, const clf::InputFile& like,
                                             const clf::OutputOptions& options,
                                             const std::atomic<bool>* cancel) {
  return std::make_unique<Output>(path, dynamic_cast<const Input&>(like), options, cancel);
}

const clf::IoModule* table() {
  static const clf::IoModule io{open_input, open_output, clf::check_writable};
  return &io;
}

}  // namespace

BOOST_DLL_ALIAS(table, clf_io_module)

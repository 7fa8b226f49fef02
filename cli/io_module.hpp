// The interface between clfilter and its image-file module (clf_io_module, loaded at run time).
// OpenImageIO and the libraries it pulls in spend a noticeable time in their initialisers before
// main would run; loaded after main has taken charge of signals, that time is interruptible like
// any other, and --help, --version and the listings start without it. No OpenImageIO type
// crosses: files are RowSource / RowSink objects.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "clf/rows.hpp"

namespace clf {

// An input file as the streamer's row source; an output file as its sink, renamed into place by
// commit() (until then the destination is untouched; destroyed uncommitted, nothing is left).
class InputFile : public RowSource {
 public:
  // What the output cannot keep, one sentence each naming the file.
  virtual const std::vector<std::string>& warnings() const = 0;
  // Decodes the first `rows` rows ahead of read() (e.g. while the device opens).
  virtual void prefetch(int rows) = 0;
};
class OutputFile : public RowSink {
 public:
  virtual void commit() = 0;
  // A sentence when the format's encoder holds the whole image (webp, heif, ...), else empty.
  virtual std::string whole_image_note() const = 0;
  // What the file holds, as the encoder writes it: "512x512, 3 channels, u8".
  virtual std::string written() const = 0;
  // What the format cannot keep of the image (channels it drops), one sentence each naming the
  // file.
  virtual const std::vector<std::string>& warnings() const = 0;
};

// How outputs are encoded, from the command line. quality 0: the input JPEG's own (estimated from
// its quantization tables), else 98 (OpenImageIO's default). compression: OpenImageIO's
// "Compression" attribute as oiiotool's --compression takes it ("zip", "piz", "lzw", "jpeg:85"),
// "" to keep the input's. type: the pixel type written, which the format must hold (else an error
// naming both), none to keep the input's as far as the format holds it (else a warning).
struct OutputOptions {
  int quality = 0;
  std::string compression;
  std::optional<PixelType> type;  // --type, for every channel
};

// Every function throws clf::Error naming the file (see file_rows.hpp for what each checks).
struct IoModule {
  std::unique_ptr<InputFile> (*open_input)(const std::string& path,
                                           const std::atomic<bool>* cancel);
  // Writes `path` with `like`'s metadata, windows, channel names and pixel format(s).
  std::unique_ptr<OutputFile> (*open_output)(const std::string& path, const InputFile& like,
                                             const OutputOptions& options,
                                             const std::atomic<bool>* cancel);
  void (*check_writable)(const std::string& path);
};

// Loads the module from <libdir>/clfilter beside libclfilter, once; it stays loaded until exit.
// Throws Error(io) naming the module's path when it cannot be loaded.
const IoModule& io_module();

}  // namespace clf

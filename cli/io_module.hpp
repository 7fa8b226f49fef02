// The interface between clfilter and its image-file module (clf_io_module, loaded at run time).
// OpenImageIO and the ~260 libraries it pulls in spend about 0.37 s in their initialisers before
// main would run; loaded after main has taken charge of signals, that time is interruptible like
// any other, and --help, --version and the listings start without it. No OpenImageIO type
// crosses: the file's spec travels as an opaque handle.
#pragma once
#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "clf/image.hpp"

namespace clf {

struct LoadedImage {
  Image image;
  std::shared_ptr<const void> spec;   // the file's OIIO::ImageSpec, for writing the output
  std::vector<std::string> warnings;  // what the output cannot keep (see ImageFile::warnings)
};

// Every function throws clf::Error naming the file (see image_io.hpp for what each does).
struct IoModule {
  LoadedImage (*read)(const std::string& path,
                      const std::function<Image(int, int, int, PixelType)>& allocate,
                      const std::atomic<bool>* cancel);
  void (*check_writable)(const std::string& path);
  void (*write)(const std::string& path, const Image& image, const void* spec,
                const std::atomic<bool>* cancel);
};

// Loads the module from <libdir>/clfilter beside libclfilter, once; it stays loaded until exit.
// Throws Error(io) naming the module's path when it cannot be loaded.
const IoModule& io_module();

}  // namespace clf

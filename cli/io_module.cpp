// clf_io_module: clf_io (OpenImageIO) behind the IoModule table, exported for clfilter to load.
#define BOOST_DLL_USE_STD_FS
#include <boost/dll/alias.hpp>

#include "image_io.hpp"
#include "io_module.hpp"

namespace {

clf::LoadedImage read(const std::string& path, const std::function<clf::Image(int, int, int, clf::PixelType)>& allocate,
                      const std::atomic<bool>* cancel) {
  clf::ImageFile file = clf::read_image_file(path, allocate, 0, cancel);
  return {std::move(file.image), std::make_shared<const OIIO::ImageSpec>(std::move(file.spec)),
          std::move(file.warnings)};
}

void write(const std::string& path, const clf::Image& image, const void* spec, const std::atomic<bool>* cancel) {
  clf::write_image_file(path, image, *static_cast<const OIIO::ImageSpec*>(spec), cancel);
}

const clf::IoModule* table() {
  static const clf::IoModule io{read, clf::check_writable, write};
  return &io;
}

}  // namespace

BOOST_DLL_ALIAS(table, clf_io_module)

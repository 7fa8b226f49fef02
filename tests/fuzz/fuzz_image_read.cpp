// libFuzzer target: image loading through the CLI's IO path (OpenImageIO + clfilter's size checks).
// The first byte picks the file extension, the rest is the file. Any input must end in an image or
// a clf::Error. Pixel data is capped at 64 MiB (ours and OpenImageIO's own limit): libFuzzer counts
// a large malloc as a finding even when the machine could hold it, and the memory policy past that
// cap is tested in test_hostile. (At 256 MiB, a mutated EXR header claiming a 256 MiB image took
// over 10 s to decode under AddressSanitizer and passed 2 GiB with its quarantine:
// corpus/image_read/regress_large_exr_under_asan.)
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>

#include "clf/error.hpp"
#include "image_io.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* const extensions[] = {".png", ".exr", ".jpg", ".tif", ".pgm", ".bmp", ".hdr", ".tga"};
  const std::string path = "/tmp/clf_fuzz_" + std::to_string(::getpid()) + extensions[data[0] % 8];
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(data + 1), std::streamsize(size - 1));
  }
  static const bool limited = OIIO::attribute("limits:imagesize_MB", 64);
  (void)limited;
  try {
    clf::read_image_file(path, {}, uint64_t(64) << 20);
  } catch (const clf::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}

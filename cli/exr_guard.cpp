// OpenEXR headers checked before OpenEXR reads them (see exr_guard.hpp).
#include "exr_guard.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <vector>

namespace clf {
namespace {

// Reads a NUL-terminated name of at most 255 bytes (OpenEXR's long-name limit); false past that
// or at the end of the file.
bool read_name(std::ifstream& in, std::string& name) {
  name.clear();
  for (int c = in.get(); c > 0; c = in.get()) {
    if (name.size() == 255) return false;
    name += char(c);
  }
  return in.good();
}

int32_t int32_at(const std::string& bytes, size_t at) {
  if (at + 4 > bytes.size()) return 0;
  const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + at);
  return int32_t(uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 |
                 uint32_t(b[3]) << 24);
}

// What the first part's header says of its pixels: the data window, the bytes one pixel takes
// over all channels (with their sampling), and the compression.
struct PixelClaim {
  int64_t width = 0, height = 0;
  double bytes_per_pixel = 0;
  int compression = -1;
};

void note(PixelClaim& claim, const std::string& name, const std::string& value) {
  if (name == "compression" && value.size() == 1) claim.compression = value[0];
  if (name == "dataWindow" && value.size() == 16) {
    claim.width = int64_t(int32_at(value, 8)) - int32_at(value, 0) + 1;
    claim.height = int64_t(int32_at(value, 12)) - int32_at(value, 4) + 1;
  }
  if (name == "channels") {  // name, pixel type, pLinear + 3 reserved, x and y sampling; "" ends
    claim.bytes_per_pixel = 0;
    for (size_t at = 0; at < value.size() && value[at] != 0;) {
      at = value.find('\0', at);
      if (at == std::string::npos || at + 17 > value.size()) return;
      const int32_t type = int32_at(value, at + 1), xs = int32_at(value, at + 9),
                    ys = int32_at(value, at + 13);
      if (xs > 0 && ys > 0) claim.bytes_per_pixel += (type == 1 ? 2.0 : 4.0) / (double(xs) * ys);
      at += 17;
    }
  }
}

// The most a compression can shrink pixels: none 1, RLE 64 (128 equal bytes in 2), ZIP and ZIPS
// deflate's 1032. Others (PIZ, PXR24, B44, DWA) have no bound checked here: 0.
double largest_ratio(int compression) {
  switch (compression) {
    case 0:
      return 1;
    case 1:
      return 64;
    case 2:
    case 3:
      return 1032;
    default:
      return 0;
  }
}

const char* compression_name(int compression) {
  static const char* const names[] = {"no", "rle", "zips", "zip"};
  return compression >= 0 && compression < 4 ? names[compression] : "its";
}

// Whole MiB of a byte count that may pass any integer type (a window of 2^32 x 2^32 pixels).
std::string mib(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.0f", std::floor(bytes / 1048576));
  return text;
}

// "" when the first part's pixels could fit the file under its compression.
std::string claim_problem(const PixelClaim& claim, std::streamoff file_size) {
  const double ratio = largest_ratio(claim.compression);
  if (ratio == 0 || claim.width <= 0 || claim.height <= 0 || claim.bytes_per_pixel <= 0) return "";
  const double raw = double(claim.width) * double(claim.height) * claim.bytes_per_pixel;
  if (raw <= ratio * double(file_size)) return "";
  return "its data window claims " + std::to_string(claim.width) + "x" +
         std::to_string(claim.height) + " pixels (" + mib(raw) + " MiB), more than " +
         compression_name(claim.compression) + " compression could hold in a file of " +
         std::to_string(file_size) + " bytes (at most " + std::to_string(int(ratio)) +
         ":1); the file is damaged or lies about its size";
}

}  // namespace

std::string exr_header_problem(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return "";
  const std::streamoff file_size = in.tellg();
  in.seekg(0);
  unsigned char head[8];
  if (!in.read(reinterpret_cast<char*>(head), 8)) return "";
  if (head[0] != 0x76 || head[1] != 0x2F || head[2] != 0x31 || head[3] != 0x01) return "";
  const bool multipart = (head[5] & 0x10) != 0;  // version flags, bit 12
  std::string name, type;
  PixelClaim claim;
  bool first_part = true;
  for (;;) {    // each part's header; a multi-part file ends its list with an empty header
    for (;;) {  // one header: attributes up to an empty name
      if (!read_name(in, name)) return "";  // OpenEXR reports a damaged header itself
      if (name.empty()) break;
      if (!read_name(in, type)) return "";
      unsigned char b[4];
      if (!in.read(reinterpret_cast<char*>(b), 4)) return "";
      const int32_t size = int32_t(uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 |
                                   uint32_t(b[3]) << 24);
      const std::streamoff at = in.tellg(), left = file_size - at;
      if (size < 0 || size > left)
        return "damaged OpenEXR header: attribute '" + name + "' (" + type + ") at byte " +
               std::to_string(at - 4) + " claims " + std::to_string(size) +
               " bytes where the file has " + std::to_string(left) + " left";
      if (first_part && size <= 4096 &&
          (name == "compression" || name == "dataWindow" || name == "channels")) {
        std::string value(size_t(size), '\0');
        if (!in.read(value.data(), size)) return "";
        note(claim, name, value);
      } else {
        in.seekg(size, std::ios::cur);
      }
    }
    if (first_part) {
      if (std::string problem = claim_problem(claim, file_size); !problem.empty()) return problem;
      first_part = false;
    }
    if (!multipart) return "";
    if (in.peek() == 0 || in.peek() == std::ifstream::traits_type::eof()) return "";
  }
}

}  // namespace clf

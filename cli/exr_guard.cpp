#include "exr_guard.hpp"

#include <cstdint>
#include <fstream>

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
      in.seekg(size, std::ios::cur);
    }
    if (!multipart) return "";
    if (in.peek() == 0 || in.peek() == std::ifstream::traits_type::eof()) return "";
  }
}

}  // namespace clf

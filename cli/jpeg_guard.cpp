#include "jpeg_guard.hpp"

#include <cstdint>
#include <cstring>
#include <fstream>
#include <vector>

namespace clf {
namespace {

constexpr uint8_t app1 = 0xE1, app2 = 0xE2, app13 = 0xED, sos = 0xDA, eoi = 0xD9;

// The identifiers OpenImageIO compares with strcmp: a segment that is a NUL-less prefix of one
// makes strcmp read past the segment.
const char* const identifiers[] = {"Exif", "http://ns.adobe.com/xap/1.0/", "ICC_PROFILE",
                                   "Photoshop 3.0"};

bool starts_with(const uint8_t* data, size_t size, const char* id) {
  const size_t n = std::strlen(id) + 1;  // with its NUL
  return size >= n && std::memcmp(data, id, n) == 0;
}

std::string segment_problem(uint8_t marker, const uint8_t* data, size_t size) {
  // OpenImageIO keeps APP1, APP2 and APP13 segments and reads them; libjpeg reads the rest safely.
  if (marker != app1 && marker != app2 && marker != app13) return "";
  if (size == 0)
    return "an empty " +
           std::string(marker == app1   ? "APP1"
                       : marker == app2 ? "APP2"
                                        : "APP13") +
           " segment";
  for (const char* id : identifiers)
    if (size < std::strlen(id) + 1 && std::memcmp(data, id, size) == 0 &&
        std::memchr(data, 0, size) == nullptr)
      return "a " + std::to_string(size) + "-byte segment cut short inside its identifier '" + id +
             "'";
  if (marker == app1 && starts_with(data, size, "Exif") && size < 6)
    return "an Exif segment of " + std::to_string(size) + " bytes (its header alone is 6)";
  if (marker == app2 && starts_with(data, size, "ICC_PROFILE") && size < 14)
    return "an ICC profile segment of " + std::to_string(size) + " bytes (its header alone is 14)";
  if (marker == app13 && starts_with(data, size, "Photoshop 3.0")) {
    // "Photoshop 3.0\0", "8BIM", resource type, 4 bytes, 16-bit block size, block.
    constexpr size_t header = 14 + 4 + 2 + 4 + 2;
    if (size < header)
      return "a Photoshop segment of " + std::to_string(size) + " bytes (its header alone is " +
             std::to_string(header) + ")";
    const size_t block = size_t(data[header - 2]) << 8 | data[header - 1];
    if (std::memcmp(data + 14, "8BIM", 4) == 0 && (data[18] << 8 | data[19]) == 0x0404 &&
        header + block > size)
      return "an IPTC block that claims " + std::to_string(block) +
             " bytes where its segment holds " + std::to_string(size - header);
  }
  return "";
}

std::string hex_marker(uint8_t marker) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0xFF") + digits[marker >> 4] + digits[marker & 15];
}

}  // namespace

std::string jpeg_metadata_problem(const std::string& path) {
  // Segment by segment up to the image data: at most 64 KiB in memory, whatever the file's size.
  std::ifstream in(path, std::ios::binary);
  auto byte = [&]() { return in.get(); };  // EOF as -1
  if (byte() != 0xFF || byte() != 0xD8) return "";
  std::vector<uint8_t> segment;
  for (;;) {
    // As libjpeg finds the next marker: past stray bytes (it only warns), fill bytes and FF 00.
    int marker = 0;
    std::streamoff offset = 0;
    while (marker == 0) {
      int c = byte();
      while (c >= 0 && c != 0xFF) c = byte();
      if (c < 0) return "";
      offset = std::streamoff(in.tellg()) - 1;
      do marker = byte();
      while (marker == 0xFF);
    }
    if (marker < 0 || marker == sos || marker == eoi) return "";
    if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) continue;  // no length field
    const int high = byte(), low = byte();
    if (low < 0) return "";
    const size_t length = size_t(high) << 8 | size_t(low);
    if (length < 2) return "";
    segment.resize(length - 2);
    in.read(reinterpret_cast<char*>(segment.data()), std::streamsize(segment.size()));
    if (size_t(in.gcount()) != segment.size())
      return "JPEG segment " + hex_marker(uint8_t(marker)) + " at byte " + std::to_string(offset) +
             " runs past the end of the file";
    const std::string problem = segment_problem(uint8_t(marker), segment.data(), segment.size());
    if (!problem.empty())
      return "damaged JPEG metadata at byte " + std::to_string(offset) + ": " + problem;
  }
}

}  // namespace clf

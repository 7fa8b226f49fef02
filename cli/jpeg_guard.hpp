// A check of a JPEG file's metadata segments before OpenImageIO parses them.
#pragma once
#include <string>

namespace clf {

// OpenImageIO 2.4 (Debian 12) trusts lengths inside some JPEG metadata segments: an IPTC block in
// APP13 that claims more bytes than its segment holds is copied past the segment's buffer, and
// short Exif / ICC / XMP / Photoshop segments are read past their ends. When `path` is a JPEG
// (by content, whatever its name), walks its segments up to the image data and returns what is
// wrong with the first such segment, or "" when none is (and for files that are not JPEG).
std::string jpeg_metadata_problem(const std::string& path);

}  // namespace clf

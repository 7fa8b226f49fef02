// A check of an OpenEXR file's headers before OpenImageIO (through OpenEXR) parses them.
#pragma once
#include <string>

namespace clf {

// OpenEXR (3.1, Debian 12) allocates what an attribute's size field claims before it reads the
// value: a 445-byte file whose string attribute claims 2 GB made `clfilter` and `oiiotool` take
// 2.1 GB and 7-14 s to say "Unexpected end of file". When `path` is an OpenEXR file (by content,
// whatever its name), walks its headers (every part of a multi-part file) without reading the
// values and returns what is wrong with the first attribute that claims more bytes than the file
// has left, or "" when none does (and for files that are not OpenEXR).
std::string exr_header_problem(const std::string& path);

}  // namespace clf

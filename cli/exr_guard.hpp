// A check of an OpenEXR file's headers before OpenImageIO (through OpenEXR) parses them.
#pragma once
#include <string>

namespace clf {

// OpenEXR (3.1, Debian 12) allocates what an attribute's size field claims before it reads the
// value: a 445-byte file whose string attribute claims 2 GB made `clfilter` and `oiiotool` take
// 2.1 GB and 7-14 s to say "Unexpected end of file". When `path` is an OpenEXR file (by content,
// whatever its name), walks its headers (every part of a multi-part file) without reading the
// values and returns what is wrong with the first attribute that claims more bytes than the file
// has left, or "" when none does (and for files that are not OpenEXR). It also refuses a first
// part whose data window needs more bytes than the file could hold under its compression (none,
// RLE, ZIP, ZIPS): OpenEXR decodes such a file without a word (a 16-pixel-wide file patched to
// claim 2,000,001 x 512 gave a 2 GB image of zeros and stray values). Wide images that fit their
// file stream like any other.
std::string exr_header_problem(const std::string& path);

}  // namespace clf

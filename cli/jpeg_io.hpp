// JPEG to JPEG without OpenImageIO: libjpeg-turbo decodes and encodes the rows strip by strip.
//
// Loading OpenImageIO and the libraries behind it costs clfilter more time per process than
// decoding, filtering and encoding a 4K photograph on a 2-core CPU (docs/PERFORMANCE.md). A job
// whose input is a JPEG (by content) and whose output is named .jpg/.jpeg/.jpe/.jfif/.jfi/.jif runs
// on libjpeg-turbo alone: the same decoder settings as OpenImageIO's reader (so the same pixels)
// and the same encoder settings as its writer (the quality: --quality, else the input's own,
// estimated from its quantization tables; the input's chroma subsampling and JFIF density;
// baseline, as a progressive encoder holds every coefficient of the image), so the output's pixels
// are what `--io oiio` writes.
// Metadata segments are copied as they are, byte for byte (Exif, XMP, ICC, IPTC, comments), where
// OpenImageIO re-encodes the ones it parses and drops the rest; the JFIF header is rewritten,
// and Adobe (APP14) and MPF segments, which describe the old encoding, are dropped.
#pragma once
#include <string>

#include "io_module.hpp"

namespace clf {

// True when `in` is a JPEG this path reads (8-bit samples, greyscale or YCbCr or RGB: not CMYK,
// not 12-bit) and `out` names a JPEG. Cheap: reads the header only; any header problem answers
// false, so the OpenImageIO path reports it as it does for other files.
bool jpeg_direct(const std::string& in, const std::string& out);

// The quality (1..100) a JPEG file was written at, estimated from its luminance quantization
// table against libjpeg's scaled standard table (exact for libjpeg's own encoders); 0 when `path`
// is not a JPEG.
int estimated_jpeg_quality(const std::string& path);

// True when `path` is named as a JPEG (.jpg, .jpeg, .jpe, .jfif, .jfi, .jif).
bool names_jpeg(const std::string& path);

// open_input / open_output / check_writable for JPEG files; open_output's `like` must come from
// this table's open_input. Errors name the file and carry libjpeg's message, and a reader warning
// (data cut short or corrupt) refuses the file, as on the OpenImageIO path.
const IoModule& jpeg_io();

}  // namespace clf

// Row sources and sinks: what Pipeline::run streams from and to when the image is not (all) in
// memory. A file is a source/sink pair (clfilter's clf_io); so is an in-memory Image.
#pragma once
#include <cstddef>
#include <memory>

#include "clf/image.hpp"

namespace clf {

struct ImageShape {
  int width = 0, height = 0, channels = 0;
  PixelType type = PixelType::f32;
  size_t row_bytes() const { return size_t(width) * size_t(channels) * pixel_type_size(type); }
};

// Rows of the input, handed out strip by strip. The streamer calls both functions from one
// thread (the one that called run). Before each strip it calls discard_before(row): no later read
// asks for rows before `row`, which never decreases. read() ranges may overlap earlier ones (rows
// neighbouring strips share: the chain's vertical halo, twice), so a sequential source (a file)
// keeps what it decoded from the last discard point on: memory of a strip plus its halo. Rows are
// interleaved pixels of shape().type, row_bytes() apart. Errors: throw clf::Error naming the thing.
class RowSource {
 public:
  virtual ~RowSource() = default;
  virtual ImageShape shape() const = 0;
  virtual void read(int begin, int end, std::byte* rows) = 0;
  virtual void discard_before(int /*row*/) {}
  // A second, independent reader of the same rows, or null if there is none. A chain whose
  // vertical borders all wrap needs, besides the strips in order, the first and the last rows of
  // the image (its halo of them): the streamer reads the last rows through a second reader before
  // the first strip, so memory stays a few strips. Without one such a chain runs as one strip.
  virtual std::unique_ptr<RowSource> second_reader() const { return nullptr; }
};

// Finished rows of the output: write() gets every row once, in order, from one thread of the
// streamer's (not the caller's), while later strips are on the device.
class RowSink {
 public:
  virtual ~RowSink() = default;
  virtual void write(int begin, int end, const std::byte* rows) = 0;
};

}  // namespace clf

// Cyclic rows (cyclic_rows.hpp).
#include "stream/cyclic_rows.hpp"

#include <algorithm>

#include "clf/error.hpp"

namespace clf::detail {

void CyclicRows::discard_before(int row) {
  source_.discard_before(std::clamp(row, 0, shape().height));
}

void CyclicRows::read(int begin, int end, std::byte* rows) {
  const int height = shape().height;
  if (begin < -halo_ || end > height + halo_)
    throw Error(ErrorKind::usage, "cyclic rows " + std::to_string(begin) + " to " +
                                      std::to_string(end) + " reach past the halo of " +
                                      std::to_string(halo_));
  if (second_) load_ends();
  auto copy = [&](int from, int to, const std::byte* kept) {
    if (to > from)
      std::copy(kept, kept + size_t(to - from) * row_bytes_,
                rows + size_t(from - begin) * row_bytes_);
  };
  copy(begin, std::min(end, 0), last_.data() + size_t(std::max(0, begin + halo_)) * row_bytes_);
  const int a = std::max(begin, 0), b = std::min(end, height);
  if (b > a) source_.read(a, b, rows + size_t(a - begin) * row_bytes_);
  const int c = std::max(begin, height);
  copy(c, end, first_.data() + size_t(std::max(0, c - height)) * row_bytes_);
}

void CyclicRows::load_ends() {
  const int height = shape().height;
  last_.resize(size_t(halo_) * row_bytes_);
  second_->discard_before(height - halo_);
  second_->read(height - halo_, height, last_.data());
  second_.reset();  // its file closed, its rows freed
  first_.resize(size_t(halo_) * row_bytes_);
  source_.read(0, halo_, first_.data());
}

}  // namespace clf::detail

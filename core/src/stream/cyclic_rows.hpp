// The rows of a cyclic plan (strip_plan.hpp): row r is row r mod height of `source`. The first and
// last `halo` rows are kept, the last read through a second reader of the source before the first
// strip; every other row comes from `source`, in order.
#pragma once
#include <memory>
#include <vector>

#include "clf/rows.hpp"

namespace clf::detail {

class CyclicRows final : public RowSource {
 public:
  CyclicRows(RowSource& source, std::unique_ptr<RowSource> second, int halo)
      : source_(source),
        second_(std::move(second)),
        halo_(halo),
        row_bytes_(source.shape().row_bytes()) {}
  ImageShape shape() const override { return source_.shape(); }
  void discard_before(int row) override;
  void read(int begin, int end, std::byte* rows) override;

 private:
  void load_ends();
  RowSource& source_;
  std::unique_ptr<RowSource> second_;
  const int halo_;
  const size_t row_bytes_;
  std::vector<std::byte> first_, last_;
};

}  // namespace clf::detail

// Selection networks for a tile of rank-filter windows: MX x MY neighbouring outputs, each the
// Q-th smallest of its K x K window, computed from one (MX + K - 1) x (MY + K - 1) window of loads
// with the work the windows share done once.
//
// The plan (after Adams, "Fast median filters using separable sorting networks", 2021):
//   1. each input column's rows that every output row's window holds are sorted once;
//   2. either (a) for each output row, each column's own rows are merged in (K sorted values a
//      column) and the columns every output's window holds are merged once, or (b) those columns'
//      sorted rows are merged once for the whole tile, and for each output row the other
//      columns get their own rows merged in and the shared columns' own rows are sorted apart;
//   3. for each output, the shared run and its own runs are merged, smallest first, and after
//      each merge the values that cannot be the Q-th are dropped (a value with Q + 1 values below
//      it in its run is above the answer; one with N - Q above it is below, and Q counts it).
// Each of (a) and (b) wins some tiles: selection_network builds both and keeps the cheaper.
// Merges are Batcher's odd-even merge of two sorted runs of any lengths. The result is pruned
// backwards to the operations an output needs, so a compare-exchange whose larger value nobody
// reads is one fmin. 5x5, median: 89 min/max operations an output for 2x2 outputs, against 202
// for one output sorted by a pruned network.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace clf_rank {

struct SelectionOp {
  enum Kind { load, min, max } kind;
  int a, b;  // load: the input's column and row in the tile's window; min, max: earlier ops
};

struct SelectionNetwork {
  int k = 0, q = 0, mx = 1, my = 1;
  std::vector<SelectionOp> ops;  // only those an output needs, each after its operands
  std::vector<int> outputs;      // the op giving output (x, y), at y * mx + x

  // OpenCL C statements: LD(x, y) reads the window, ST(x, y, value) writes an output.
  std::string source() const;
  // The outputs on the host, reading the window through `at(x, y)` (tests).
  std::vector<float> evaluate(const std::function<float(int, int)>& at) const;
  int min_max_ops() const;  // fmin and fmax operations in all
};

// mx, my: 1 .. k. q: 0 .. k * k - 1.
SelectionNetwork selection_network(int k, int q, int mx, int my);

}  // namespace clf_rank

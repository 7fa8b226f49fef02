#include "selection.hpp"

#include <algorithm>

namespace clf_rank {
namespace {

using Run = std::vector<int>;  // op indices holding values in ascending order

class Builder {
 public:
  std::vector<SelectionOp> ops;

  int load(int x, int y) { return push({SelectionOp::load, x, y}); }
  Run sort(const Run& values) {
    if (values.size() <= 1) return values;
    const auto half = values.begin() + std::ptrdiff_t(values.size() / 2);
    return merge(sort(Run(values.begin(), half)), sort(Run(half, values.end())));
  }
  // Batcher's odd-even merge: the even-placed and odd-placed values merged apart, then one
  // compare-exchange per pair of neighbours. It holds for runs of any lengths.
  Run merge(const Run& a, const Run& b) {
    if (a.empty()) return b;
    if (b.empty()) return a;
    if (a.size() == 1 && b.size() == 1) return exchange(a[0], b[0]);
    const Run v = merge(every_other(a, 0), every_other(b, 0));
    const Run w = merge(every_other(a, 1), every_other(b, 1));
    Run z{v[0]};
    size_t i = 1, j = 0;
    for (; i < v.size() && j < w.size(); ++i, ++j) {
      const Run pair = exchange(v[i], w[j]);
      z.insert(z.end(), pair.begin(), pair.end());
    }
    z.insert(z.end(), v.begin() + std::ptrdiff_t(i), v.end());
    z.insert(z.end(), w.begin() + std::ptrdiff_t(j), w.end());
    return z;
  }
  // The q-th smallest of the runs' n values: the runs are trimmed to the values that can still be
  // it, then merged two at a time, the shortest first.
  int select(std::vector<Run> runs, int n, int q) {
    for (;;) {
      trim(runs, n, q);
      if (runs.size() == 1) return runs[0][size_t(q)];
      std::sort(runs.begin(), runs.end(),
                [](const Run& l, const Run& r) { return l.size() < r.size(); });
      runs[1] = merge(runs[0], runs[1]);
      runs.erase(runs.begin());
    }
  }

 private:
  int push(SelectionOp op) {
    ops.push_back(op);
    return int(ops.size()) - 1;
  }
  Run exchange(int a, int b) {
    const int lo = push({SelectionOp::min, a, b});
    return {lo, push({SelectionOp::max, a, b})};
  }
  static Run every_other(const Run& r, size_t first) {
    Run out;
    for (size_t i = first; i < r.size(); i += 2) out.push_back(r[i]);
    return out;
  }
  // Drops from each run the values above the q-th (q + 1 or more below them in their run) and
  // below it (n - q or more above them), until no run changes.
  static void trim(std::vector<Run>& runs, int& n, int& q) {
    for (bool changed = true; changed;) {
      changed = false;
      for (Run& r : runs) {
        const int size = int(r.size());
        const int below = std::max(0, size - n + q), keep = std::min(size, q + 1) - below;
        if (below == 0 && keep == size) continue;
        r = Run(r.begin() + below, r.begin() + below + keep);
        n -= size - keep;
        q -= below;
        changed = true;
      }
      runs.erase(std::remove_if(runs.begin(), runs.end(), [](const Run& r) { return r.empty(); }),
                 runs.end());
    }
  }
};

// Merges the runs pairwise, in order, until one is left.
Run merge_all(Builder& b, std::vector<Run> runs) {
  while (runs.size() > 1) {
    std::vector<Run> next;
    for (size_t i = 0; i + 1 < runs.size(); i += 2) next.push_back(b.merge(runs[i], runs[i + 1]));
    if (runs.size() % 2) next.push_back(runs.back());
    runs = next;
  }
  return runs.empty() ? Run{} : runs[0];
}

// Keeps the ops the outputs read, renumbered in order.
void prune(SelectionNetwork& net) {
  std::vector<char> live(net.ops.size(), 0);
  for (int o : net.outputs) live[size_t(o)] = 1;
  for (size_t i = net.ops.size(); i-- > 0;)
    if (live[i] && net.ops[i].kind != SelectionOp::load)
      live[size_t(net.ops[i].a)] = live[size_t(net.ops[i].b)] = 1;
  std::vector<int> index(net.ops.size(), -1);
  std::vector<SelectionOp> kept;
  for (size_t i = 0; i < net.ops.size(); ++i) {
    if (!live[i]) continue;
    SelectionOp op = net.ops[i];
    if (op.kind != SelectionOp::load) op = {op.kind, index[size_t(op.a)], index[size_t(op.b)]};
    index[i] = int(kept.size());
    kept.push_back(op);
  }
  net.ops = kept;
  for (int& o : net.outputs) o = index[size_t(o)];
}

// One plan: `block` true merges the part of the core rows every window holds once for the whole
// tile, and each output row's own rows in those columns as one run; false merges whole columns
// once per output row. Each wins some tiles; selection_network takes the cheaper.
SelectionNetwork plan(int k, int q, int mx, int my, bool block) {
  SelectionNetwork net;
  net.k = k, net.q = q, net.mx = mx, net.my = my;
  Builder b;
  const int wide = mx + k - 1, tall = my + k - 1;
  std::vector<Run> core(static_cast<size_t>(wide));  // rows my - 1 .. k - 1 of each column, sorted
  for (int x = 0; x < wide; ++x) {
    Run column;
    for (int y = my - 1; y < k; ++y) column.push_back(b.load(x, y));
    core[size_t(x)] = b.sort(column);
  }
  std::vector<int> loads(size_t(wide * tall), -1);  // the rows outside the core, once each
  auto at = [&](int x, int y) {
    int& op = loads[size_t(y * wide + x)];
    return op >= 0 ? op : (op = b.load(x, y));
  };
  auto shared_column = [&](int x) { return x >= mx - 1 && x < k; };
  const Run tile_block =
      block ? merge_all(b, std::vector<Run>(core.begin() + (mx - 1), core.begin() + k)) : Run{};
  net.outputs.assign(size_t(mx * my), -1);
  for (int yo = 0; yo < my; ++yo) {
    std::vector<Run> columns(static_cast<size_t>(wide));  // all k rows of a column
    Run rows;  // block: the shared columns' values in this output row's own rows
    for (int x = 0; x < wide; ++x) {
      Run own;
      for (int y = yo; y < yo + k; ++y)
        if (y < my - 1 || y >= k) own.push_back(at(x, y));
      if (block && shared_column(x))
        rows.insert(rows.end(), own.begin(), own.end());
      else
        columns[size_t(x)] = b.merge(core[size_t(x)], b.sort(own));
    }
    const Run shared =
        block ? tile_block
              : merge_all(b, std::vector<Run>(columns.begin() + (mx - 1), columns.begin() + k));
    const Run sorted_rows = b.sort(rows);
    for (int xo = 0; xo < mx; ++xo) {
      std::vector<Run> runs{shared, sorted_rows};
      for (int x = xo; x < xo + k; ++x)
        if (!shared_column(x)) runs.push_back(columns[size_t(x)]);
      net.outputs[size_t(yo * mx + xo)] = b.select(runs, k * k, q);
    }
  }
  net.ops = b.ops;
  prune(net);
  return net;
}

}  // namespace

SelectionNetwork selection_network(int k, int q, int mx, int my) {
  SelectionNetwork by_columns = plan(k, q, mx, my, false), by_block = plan(k, q, mx, my, true);
  return by_block.min_max_ops() < by_columns.min_max_ops() ? by_block : by_columns;
}

int SelectionNetwork::min_max_ops() const {
  return int(std::count_if(ops.begin(), ops.end(),
                           [](const SelectionOp& op) { return op.kind != SelectionOp::load; }));
}

std::string SelectionNetwork::source() const {
  std::string text;
  for (size_t i = 0; i < ops.size(); ++i) {
    const SelectionOp& op = ops[i];
    const std::string a = std::to_string(op.a), b = std::to_string(op.b);
    text += "const float v" + std::to_string(i) + " = " +
            (op.kind == SelectionOp::load  ? "LD(" + a + ", " + b + ");"
             : op.kind == SelectionOp::min ? "fmin(v" + a + ", v" + b + ");"
                                           : "fmax(v" + a + ", v" + b + ");");
  }
  for (int y = 0; y < my; ++y)
    for (int x = 0; x < mx; ++x)
      text += "ST(" + std::to_string(x) + ", " + std::to_string(y) + ", v" +
              std::to_string(outputs[size_t(y * mx + x)]) + ");";
  return text;
}

std::vector<float> SelectionNetwork::evaluate(const std::function<float(int, int)>& at) const {
  std::vector<float> v(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const SelectionOp& op = ops[i];
    v[i] = op.kind == SelectionOp::load  ? at(op.a, op.b)
           : op.kind == SelectionOp::min ? std::min(v[size_t(op.a)], v[size_t(op.b)])
                                         : std::max(v[size_t(op.a)], v[size_t(op.b)]);
  }
  std::vector<float> out;
  for (int o : outputs) out.push_back(v[size_t(o)]);
  return out;
}

}  // namespace clf_rank

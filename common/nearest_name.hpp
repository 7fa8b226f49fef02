// "Did you mean" for usage errors: the known name a mistyped word most likely meant ("gausian" ->
// gaussian, "refelct" -> reflect, "--strip-row" -> --strip-rows), shared by the core's filter and
// parameter errors and the command lines' option tables.
#pragma once
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

namespace clf {

// Edits from a to b, letter case ignored: insertions, deletions, substitutions and swaps of two
// neighbours (the optimal string alignment distance).
inline int edit_distance(const std::string& a, const std::string& b) {
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> d(n + 1, std::vector<int>(m + 1));
  const auto same = [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  };
  for (size_t i = 0; i <= n; ++i) d[i][0] = int(i);
  for (size_t j = 0; j <= m; ++j) d[0][j] = int(j);
  for (size_t i = 1; i <= n; ++i)
    for (size_t j = 1; j <= m; ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (same(a[i - 1], b[j - 1]) ? 0 : 1)});
      if (i > 1 && j > 1 && same(a[i - 1], b[j - 2]) && same(a[i - 2], b[j - 1]))
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

// "; did you mean 'NAME'?" for the nearest of `names` within a third of the word's length (at
// least 1, at most 3 edits), else "". A word that is one of them but for case gets it too.
inline std::string did_you_mean(const std::string& word, const std::vector<std::string>& names) {
  const int limit = std::clamp(int(word.size()) / 3, 1, 3);
  const std::string* best = nullptr;
  int best_distance = limit + 1;
  for (const std::string& name : names) {
    const int distance = edit_distance(word, name);
    if (distance < best_distance && name != word) best = &name, best_distance = distance;
  }
  return best ? "; did you mean '" + *best + "'?" : "";
}

}  // namespace clf

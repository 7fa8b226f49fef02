// Small helpers the core's sources share.
#pragma once
#include <string>
#include <vector>

namespace clf::detail {

template <typename T>
T round_up(T value, T multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

// Without leading and trailing white space (and trailing NULs, as OpenCL info strings end).
inline std::string trim(const std::string& s) {
  const char* space = " \t\n\r\f\v";
  const auto first = s.find_first_not_of(space);
  if (first == std::string::npos) return {};
  auto last = s.find_last_not_of(std::string(space) + '\0');
  return s.substr(first, last - first + 1);
}

inline std::string join(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

}  // namespace clf::detail

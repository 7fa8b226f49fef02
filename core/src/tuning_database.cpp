// The tuning database (tuning_database.hpp).
#include "tuning_database.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "clf/error.hpp"
#include "util.hpp"

extern const char* const clf_tuning_devices_tuning;

namespace clf::detail {
namespace {

struct Section {
  std::string key;  // "gpu", "device H200"
  int rank = 0;     // 0 type, 1 platform, 2 vendor, 3 device
  bool matches = false;
  std::vector<std::pair<std::string, std::string>> values;
  std::vector<int> lines;  // of the values, for errors
};

std::string lowered(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

Error malformed(int line, const std::string& what) {
  return Error(ErrorKind::usage, "line " + std::to_string(line) + ": " + what);
}

// "[device H200]" -> its rank and whether `info` is such a device.
Section open_section(const std::string& key, int line, const DeviceInfo& info) {
  Section s;
  s.key = key;
  const size_t space = key.find(' ');
  const std::string kind = key.substr(0, space);
  const std::string text = space == std::string::npos ? "" : lowered(trim(key.substr(space + 1)));
  auto within = [&](const std::string& field) {
    return !text.empty() && lowered(field).find(text) != std::string::npos;
  };
  if (kind == "gpu" || kind == "cpu") {
    if (!text.empty()) throw malformed(line, "[" + kind + "] takes no text");
    s.matches = kind == "gpu" ? info.is_gpu : info.is_cpu;
  } else if (kind == "platform" || kind == "vendor" || kind == "device") {
    if (text.empty()) throw malformed(line, "[" + kind + " TEXT] needs the text to look for");
    s.rank = kind == "platform" ? 1 : kind == "vendor" ? 2 : 3;
    s.matches = within(kind == "platform" ? info.platform_name
                       : kind == "vendor" ? info.vendor
                                          : info.name);
  } else {
    throw malformed(line, "unknown section [" + key + "] (gpu, cpu, platform, vendor, device)");
  }
  return s;
}

std::vector<Section> parse(const std::string& database, const DeviceInfo& info) {
  std::vector<Section> sections;
  std::istringstream lines(database);
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    if (line.front() == '[') {
      if (line.back() != ']') throw malformed(number, "a section ends with ']'");
      sections.push_back(open_section(trim(line.substr(1, line.size() - 2)), number, info));
      continue;
    }
    const size_t eq = line.find('=');
    if (eq == std::string::npos) throw malformed(number, "expected NAME = VALUE");
    if (sections.empty()) throw malformed(number, "a value before any [section]");
    sections.back().values.emplace_back(trim(line.substr(0, eq)), trim(line.substr(eq + 1)));
    sections.back().lines.push_back(number);
  }
  return sections;
}

std::vector<std::string> apply_sections(Tuning& tuning, std::vector<Section> sections) {
  std::stable_sort(sections.begin(), sections.end(),
                   [](const Section& a, const Section& b) { return a.rank < b.rank; });
  std::vector<std::string> applied;
  for (const Section& s : sections) {
    // Every value is checked, whichever device this is: a typo fails everywhere at once.
    Tuning scratch;
    for (size_t v = 0; v < s.values.size(); ++v) {
      try {
        set_tuning_field(s.matches ? tuning : scratch, s.values[v].first, s.values[v].second);
      } catch (const Error& e) {
        throw malformed(s.lines[v], e.what());
      }
    }
    if (s.matches) applied.push_back(s.key);
  }
  return applied;
}

}  // namespace

std::vector<std::string> apply_tuning_database(Tuning& tuning, const DeviceInfo& info,
                                               const std::string& database,
                                               const std::string& what) {
  try {
    return apply_sections(tuning, parse(database, info));
  } catch (const Error& e) {
    throw Error(ErrorKind::usage, what + " " + e.what());
  }
}

const std::string& tuning_database() {
  static const std::string text = clf_tuning_devices_tuning;
  return text;
}

std::string tuned_path(const DeviceInfo& info, const std::string& cache_dir) {
  if (cache_dir.empty()) return "";
  std::string name = info.name + "-" + info.driver_version;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-') c = '_';
  return (std::filesystem::path(cache_dir) / "tuning" / (name + ".tuning")).string();
}

std::string initial_tuning(Tuning& tuning, const DeviceInfo& info, const std::string& cache_dir) {
  const std::vector<std::string> sections = apply_tuning_database(tuning, info, tuning_database());
  std::string source = "database";
  for (const auto& key : sections) source += " [" + key + "]";
  if (sections.empty()) source = "defaults (no database section matches the device)";
  const std::string path = tuned_path(info, cache_dir);
  std::ifstream file(path);
  if (path.empty() || !file) return source;
  std::stringstream text;
  text << file.rdbuf();
  try {
    if (apply_tuning_database(tuning, info, text.str(), "tuned file " + path).empty())
      return source;
  } catch (const Error& e) {
    throw Error(ErrorKind::usage,
                std::string(e.what()) + " (delete the file, or run clfilter --tune again)");
  }
  return source + ", tuned (" + path + ")";
}

}  // namespace clf::detail

// Command-line file lists: frame ranges, frame patterns, --output-dir (see jobs.hpp).
#include "jobs.hpp"

#include <cstdio>
#include <filesystem>
#include <map>
#include <regex>
#include <sstream>

#include "clf/error.hpp"

namespace clf {
namespace {

Error usage(const std::string& message) { return Error(ErrorKind::usage, message); }

// The first frame pattern in `path`: where it starts, how long it is, the digits it pads to.
struct Pattern {
  size_t at = std::string::npos, length = 0;
  int digits = 0;
};

Pattern find_pattern(const std::string& path) {
  static const std::regex printf_form("%(0?([0-9]*))d");
  Pattern p;
  for (size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '#' || path[i] == '@') {
      size_t j = i;
      while (j < path.size() && path[j] == path[i]) ++j;
      p.at = i;
      p.length = j - i;
      p.digits = int(path[i] == '#' ? 4 * p.length : p.length);
      return p;
    }
    std::smatch m;
    const std::string rest = path.substr(i);
    if (path[i] == '%' &&
        std::regex_search(rest, m, printf_form, std::regex_constants::match_continuous)) {
      p.at = i;
      p.length = size_t(m.length(0));
      p.digits = m[2].length() ? std::stoi(m[2].str()) : 0;
      if (p.digits > 18)
        throw usage("'" + path + "': frame padding of " + m[2].str() + " digits is too wide");
      return p;
    }
  }
  return p;
}

int parse_int(const std::string& text, const std::string& whole) {
  size_t used = 0;
  int v = 0;
  try {
    v = std::stoi(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size())
    throw usage("--frames '" + whole + "': '" + text +
                "' is not a frame number (e.g. 1-100, 1-100x2, 1,5,9)");
  return v;
}

}  // namespace

std::vector<int> parse_frames(const std::string& text) {
  std::vector<int> frames;
  std::istringstream parts(text);
  for (std::string part; std::getline(parts, part, ',');) {
    // A range is A-B[xS]; a leading '-' belongs to A, the next '-' after a digit splits.
    int step = 1;
    if (const auto x = part.find('x'); x != std::string::npos) {
      step = parse_int(part.substr(x + 1), text);
      part = part.substr(0, x);
      if (step < 1) throw usage("--frames '" + text + "': the step after 'x' must be >= 1");
    }
    size_t split = std::string::npos;
    for (size_t i = 1; i < part.size(); ++i)
      if (part[i] == '-' && std::isdigit(static_cast<unsigned char>(part[i - 1]))) {
        split = i;
        break;
      }
    const int first = parse_int(part.substr(0, split), text);
    const int last = split == std::string::npos ? first : parse_int(part.substr(split + 1), text);
    if (last < first) throw usage("--frames '" + text + "': range " + part + " runs backwards");
    if (int64_t(frames.size()) + (int64_t(last) - first) / step > 10000000)
      throw usage("--frames '" + text + "': more than 10 million frames");
    for (int64_t f = first; f <= last; f += step) frames.push_back(int(f));
  }
  if (frames.empty()) throw usage("--frames '" + text + "': no frames (e.g. 1-100)");
  return frames;
}

bool has_frame_pattern(const std::string& path) {
  return find_pattern(path).at != std::string::npos;
}

std::string expand_frame(const std::string& pattern, int frame) {
  const Pattern p = find_pattern(pattern);
  if (p.at == std::string::npos) return pattern;
  std::string digits = std::to_string(frame < 0 ? -int64_t(frame) : int64_t(frame));
  if (int(digits.size()) < p.digits) digits.insert(0, size_t(p.digits) - digits.size(), '0');
  return pattern.substr(0, p.at) + (frame < 0 ? "-" : "") + digits +
         pattern.substr(p.at + p.length);
}

std::vector<FileJob> plan_jobs(const std::vector<std::string>& positional,
                               const std::string& output_dir, const std::string& frames) {
  std::vector<FileJob> jobs;
  const std::vector<int> numbers = frames.empty() ? std::vector<int>{} : parse_frames(frames);
  auto inputs_of = [&](const std::string& in) {
    if (frames.empty() && has_frame_pattern(in))
      throw usage("'" + in + "' has a frame pattern: give --frames (e.g. --frames 1-100)");
    if (!frames.empty() && !has_frame_pattern(in))
      throw usage("--frames given but '" + in +
                  "' has no frame pattern (# = 4 digits, @ = 1, %04d)");
    std::vector<std::string> list;
    if (frames.empty()) list.push_back(in);
    for (int f : numbers) list.push_back(expand_frame(in, f));
    return list;
  };
  if (!output_dir.empty()) {
    if (positional.empty()) throw usage("--output-dir needs input files (see --help)");
    std::map<std::string, std::string> source_of;
    for (const auto& pattern : positional)
      for (const auto& in : inputs_of(pattern)) {
        if (in == "-")
          throw usage("'-' (standard input) is one IN of IN OUT, not an input of a batch");
        if (std::filesystem::is_directory(in))
          throw usage("'" + in + "' is a directory: give the files in it (e.g. '" +
                      (std::filesystem::path(in) / "*.png").string() + "')");
        const std::string out =
            (std::filesystem::path(output_dir) / std::filesystem::path(in).filename()).string();
        if (auto it = source_of.find(out); it != source_of.end())
          throw usage(it->second == in ? "'" + in + "' is given twice"
                                       : "'" + it->second + "' and '" + in +
                                             "' would both be written to '" + out + "'");
        source_of[out] = in;
        jobs.push_back({in, out});
      }
    return jobs;
  }
  if (positional.size() != 2)
    throw usage(positional.empty()       ? "missing IN and OUT (see --help)"
                : positional.size() == 1 ? "missing OUT (see --help)"
                                         : "too many arguments: '" + positional[2] +
                                               "' (several inputs need --output-dir DIR)");
  const auto ins = inputs_of(positional[0]);
  if (!frames.empty() && !has_frame_pattern(positional[1]))
    throw usage("--frames given but OUT '" + positional[1] +
                "' has no frame pattern (e.g. out.#.exr)");
  if (frames.empty() && has_frame_pattern(positional[1]))
    throw usage("'" + positional[1] + "' has a frame pattern: give --frames (e.g. --frames 1-100)");
  for (size_t i = 0; i < ins.size(); ++i)
    jobs.push_back(
        {ins[i], frames.empty() ? positional[1] : expand_frame(positional[1], numbers[i])});
  return jobs;
}

}  // namespace clf

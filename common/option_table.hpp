// A program's command-line options, declared once: each has its names, its value, its help, what
// completes it and what it sets. The parser, the help text and a shell's completion words come
// from that table. clfilter (cli/options.cpp) and clfilter-bench (bench/options.cpp) declare
// theirs; a new option is one entry there.
#pragma once
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "clf/error.hpp"
#include "nearest_name.hpp"

namespace clf::options {

// What a shell completes after an option: nothing, a fixed list, or something only known at run
// time (filter names, devices, directories).
enum class Complete { none, choices, filters, devices, directories };

template <typename Options>
struct Spec {
  const char* names;    // "-f, --filter" or "--device"
  const char* value;    // "SPEC"; nullptr: a flag; "[NAME]": a value that may be left out
  const char* section;  // nullptr: not in the help (--complete)
  const char* help;     // lines, '\n' between them
  Complete complete = Complete::none;
  const char* choices = "";  // Complete::choices: words separated by spaces
  void (*set)(Options&, const std::string& name, const std::string& value) = nullptr;
};

inline Error usage_error(const std::string& message) { return Error(ErrorKind::usage, message); }

// A whole number in [min, max], or an error naming the option and the value.
inline int whole_number(const std::string& option, const std::string& value, int min, int max) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(value.c_str(), &end, 10);
  if (value.empty() || *end || errno || v < min || v > max)
    throw usage_error(option + " expects a whole number in [" + std::to_string(min) + ", " +
                      std::to_string(max) + "] (got '" + value + "')");
  return int(v);
}

// A value among `choices` (words separated by spaces), or an error listing them.
inline std::string chosen(const std::string& option, const std::string& value,
                          const char* choices) {
  std::istringstream words(choices);
  std::string list;
  for (std::string w; words >> w;) {
    if (w == value) return value;
    list += (list.empty() ? "" : " or ") + w;
  }
  throw usage_error(option + " expects " + list + " (got '" + value + "')");
}

template <typename Options>
class Table {
 public:
  explicit Table(std::vector<Spec<Options>> specs) : specs_(std::move(specs)) {}

  // Sets `o` from argv[1..]: "--name value", "--name=value", "-n value", flags. Words that are
  // not options go to `positional`, or are refused where it is null; each option given goes to
  // `given` (when not null) by its long name. Throws Error(usage) naming the option for an
  // unknown one, a missing value or a bad value.
  void parse(int argc, char** argv, Options& o, std::vector<std::string>* positional,
             std::vector<std::string>* given = nullptr) const {
    for (int i = 1; i < argc; ++i) {
      std::string arg = argv[i], value;
      bool has_inline = false;
      if (arg.rfind("--", 0) == 0)
        if (auto eq = arg.find('='); eq != std::string::npos) {
          value = arg.substr(eq + 1);
          arg = arg.substr(0, eq);
          has_inline = true;
        }
      const bool option = arg.size() > 1 && arg[0] == '-';
      const Spec<Options>* spec = option ? find(arg) : nullptr;
      if (option && !spec)
        throw usage_error("unknown option '" + arg + "'" + did_you_mean(arg, long_names()) +
                          " (see --help)");
      if (!spec) {
        if (!positional) throw usage_error("unexpected argument '" + arg + "' (see --help)");
        positional->push_back(arg);
        continue;
      }
      // A flag takes no value; an optional value ("[NAME]") is the next word unless an option.
      if (!spec->value) {
        if (has_inline) throw usage_error(arg + " takes no value (got '" + value + "')");
      } else if (!has_inline && spec->value[0] == '[') {
        if (i + 1 < argc && argv[i + 1][0] != '-') value = argv[++i];
      } else if (!has_inline) {
        if (i + 1 >= argc) throw usage_error(arg + " needs a value (see --help)");
        value = argv[++i];
      }
      spec->set(o, arg, value);
      if (given) {
        const std::string names = spec->names;
        given->push_back(names.substr(names.rfind(' ') + 1));  // "-f, --filter": "--filter"
      }
    }
  }

  // Each section's title, then its options, their help from column 28.
  std::string help() const {
    std::string text;
    std::vector<const char*> sections;
    for (const auto& spec : specs_)
      if (spec.section &&
          std::find(sections.begin(), sections.end(), spec.section) == sections.end())
        sections.push_back(spec.section);
    for (const char* section : sections) {
      text += std::string("\n") + section + "\n";
      for (const auto& spec : specs_)
        if (spec.section == section) text += entry(spec);
    }
    return text;
  }

  // The words a shell offers after `previous`: an option's choices, "@filters", "@devices",
  // "@directories" or "@none" for a value known at run time or free; every option name for "-";
  // nothing after anything else (the shell then offers files).
  std::string completion_words(const std::string& previous) const {
    std::string words;
    if (previous == "-") {
      for (const auto& spec : specs_)
        if (spec.section)
          for (const std::string& n : names_of(spec))
            if (n.rfind("--", 0) == 0) words += (words.empty() ? "" : " ") + n;
      return words;
    }
    const Spec<Options>* spec = find(previous);
    if (!spec || !spec->value) return "";
    switch (spec->complete) {
      case Complete::choices:
        return spec->choices;
      case Complete::filters:
        return "@filters";
      case Complete::devices:
        return "@devices";
      case Complete::directories:
        return "@directories";
      case Complete::none:
        break;
    }
    return "@none";
  }

 private:
  static std::vector<std::string> names_of(const Spec<Options>& spec) {
    std::vector<std::string> names;
    std::istringstream list(spec.names);
    for (std::string name; std::getline(list, name, ',');)
      names.push_back(name.substr(name.find_first_not_of(' ')));
    return names;
  }
  std::vector<std::string> long_names() const {
    std::vector<std::string> names;
    for (const auto& spec : specs_)
      for (const std::string& n : names_of(spec))
        if (n.rfind("--", 0) == 0) names.push_back(n);
    return names;
  }
  const Spec<Options>* find(const std::string& name) const {
    for (const auto& spec : specs_)
      for (const std::string& n : names_of(spec))
        if (n == name) return &spec;
    return nullptr;
  }
  static std::string entry(const Spec<Options>& spec) {
    const std::string label =
        std::string("  ") + spec.names + (spec.value ? " " : "") + (spec.value ? spec.value : "");
    std::string text;
    std::istringstream lines(spec.help);
    bool first = true;
    for (std::string line; std::getline(lines, line); first = false) {
      if (first && label.size() < 26)
        text += label + std::string(27 - label.size(), ' ') + line + "\n";
      else if (first)
        text += label + "\n" + std::string(27, ' ') + line + "\n";
      else
        text += std::string(27, ' ') + line + "\n";
    }
    return text;
  }

  std::vector<Spec<Options>> specs_;
};

}  // namespace clf::options

// The command line's options, declared once: each has its names, its value, its help, what
// completes it and what it sets. The parser, --help and the shell completion
// (scripts/clfilter-completion.bash asks `clfilter --complete PREVIOUS_WORD`) come from that table.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "clf/clf.hpp"
#include "io_module.hpp"

namespace clf::cli {

struct Options {
  std::vector<std::string> positional, filters, plugin_dirs;
  std::string device, variant, tile, trace, output_dir, frames, io = "auto";
  std::string variant_from = "--variant", tile_from = "--tile";  // named in errors
  clf::Environment env;  // read once, in main's thread, before any other
  int jobs = 0;          // 0: one per core, at most 4
  std::optional<std::string> list_filters, complete;
  OutputOptions output;
  bool list_devices = false, help = false, version = false, stats = false, quiet = false,
       verbose = false, tune = false;
  RunOptions run;
};

// What a shell completes after an option: nothing, a fixed list, or something only known at run
// time (filter names, devices, directories).
enum class Complete { none, choices, filters, devices, directories };

struct OptionSpec {
  const char* names;    // "-f, --filter" or "--device"
  const char* value;    // "SPEC"; nullptr: a flag; "[NAME]": a value that may be left out
  const char* section;  // nullptr: not in --help (--complete)
  const char* help;     // lines, '\n' between them
  Complete complete = Complete::none;
  const char* choices = "";  // Complete::choices: words separated by spaces
  void (*set)(Options&, const std::string& name, const std::string& value) = nullptr;
};

const std::vector<OptionSpec>& option_table();
// The environment's defaults, then the command line over them. Throws Error(usage) naming the
// option for an unknown one, a missing value or a bad value.
Options parse_args(int argc, char** argv);
std::string usage_text();
// The words a shell offers after `previous`: an option's choices, "@filters", "@devices",
// "@directories" or "@none" for a value known at run time or free; every option name for "-";
// nothing after anything else (the shell then offers files).
std::string completion_words(const std::string& previous);

}  // namespace clf::cli

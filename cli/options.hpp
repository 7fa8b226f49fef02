// The command line's options, declared once in options.cpp's table (common/option_table.hpp): the
// parser, --help and the shell completion (scripts/clfilter-completion.bash asks `clfilter
// --complete PREVIOUS_WORD`) come from it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "clf/clf.hpp"
#include "io_module.hpp"
#include "option_table.hpp"

namespace clf::cli {

struct Options {
  std::vector<std::string> positional, filters, plugin_dirs;
  std::vector<std::string> given;  // the options on the command line, by long name, in order
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

using clf::options::Complete;
using OptionSpec = clf::options::Spec<Options>;

// The environment's defaults, then the command line over them. Throws Error(usage) naming the
// option for an unknown one, a missing value or a bad value.
Options parse_args(int argc, char** argv);
std::string usage_text();
// The words a shell offers after `previous`: an option's choices, "@filters", "@devices",
// "@directories" or "@none" for a value known at run time or free; every option name for "-";
// nothing after anything else (the shell then offers files).
std::string completion_words(const std::string& previous);

}  // namespace clf::cli

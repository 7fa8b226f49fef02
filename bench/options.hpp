// clfilter-bench's command line, declared once in options.cpp's table (common/option_table.hpp):
// the parser and --help come from it.
#pragma once
#include <string>
#include <vector>

namespace clf_bench {

struct Options {
  int width = 3840, height = 2160, channels = 1, reps = 5;
  std::string device, json, trace, type = "f32";
  std::string tuning;  // NAME=VALUE,... (repeated options joined), or "list"
  std::vector<std::string> filters;
  int strip_rows = 0, slots = 3;  // streamed runs: 0 = the streamer's choice
  int batch = 0, jobs = 2;        // --batch N images, J in flight a device
  bool smoke = false, pageable = false, scale = false, tune = false, help = false;
};

// Throws clf::Error(usage) naming the option for an unknown one, a missing value or a bad value.
Options parse_args(int argc, char** argv);
std::string usage_text();

}  // namespace clf_bench

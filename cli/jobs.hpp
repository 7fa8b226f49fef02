// Which files a clfilter command names: IN OUT; IN... --output-dir DIR; or frame sequences,
// in.#.exr out.#.exr --frames 1-100 (oiiotool's and Nuke's conventions). Pure text, no I/O.
#pragma once
#include <string>
#include <vector>

namespace clf {

struct FileJob {
  std::string in, out;
};

// "1-100", "1-100x5" (every 5th), "1,3,5-9", "-3--1": frames in the order given. Throws
// Error(usage) naming the text.
std::vector<int> parse_frames(const std::string& text);

// The frame pattern in a path, if any: a run of k '#' is 4k digits ("#" = 0042), a run of k '@'
// is k digits, "%0Nd" is N digits, "%d" no padding. Negative frames get a '-' before the digits.
bool has_frame_pattern(const std::string& path);
std::string expand_frame(const std::string& pattern, int frame);

// The jobs of a command line. `output_dir` non-empty: every positional is an input, written to
// DIR/<its file name>. `frames` non-empty: positionals are patterns, expanded for each frame (with
// --output-dir, inputs only; otherwise IN and OUT). Otherwise exactly IN and OUT. Throws
// Error(usage): a pattern without --frames or frames without a pattern, two inputs that would
// write the same output, a wrong number of arguments.
std::vector<FileJob> plan_jobs(const std::vector<std::string>& positional,
                               const std::string& output_dir, const std::string& frames);

}  // namespace clf

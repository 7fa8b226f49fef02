// IN or OUT given as '-': standard input or output, through files of their own in a private
// temporary directory, so that they take every path files take (formats, metadata, the streamed
// rows) and a run that fails writes nothing: standard output gets the image only once it is whole.
#pragma once
#include <atomic>
#include <string>

namespace clf {

// The extension of the format whose signature `head` (a file's first bytes) begins with: "png",
// "jpg", "tif", "exr", "bmp", "gif", "webp", "hdr", "pnm", "dpx", "heic"; "" for none of them.
std::string extension_of_bytes(const std::string& head);

// Whether OUT is '-' or FORMAT:- (as ImageMagick writes it: png:-), standard output.
bool names_standard_output(const std::string& out);
// Such an OUT's format as an extension, lower case: FORMAT, or for a bare '-' `like`'s (IN's
// file); "" when `like` has none.
std::string standard_output_extension(const std::string& out, const std::string& like);

class StandardStreams {
 public:
  // The directory: `temp_dir`/clfilter-stdio-XXXXXX, mode 0700, removed with its files.
  explicit StandardStreams(const std::string& temp_dir);
  ~StandardStreams();
  StandardStreams(const StandardStreams&) = delete;
  StandardStreams& operator=(const StandardStreams&) = delete;

  // Standard input copied to a file named by its format's signature, checking `cancel` between
  // chunks; its path. Throws Error(usage) when standard input is a terminal, Error(io) when it is
  // empty or no format clfilter reads by its first bytes, Error(cancelled) when cancelled.
  std::string spool_input(const std::atomic<bool>* cancel);
  // The file OUT '-' is written to: "stdout." + extension in the directory.
  std::string output_file(const std::string& extension);
  // That file, once written, copied to standard output. Throws Error(io) when standard output
  // fails (a closed pipe: EPIPE, since main ignores SIGPIPE).
  void send_output() const;

 private:
  std::string dir_, output_;
};

}  // namespace clf

// What every file source and sink of the CLI shares, whichever codec is behind it: rows decoded
// forward and kept from the discard point on, and an output written beside its destination and
// renamed over it.
#pragma once
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

namespace clf {

// Throws Error(cancelled) "interrupted while <what>" when `cancel` is set.
void check_cancel(const std::atomic<bool>* cancel, const std::string& what);

// Rows of a decoder that only goes forward, served to RowSource::read. `decode(begin, end, rows)`
// decodes rows [begin, end) into `rows`; it is called in order, in chunks of about 16 MiB (whole
// blocks of `block_rows`, a tiled file's tile height) so that a cancel is seen within one.
class ForwardRows {
 public:
  using Decode = std::function<void(int begin, int end, std::byte* rows)>;
  ForwardRows(std::string path, size_t row_bytes, int height, int block_rows, Decode decode);
  // Rows [begin, end) into `rows`; throws Error(usage) for rows before the discard point.
  void read(int begin, int end, std::byte* rows);
  void discard_before(int row);
  // Decodes ahead up to `rows` rows (fewer at the end of the image), to be read later.
  void prefetch(int rows);

 private:
  void decode_until(int target);
  std::string path_;
  size_t row_bytes_;
  int height_, block_rows_;
  Decode decode_;
  std::vector<std::byte> kept_;  // decoded rows [kept_begin_, kept_end_)
  int kept_begin_ = 0, kept_end_ = 0;
};

// Throws Error(io) naming `path` when its directory is missing or read-only, when it is a
// directory or not a regular file, or when it exists and this process may not write it (as `cp`
// refuses). A symbolic link is checked at its target.
void check_output_path(const std::string& path);

// A batch's output directory: created (with its parents) when missing, as its outputs need it;
// Error(usage) when it names a file, Error(io) naming the cause when it cannot be created. `option`
// names it in those messages: "--output-dir" on the command line, "output_dir" in Python.
void prepare_output_dir(const std::string& dir, const std::string& option = "--output-dir");

// An output file's temporary name beside its destination (same directory, so the rename is atomic;
// same extension, so codecs that go by the name pick the same format). The destination is `path`,
// or the file a symbolic link `path` points to: the target is replaced and the link kept. commit()
// makes the temporary file durable (fsync), gives it the mode, owner and group of the file it
// replaces, renames it into place and syncs the directory. Destroyed before commit(), it removes
// the temporary file. A hard-linked destination is a new file after the rename: its other names
// keep the old content, as with `mv`.
class TempOutput {
 public:
  explicit TempOutput(const std::string& path);
  ~TempOutput();
  TempOutput(const TempOutput&) = delete;
  TempOutput& operator=(const TempOutput&) = delete;
  const std::filesystem::path& temp() const { return tmp_; }
  const std::string& path() const { return path_; }
  // Renames the temporary file over the destination; when `cancel` is set, removes it instead and
  // throws Error(cancelled). Throws Error(io) naming the file and the cause ("No space left on
  // device") when the data cannot be made durable or the rename fails; the destination is then
  // as it was.
  void commit(const std::atomic<bool>* cancel);
  // Removes the temporary file now (a failed write); nothing is left to clean up.
  void abandon();

 private:
  [[noreturn]] void fail(const std::string& why);
  void take_attributes(int fd);
  std::string path_;
  std::filesystem::path destination_, tmp_;
  bool done_ = false;
};

}  // namespace clf

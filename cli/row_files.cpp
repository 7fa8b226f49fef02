// Forward-decoded rows and temporary outputs, shared by the OpenImageIO and libjpeg files.
#include "row_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>

#include "clf/error.hpp"

namespace fs = std::filesystem;

namespace clf {

void check_cancel(const std::atomic<bool>* cancel, const std::string& what) {
  if (cancel && cancel->load()) throw Error(ErrorKind::cancelled, "interrupted while " + what);
}

ForwardRows::ForwardRows(std::string path, size_t row_bytes, int height, int block_rows,
                         Decode decode)
    : path_(std::move(path)),
      row_bytes_(row_bytes),
      height_(height),
      block_rows_(std::max(1, block_rows)),
      decode_(std::move(decode)) {}

void ForwardRows::discard_before(int row) {
  const int drop = std::max(0, std::min(row, kept_end_) - kept_begin_);
  kept_.erase(kept_.begin(), kept_.begin() + ptrdiff_t(size_t(drop) * row_bytes_));
  kept_begin_ += drop;
  if (row > kept_end_)  // nothing kept: decoding resumes at the block holding `row`
    kept_begin_ = kept_end_ = std::min(row, height_) / block_rows_ * block_rows_;
}

void ForwardRows::decode_until(int target) {
  const int chunk = std::max(1, int((size_t(16) << 20) / row_bytes_) / block_rows_) * block_rows_;
  target = std::min(height_, (target + block_rows_ - 1) / block_rows_ * block_rows_);
  while (kept_end_ < target) {
    const int until = std::min(target, kept_end_ + chunk);
    const size_t at = kept_.size();
    kept_.resize(at + size_t(until - kept_end_) * row_bytes_);
    decode_(kept_end_, until, kept_.data() + at);
    kept_end_ = until;
  }
}

void ForwardRows::prefetch(int rows) { decode_until(kept_begin_ + rows); }

void ForwardRows::read(int begin, int end, std::byte* rows) {
  if (begin < kept_begin_ || begin > end || end > height_)
    throw Error(ErrorKind::usage, "reading '" + path_ + "': rows " + std::to_string(begin) +
                                      " to " + std::to_string(end) + " asked after rows before " +
                                      std::to_string(kept_begin_) +
                                      " were discarded (a file source reads forward)");
  if (begin > kept_end_) discard_before(begin);
  decode_until(end);
  std::memcpy(rows, kept_.data() + size_t(begin - kept_begin_) * row_bytes_,
              size_t(end - begin) * row_bytes_);
}

void check_output_path(const std::string& path) {
  const fs::path p(path);
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::io,
                "cannot write '" + path + "': directory '" + dir.string() + "' does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::io,
                "cannot write '" + path + "': directory '" + dir.string() + "' is not writable");
  if (fs::is_directory(p, ec))
    throw Error(ErrorKind::io, "cannot write '" + path + "': it is a directory");
}

TempOutput::TempOutput(const std::string& path) : path_(path) {
  const fs::path p(path);
  tmp_ = (p.has_parent_path() ? p.parent_path() : fs::path(".")) /
         (".clfilter-" + std::to_string(::getpid()) + "-" + p.filename().string());
}

TempOutput::~TempOutput() { abandon(); }

void TempOutput::abandon() {
  if (done_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
  done_ = true;
}

void TempOutput::commit(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load()) {
    abandon();
    throw Error(ErrorKind::cancelled, "interrupted while writing '" + path_ + "'");
  }
  std::error_code ec;
  fs::rename(tmp_, path_, ec);
  if (ec) {
    abandon();
    throw Error(ErrorKind::io,
                "cannot write '" + path_ + "': rename from temporary file failed: " + ec.message());
  }
  done_ = true;
}

}  // namespace clf

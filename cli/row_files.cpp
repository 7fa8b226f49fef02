// Forward-decoded rows and temporary outputs, shared by the OpenImageIO and libjpeg files.
#include "row_files.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
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

namespace {

// Where the bytes of `path` go: the target of a symbolic link (followed to its end; a dangling
// link's target is created), else `path` itself.
fs::path destination_of(const std::string& path) {
  std::error_code ec;
  fs::path p(path);
  for (int hops = 0; fs::is_symlink(fs::symlink_status(p, ec)); ++hops) {
    if (hops == 40)
      throw Error(ErrorKind::io, "cannot write '" + path + "': too many levels of symbolic links");
    const fs::path target = fs::read_symlink(p, ec);
    if (ec) throw Error(ErrorKind::io, "cannot write '" + path + "': " + ec.message());
    p = target.is_absolute() ? target : (p.has_parent_path() ? p.parent_path() : ".") / target;
  }
  return p;
}

fs::path directory_of(const fs::path& p) { return p.has_parent_path() ? p.parent_path() : "."; }

}  // namespace

void check_output_path(const std::string& path) {
  const fs::path p = destination_of(path);
  const fs::path dir = directory_of(p);
  const std::string named = p == fs::path(path) ? "" : " (the target of the link)";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw Error(ErrorKind::io, "cannot write '" + path + "': directory '" + dir.string() + "'" +
                                   named + " does not exist");
  if (::access(dir.c_str(), W_OK) != 0)
    throw Error(ErrorKind::io, "cannot write '" + path + "': directory '" + dir.string() + "'" +
                                   named + " is not writable");
  const fs::file_status status = fs::status(p, ec);
  if (fs::is_directory(status))
    throw Error(ErrorKind::io, "cannot write '" + path +
                                   "': it is a directory (to write files into it: --output-dir '" +
                                   path + "')");
  if (fs::exists(status) && !fs::is_regular_file(status))
    throw Error(ErrorKind::io, "cannot write '" + path + "': not a regular file");
  if (fs::exists(status) && ::access(p.c_str(), W_OK) != 0)
    throw Error(ErrorKind::io, "cannot write '" + path +
                                   "': permission denied (the file is not "
                                   "writable; clfilter does not replace a file it may not write)");
}

void prepare_output_dir(const std::string& dir, const std::string& option) {
  std::error_code ec;
  const fs::file_status status = fs::status(dir, ec);
  if (fs::exists(status)) {
    if (!fs::is_directory(status))
      throw Error(ErrorKind::usage, option + " '" + dir + "' is a file, not a directory");
    return;
  }
  fs::create_directories(dir, ec);
  if (ec) throw Error(ErrorKind::io, "cannot create " + option + " '" + dir + "': " + ec.message());
}

TempOutput::TempOutput(const std::string& path) : path_(path), destination_(destination_of(path)) {
  tmp_ = directory_of(destination_) /
         (".clfilter-" + std::to_string(::getpid()) + "-" + destination_.filename().string());
}

TempOutput::~TempOutput() { abandon(); }

void TempOutput::abandon() {
  if (done_) return;
  std::error_code ec;
  fs::remove(tmp_, ec);
  done_ = true;
}

void TempOutput::fail(const std::string& why) {
  abandon();
  throw Error(ErrorKind::io, "cannot write '" + path_ + "': " + why);
}

// The replaced file's mode, and its owner and group where this process may set them (root; a
// member of the group for the group alone). A new file keeps the mode the umask gave it.
void TempOutput::take_attributes(int fd) {
  struct stat old {};
  if (::stat(destination_.c_str(), &old) != 0) return;
  if (::fchown(fd, old.st_uid, old.st_gid) != 0) (void)!::fchown(fd, uid_t(-1), old.st_gid);
  if (::fchmod(fd, old.st_mode & 07777) != 0)
    fail(std::string("setting its mode: ") + std::strerror(errno));
}

void TempOutput::commit(const std::atomic<bool>* cancel) {
  if (cancel && cancel->load()) {
    abandon();
    throw Error(ErrorKind::cancelled, "interrupted while writing '" + path_ + "'");
  }
  // The data reaches the disk before the name does: a crash after the rename never leaves a file
  // whose blocks were still in memory, and a late write error (ENOSPC, EIO) is seen here.
  const int fd = ::open(tmp_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(std::strerror(errno));
  take_attributes(fd);
  const int synced = ::fsync(fd);
  const int sync_errno = errno;
  ::close(fd);
  if (synced != 0) fail(std::strerror(sync_errno));
  std::error_code ec;
  fs::rename(tmp_, destination_, ec);
  if (ec) fail("rename from temporary file failed: " + ec.message());
  done_ = true;
  const int dir = ::open(directory_of(destination_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir >= 0) {
    ::fsync(dir);  // the new name; the file is whole under either name by now
    ::close(dir);
  }
}

}  // namespace clf

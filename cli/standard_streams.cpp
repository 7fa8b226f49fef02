// '-' as IN or OUT (standard_streams.hpp).
#include "standard_streams.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "clf/error.hpp"

namespace clf {
namespace {

std::string system_error(const std::string& what) { return what + ": " + std::strerror(errno); }

// Writes all of `data` to `fd`, through short writes and signals; false (errno set) on failure.
bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= size_t(n);
  }
  return true;
}

// Up to `size` bytes from `fd` into `data` (fewer only at the end of input); -1 on failure.
// With `cancel`, waits for input a tenth of a second at a time, checking it (main's signals go to
// a thread of their own, so a read waiting on a quiet pipe would not end at a Ctrl-C).
ssize_t read_some(int fd, char* data, size_t size, const std::atomic<bool>* cancel) {
  size_t got = 0;
  while (got < size) {
    if (cancel) {
      pollfd ready{fd, POLLIN, 0};
      while (!*cancel && ::poll(&ready, 1, 100) == 0) {
      }
      if (*cancel) throw Error(ErrorKind::cancelled, "interrupted while reading standard input");
    }
    const ssize_t n = ::read(fd, data + got, size - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return -1;
    if (n == 0) break;
    got += size_t(n);
  }
  return ssize_t(got);
}

bool starts(const std::string& head, const std::string& signature, size_t at = 0) {
  return head.size() >= at + signature.size() && head.compare(at, signature.size(), signature) == 0;
}

}  // namespace

std::string extension_of_bytes(const std::string& head) {
  if (starts(head, "\x89PNG\r\n\x1a\n")) return "png";
  if (starts(head, "\xff\xd8\xff")) return "jpg";
  for (const char* tiff : {"II*\0", "MM\0*", "II+\0", "MM\0+"})  // classic and BigTIFF
    if (starts(head, std::string(tiff, 4))) return "tif";
  if (starts(head, "\x76\x2f\x31\x01")) return "exr";
  if (starts(head, "BM")) return "bmp";
  if (starts(head, "GIF87a") || starts(head, "GIF89a")) return "gif";
  if (starts(head, "RIFF") && starts(head, "WEBP", 8)) return "webp";
  if (starts(head, "#?RADIANCE") || starts(head, "#?RGBE")) return "hdr";
  if (head.size() >= 3 && head[0] == 'P' && head[1] >= '1' && head[1] <= '6' &&
      std::isspace(static_cast<unsigned char>(head[2])))
    return "pnm";
  if (starts(head, "SDPX") || starts(head, "XPDS")) return "dpx";
  if (starts(head, "ftyp", 4))
    for (const char* brand : {"heic", "heix", "hevc", "mif1", "msf1", "avif"})
      if (starts(head, brand, 8)) return "heic";
  return "";
}

bool names_standard_output(const std::string& out) {
  if (out == "-") return true;
  const size_t colon = out.size() >= 3 ? out.size() - 2 : 0;
  return colon > 0 && out.compare(colon, 2, ":-") == 0 &&
         std::all_of(out.begin(), out.begin() + long(colon),
                     [](unsigned char c) { return std::isalnum(c); });
}

std::string standard_output_extension(const std::string& out, const std::string& like) {
  std::string ext = out != "-" ? out.substr(0, out.size() - 2)  // FORMAT:-
                               : std::filesystem::path(like).extension().string();
  if (out == "-" && !ext.empty()) ext.erase(0, 1);  // the dot
  for (char& c : ext) c = char(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

StandardStreams::StandardStreams(const std::string& temp_dir) {
  std::string pattern = (std::filesystem::path(temp_dir) / "clfilter-stdio-XXXXXX").string();
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  if (!::mkdtemp(name.data()))
    throw Error(ErrorKind::io, system_error("cannot make a temporary directory in '" + temp_dir +
                                            "' for standard input or output"));
  dir_ = name.data();
}

StandardStreams::~StandardStreams() {
  std::error_code ec;
  std::filesystem::remove_all(dir_, ec);
}

std::string StandardStreams::spool_input(const std::atomic<bool>* cancel) {
  if (::isatty(STDIN_FILENO))
    throw Error(ErrorKind::usage,
                "IN '-' reads standard input, which is a terminal: pipe an image in "
                "(clfilter - OUT ... < in.png) or give IN");
  std::vector<char> buffer(size_t(1) << 20);
  const ssize_t first = read_some(STDIN_FILENO, buffer.data(), 64, cancel);
  if (first < 0) throw Error(ErrorKind::io, system_error("cannot read standard input"));
  if (first == 0) throw Error(ErrorKind::io, "cannot read standard input: it is empty");
  const std::string ext = extension_of_bytes(std::string(buffer.data(), size_t(first)));
  if (ext.empty())
    throw Error(ErrorKind::io,
                "cannot read standard input: its first bytes are no format clfilter knows by "
                "them (PNG, JPEG, TIFF, EXR, BMP, GIF, WebP, HDR, PNM, DPX, HEIF); give IN as a "
                "file");
  const std::string path = (std::filesystem::path(dir_) / ("stdin." + ext)).string();
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0)
    throw Error(ErrorKind::io, system_error("cannot spool standard input to '" + path + "'"));
  ssize_t n = first;
  bool ok = true;
  while (ok && n > 0) {
    ok = write_all(fd, buffer.data(), size_t(n));
    if (ok) n = read_some(STDIN_FILENO, buffer.data(), buffer.size(), cancel);
  }
  const int failure = errno;
  ::close(fd);
  errno = failure;
  if (!ok)
    throw Error(ErrorKind::io, system_error("cannot spool standard input to '" + path + "'"));
  if (n < 0) throw Error(ErrorKind::io, system_error("cannot read standard input"));
  return path;
}

std::string StandardStreams::output_file(const std::string& extension) {
  output_ = (std::filesystem::path(dir_) / ("stdout." + extension)).string();
  return output_;
}

void StandardStreams::send_output() const {
  const int fd = ::open(output_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(ErrorKind::io, system_error("cannot read back '" + output_ + "'"));
  std::vector<char> buffer(size_t(1) << 20);
  bool read = true, written = true;
  for (;;) {
    const ssize_t n = read_some(fd, buffer.data(), buffer.size(), nullptr);
    read = n >= 0;
    if (n <= 0) break;
    written = write_all(STDOUT_FILENO, buffer.data(), size_t(n));
    if (!written) break;
  }
  const int failure = errno;
  ::close(fd);
  errno = failure;
  if (!read) throw Error(ErrorKind::io, system_error("cannot read back '" + output_ + "'"));
  if (!written)
    throw Error(ErrorKind::io, system_error("cannot write the image to standard output"));
}

}  // namespace clf

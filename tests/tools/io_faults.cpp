// Late write failures, injected: an LD_PRELOAD library that makes fsync(), close() or rename()
// fail with ENOSPC for files whose path contains CLF_FAULT_PATH, as a full disk (or a network
// file system's quota) reports them after every write() succeeded. CLF_FAULT names the call:
// "fsync", "close" or "rename". The call itself still happens (a close() closes the descriptor,
// as Linux does on error), except for rename, which is refused before it moves anything.
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

bool armed(const char* call) {
  const char* which = getenv("CLF_FAULT");
  return which && strcmp(which, call) == 0 && getenv("CLF_FAULT_PATH");
}

bool matches(const char* path) { return path && strstr(path, getenv("CLF_FAULT_PATH")); }

bool fd_matches(int fd) {
  char link[64], path[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, path, sizeof path - 1);
  if (n <= 0) return false;
  path[n] = '\0';
  return matches(path);
}

template <typename Fn>
Fn next(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) abort();
  return reinterpret_cast<Fn>(f);
}

}  // namespace

extern "C" {

int fsync(int fd) {
  static auto real = next<int (*)(int)>("fsync");
  if (armed("fsync") && fd_matches(fd)) {
    real(fd);
    errno = ENOSPC;
    return -1;
  }
  return real(fd);
}

int close(int fd) {
  static auto real = next<int (*)(int)>("close");
  const bool fail = armed("close") && fd_matches(fd);
  const int result = real(fd);
  if (!fail) return result;
  errno = ENOSPC;
  return -1;
}

int rename(const char* from, const char* to) {
  static auto real = next<int (*)(const char*, const char*)>("rename");
  if (armed("rename") && matches(from)) {
    errno = ENOSPC;
    return -1;
  }
  return real(from, to);
}

}  // extern "C"

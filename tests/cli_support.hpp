// For the tests that run the clfilter binary: a scratch directory per test process, running the
// binary there with its output captured, and looking for temporary files it should not leave.
#pragma once
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace test {

// This process's scratch directory, empty when first asked for: a directory of that name is a
// dead process's whose pid this one reuses (pids wrap at 32768 on a long CI run), and its files
// (an output that a test expects a refused run not to write) must not leak into this one.
inline std::filesystem::path scratch() {
  static std::filesystem::path dir = [] {
    auto d =
        std::filesystem::temp_directory_path() / ("clf_cli_test_" + std::to_string(::getpid()));
    std::filesystem::remove_all(d);
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct CliResult {
  int code;
  std::string out, err;
};

// Runs `clfilter ARGS` in scratch(), with `env` (VAR=value ...) before it and standard input
// from `input` (a path in scratch()).
inline CliResult clfilter(const std::string& args, const std::string& env = "",
                          const std::string& input = "/dev/null") {
  const auto out = scratch() / "stdout.txt", err = scratch() / "stderr.txt";
  const std::string cmd = "cd '" + scratch().string() + "' && " + env + " '" + CLF_TEST_CLI + "' " +
                          args + " >'" + out.string() + "' 2>'" + err.string() + "' <'" + input +
                          "'";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// A command prefix (for clfilter()'s `env`) that runs the binary as a user who is not root when
// the tests run as root (nobody, through util-linux's setpriv): root reads and writes through any
// permission, so refusals are only seen as another user. Empty when not root.
inline std::string as_other_user() {
  return ::geteuid() == 0
             ? "setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent"
             : "";
}

// How the child starts: by default it blocks SIGINT, SIGTERM and SIGHUP before exec, as the signal
// mask survives exec: a signal sent while the binary is still being loaded waits for clfilter to
// take it, instead of ending the process before its first line runs, so a test may signal it at
// any time, on any machine load. `unblocked` leaves them as a shell leaves them (the window before
// main is then open); `ignored` starts it with that signal ignored, as nohup starts a job;
// `terminal` (a pseudo-terminal's slave) takes stdout and stderr in place of the log; `input`
// and `output`, where given, are standard input and standard output (stderr staying the log's).
struct Spawn {
  bool unblocked = false;
  int ignored = 0;
  int terminal = -1;
  int input = -1;
  int output = -1;
};

// Starts `clfilter ARGS...` in scratch() with stdout and stderr to `log`, and returns its pid.
// Everything the child needs is made before fork: the test process has other threads (PoCL's, the
// runner's), and one may hold the allocator's or stdio's lock at the fork, which the child would
// then wait for forever. Between fork and exec the child calls only async-signal-safe functions.
inline pid_t spawn_clfilter(const std::vector<std::string>& args, const std::filesystem::path& log,
                            Spawn how = {}) {
  const std::string dir = scratch().string(), log_path = log.string();
  std::vector<char*> argv{const_cast<char*>("clfilter")};
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGHUP);
  // Blocked across the fork, so that the child starts with them blocked: a signal sent at once
  // waits until the child has its own dispositions. The test runner's handlers (Catch2 takes
  // SIGINT and SIGTERM) must not run in the child before exec: they print, and a lock another
  // thread held at the fork would hang it.
  sigset_t parent_mask;
  ::pthread_sigmask(SIG_BLOCK, &set, &parent_mask);
  const pid_t pid = ::fork();
  if (pid != 0) {
    ::pthread_sigmask(SIG_SETMASK, &parent_mask, nullptr);
    return pid;
  }
  // The dispositions a shell would give, then the mask asked for.
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction action {};
    action.sa_handler = sig == how.ignored ? SIG_IGN : SIG_DFL;
    ::sigaction(sig, &action, nullptr);
  }
  if (how.unblocked) ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
  if (::chdir(dir.c_str()) != 0) ::_exit(126);
  const int fd = how.terminal >= 0
                     ? how.terminal
                     : ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0 || ::dup2(fd, STDERR_FILENO) < 0 || ::dup2(fd, STDOUT_FILENO) < 0) ::_exit(126);
  if (how.input >= 0 && ::dup2(how.input, STDIN_FILENO) < 0) ::_exit(126);
  if (how.output >= 0 && ::dup2(how.output, STDOUT_FILENO) < 0) ::_exit(126);
  ::execv(CLF_TEST_CLI, argv.data());
  ::_exit(127);
}

// Waits for `pid`; its exit code, or -signal when a signal ended it.
inline int wait_exit(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : WIFSIGNALED(status) ? -WTERMSIG(status) : -1000;
}

// Waits until `log` holds `text` (the child has reached that point) or the child has exited;
// true in the first case. No clock: the test waits for an event, whatever the machine's load.
inline bool wait_for_log(pid_t pid, const std::filesystem::path& log, const std::string& text) {
  for (;;) {
    if (slurp(log).find(text) != std::string::npos) return true;
    siginfo_t info{};  // exited? (WNOWAIT: left for wait_exit to reap)
    if (::waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid)
      return slurp(log).find(text) != std::string::npos;
    ::usleep(2000);
  }
}

// True while no ".clfilter-*" temporary output file is left in scratch().
inline bool no_leftovers() {
  for (const auto& e : std::filesystem::directory_iterator(scratch()))
    if (e.path().filename().string().rfind(".clfilter-", 0) == 0) return false;
  return true;
}

}  // namespace test

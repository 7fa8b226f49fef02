// For the tests that run the clfilter binary: a scratch directory per test process, running the
// binary there with its output captured, and looking for temporary files it should not leave.
#pragma once
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace test {

inline std::filesystem::path scratch() {
  static std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("clf_cli_test_" + std::to_string(::getpid()));
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

// Runs `clfilter ARGS` in scratch(), with `env` (VAR=value ...) before it.
inline CliResult clfilter(const std::string& args, const std::string& env = "") {
  const auto out = scratch() / "stdout.txt", err = scratch() / "stderr.txt";
  const std::string cmd = "cd '" + scratch().string() + "' && " + env + " '" + CLF_TEST_CLI + "' " + args +
                          " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}

// True while no ".clfilter-*" temporary output file is left in scratch().
inline bool no_leftovers() {
  for (const auto& e : std::filesystem::directory_iterator(scratch()))
    if (e.path().filename().string().rfind(".clfilter-", 0) == 0) return false;
  return true;
}

}  // namespace test

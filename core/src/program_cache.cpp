#include "program_cache.hpp"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "clf/error.hpp"
#include "util.hpp"

namespace clf::detail {
namespace fs = std::filesystem;
namespace {

uint64_t fnv1a(const std::string& text, uint64_t hash = 1469598103934665603ull) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

std::string hex(uint64_t value) {
  std::ostringstream out;
  out << std::hex << value;
  return out.str();
}

}  // namespace

ProgramCache::ProgramCache(const DeviceInfo& info, cl::Context context, cl::Device device,
                           std::string cache_dir, bool pocl_kernel_cache)
    : info_(info),
      context_(std::move(context)),
      device_(std::move(device)),
      dir_(std::move(cache_dir)),
      binaries_(!dir_.empty() &&
                !(pocl_kernel_cache && info.platform_name == "Portable Computing Language")) {}

// Another thread's build of the same program is waited for (and its error rethrown); different
// programs compile at once, each in its caller's thread. A failed build is not kept: the next
// caller tries again.
cl::Program ProgramCache::get(const std::string& name, const std::string& source,
                              const std::string& options) {
  const std::string key = hex(fnv1a(info_.platform_name + '\n' + info_.name + '\n' + info_.version +
                                    '\n' + info_.driver_version + '\n' + options + '\n' + source));
  std::promise<cl::Program> promise;
  std::shared_future<cl::Program> built;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, fresh] = programs_.try_emplace(key);
    if (fresh)
      it->second = promise.get_future().share();
    else
      built = it->second;
  }
  if (built.valid()) return built.get();
  try {
    cl::Program program = from_disk(key, options);
    if (!program()) {
      program = compile(name, source, options);
      if (seen_before(key)) to_disk(key, program);
    }
    promise.set_value(program);
    return program;
  } catch (...) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      programs_.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

cl::Program ProgramCache::compile(const std::string& name, const std::string& source,
                                  const std::string& options) {
  cl_int err = CL_SUCCESS;
  cl::Program program(context_, source, false, &err);
  cl_check(err, "clCreateProgramWithSource", name);
  // PoCL prints clang's count of warnings ("1 warning generated.") on stderr at each build that
  // has one; a build log is shown only when the build fails. -w is a standard OpenCL option.
  const bool pocl = info_.platform_name == "Portable Computing Language";
  err = program.build({device_}, (pocl ? options + " -w" : options).c_str());
  if (err != CL_SUCCESS) {
    std::string log = trim(program.getBuildInfo<CL_PROGRAM_BUILD_LOG>(device_));
    throw Error(ErrorKind::build,
                "building OpenCL program '" + name + "' for " + info_.name + " failed (" +
                    cl_error_name(err) + " from clBuildProgram, options '" + options + "'):\n" +
                    (log.empty() ? "(empty build log)" : log),
                err);
  }
  ++built_;
  return program;
}

cl::Program ProgramCache::from_disk(const std::string& key, const std::string& options) const {
  if (!binaries_) return {};
  std::ifstream in(fs::path(dir_) / (key + ".bin"), std::ios::binary);
  if (!in) return {};
  std::vector<unsigned char> binary((std::istreambuf_iterator<char>(in)), {});
  if (binary.empty()) return {};
  cl_int err = CL_SUCCESS;
  cl::Program::Binaries binaries{binary};
  std::vector<cl_int> status;
  cl::Program program(context_, {device_}, binaries, &status, &err);
  if (err != CL_SUCCESS || program.build({device_}, options.c_str()) != CL_SUCCESS)
    return {};  // stale or foreign binary: rebuild from source
  return program;
}

// Whether a program was compiled from source before, by this process or another: its marker file
// (empty) is there; if not, it is left for the next. Programs go to disk from their second build
// on, since handing out a binary can cost more than the build: PoCL then compiles every kernel of
// the program for any group size, where a run compiles only those it launches, for their sizes.
// A one-off program (a test's, a tuning candidate's) costs a build only.
bool ProgramCache::seen_before(const std::string& key) const {
  if (!binaries_) return false;
  const fs::path marker = fs::path(dir_) / (key + ".seen");
  std::error_code ec;
  if (fs::exists(marker, ec)) return true;
  std::ofstream(marker).close();  // a cache that cannot be written is not an error
  return false;
}

// Written to a temporary file and renamed, so that a process stopped midway leaves no torn file.
void ProgramCache::to_disk(const std::string& key, const cl::Program& program) const {
  if (!binaries_) return;
  auto binaries = program.getInfo<CL_PROGRAM_BINARIES>();
  if (binaries.empty() || binaries[0].empty()) return;
  const fs::path path = fs::path(dir_) / (key + ".bin");
  const fs::path tmp = path.string() + ".tmp" + std::to_string(::getpid());
  std::ofstream out(tmp, std::ios::binary);
  out.write(reinterpret_cast<const char*>(binaries[0].data()), std::streamsize(binaries[0].size()));
  out.close();
  std::error_code ec;
  if (out) fs::rename(tmp, path, ec);
  if (!out || ec) fs::remove(tmp, ec);  // a cache that cannot be written is not an error
}

}  // namespace clf::detail

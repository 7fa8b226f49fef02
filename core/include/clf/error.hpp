// clf::Error: the one exception family of clfilter. Messages name the thing that failed.
#pragma once
#include <stdexcept>
#include <string>

namespace clf {

enum class ErrorKind { usage, io, device, build, plugin, cancelled };

// The destructor is defined in libclfilter, so the class's vtable and type_info live there and not
// in each plugin: an Error a plugin throws stays valid after the plugin is unloaded.
class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& message, int cl_code = 0)
      : std::runtime_error(message), kind_(kind), cl_code_(cl_code) {}
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  ~Error() override;
  ErrorKind kind() const { return kind_; }
  int cl_code() const { return cl_code_; }  // the OpenCL error code, 0 when not an OpenCL failure
  // True for the failures a smaller working set can cure (allocation failure, out of resources).
  bool is_out_of_memory() const;

 private:
  ErrorKind kind_;
  int cl_code_;
};

// "CL_OUT_OF_RESOURCES" for -5; "CL_ERROR(-1234)" for codes it does not know.
std::string cl_error_name(int code);

// Throws Error(device) "CL_X from <call>" when code is not CL_SUCCESS.
void cl_check(int code, const char* call, const std::string& what = {});

}  // namespace clf

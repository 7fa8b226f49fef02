// What the PTX labs share (ptx_columns.cpp, ptx_bilateral.cpp): the CUDA driver's errors by name,
// and one kernel of a program that clfilter cached on NVIDIA, loaded on the first GPU.
#pragma once
#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#define CHECK(call)                                                      \
  do {                                                                   \
    CUresult r = (call);                                                 \
    if (r != CUDA_SUCCESS) {                                             \
      const char* name = nullptr;                                        \
      cuGetErrorName(r, &name);                                          \
      std::fprintf(stderr, "%s: %s (line %d)\n", #call, name, __LINE__); \
      std::exit(1);                                                      \
    }                                                                    \
  } while (0)

// Kernel `name` of the PTX at `path` (the cached binary, its NULs dropped), in the first device's
// primary context. OpenCL adds its global offset to the group ids through %envreg0-31, which the
// OpenCL runtime sets and a CUDA launch leaves undefined: no offset here.
inline CUfunction load_ptx_kernel(const char* path, const char* name) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  std::string ptx = text.str();
  ptx.erase(std::remove(ptx.begin(), ptx.end(), '\0'), ptx.end());
  for (int r = 31; r >= 0; --r)
    for (size_t at; (at = ptx.find("%envreg" + std::to_string(r))) != std::string::npos;)
      ptx.replace(at, 7 + std::to_string(r).size(), "0");
  CHECK(cuInit(0));
  CUdevice dev;
  CHECK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CHECK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CHECK(cuCtxSetCurrent(ctx));
  CUmodule module;
  CHECK(cuModuleLoadData(&module, ptx.c_str()));
  CUfunction kernel;
  CHECK(cuModuleGetFunction(&kernel, module, name));
  return kernel;
}

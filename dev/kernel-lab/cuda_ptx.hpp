// What the PTX labs share (ptx_columns.cpp, ptx_bilateral.cpp): the CUDA driver's errors by name,
// one kernel of a program that clfilter cached on NVIDIA, loaded on the first GPU, and its best
// launch time.
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

// The launches a lab times: LAUNCHES=N, or 20.
inline int lab_launches() {
  const char* n = std::getenv("LAUNCHES");
  return n ? std::atoi(n) : 20;
}

// The best time of lab_launches() launches of `kernel` over groups_x x groups_y groups of `group`
// work-items (CUDA events, ms).
inline float best_launch_ms(CUfunction kernel, unsigned groups_x, unsigned groups_y, unsigned group,
                            void** args) {
  CUevent a, b;
  CHECK(cuEventCreate(&a, 0));
  CHECK(cuEventCreate(&b, 0));
  float best = 1e9f;
  for (int rep = 0; rep < lab_launches(); ++rep) {
    CHECK(cuEventRecord(a, 0));
    CHECK(cuLaunchKernel(kernel, groups_x, groups_y, 1, group, 1, 1, 0, 0, args, nullptr));
    CHECK(cuEventRecord(b, 0));
    CHECK(cuEventSynchronize(b));
    float t = 0;
    CHECK(cuEventElapsedTime(&t, a, b));
    best = std::min(best, t);
  }
  return best;
}

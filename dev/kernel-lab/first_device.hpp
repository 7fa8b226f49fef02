// The kernel labs' devices: every device whose type has a bit of `type` (CL_DEVICE_TYPE_GPU,
// ..._CPU, ..._ALL), platforms in order, and the first of them (a null cl::Device where there is
// none). Every device is listed and then filtered, so that a platform without that type reports
// no error (nor throws, where a lab enables cl.hpp's exceptions). Included by the labs, each
// still one g++ line.
#pragma once
#include <CL/opencl.hpp>
#include <vector>

inline std::vector<cl::Device> devices_of(cl_device_type type) {
  std::vector<cl::Device> found;
  std::vector<cl::Platform> platforms;
  cl::Platform::get(&platforms);
  for (const cl::Platform& platform : platforms) {
    std::vector<cl::Device> devices;
    platform.getDevices(CL_DEVICE_TYPE_ALL, &devices);
    for (const cl::Device& device : devices)
      if (device.getInfo<CL_DEVICE_TYPE>() & type) found.push_back(device);
  }
  return found;
}

inline cl::Device first_device(cl_device_type type) {
  const std::vector<cl::Device> devices = devices_of(type);
  return devices.empty() ? cl::Device() : devices.front();
}

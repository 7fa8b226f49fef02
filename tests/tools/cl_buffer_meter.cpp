// Device memory seen from outside the library: an LD_PRELOAD library that stands between a process
// and the OpenCL loader and counts the bytes of every live device buffer, whoever creates it
// (clfilter's allocator, the C++ bindings, VkFFT). Buffers over host memory (CL_MEM_USE_HOST_PTR,
// CL_MEM_ALLOC_HOST_PTR: the caller's images and pinned staging) are not device memory and are
// not counted; sub-buffers alias their parent's bytes. It also adds up the bytes written to and
// read from those device buffers by the host (clEnqueueWriteBuffer, clEnqueueReadBuffer). At exit
// it writes to the file named by CLF_BUFFER_METER: "peak BYTES buffers N written W read R".
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include <vector>

namespace {
struct Entry {
  cl_mem mem;
  size_t bytes;
  cl_uint refs;
};

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
std::vector<Entry>* entries;  // never destroyed: a buffer may be released during exit
unsigned long long live, peak, created, written, read;

void* next_symbol(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "cl_buffer_meter: no %s after this library\n", name);
    abort();
  }
  return f;
}

Entry* find(cl_mem mem) {
  if (!entries) return nullptr;
  for (Entry& e : *entries)
    if (e.mem == mem) return &e;
  return nullptr;
}
}  // namespace

extern "C" {

cl_mem clCreateBuffer(cl_context context, cl_mem_flags flags, size_t size, void* host,
                      cl_int* err) {
  typedef cl_mem (*Fn)(cl_context, cl_mem_flags, size_t, void*, cl_int*);
  static Fn next;
  if (!next) next = reinterpret_cast<Fn>(next_symbol("clCreateBuffer"));
  cl_mem mem = next(context, flags, size, host, err);
  if (!mem || (flags & (CL_MEM_USE_HOST_PTR | CL_MEM_ALLOC_HOST_PTR))) return mem;
  pthread_mutex_lock(&lock);
  if (!entries) entries = new std::vector<Entry>();
  entries->push_back({mem, size, 1});
  live += size;
  ++created;
  if (live > peak) peak = live;
  pthread_mutex_unlock(&lock);
  return mem;
}

cl_int clRetainMemObject(cl_mem mem) {
  typedef cl_int (*Fn)(cl_mem);
  static Fn next;
  if (!next) next = reinterpret_cast<Fn>(next_symbol("clRetainMemObject"));
  const cl_int result = next(mem);
  pthread_mutex_lock(&lock);
  Entry* e = find(mem);
  if (e && result == CL_SUCCESS) ++e->refs;
  pthread_mutex_unlock(&lock);
  return result;
}

cl_int clReleaseMemObject(cl_mem mem) {
  typedef cl_int (*Fn)(cl_mem);
  static Fn next;
  if (!next) next = reinterpret_cast<Fn>(next_symbol("clReleaseMemObject"));
  pthread_mutex_lock(&lock);
  Entry* e = find(mem);
  if (e && --e->refs == 0) {
    live -= e->bytes;
    *e = entries->back();
    entries->pop_back();
  }
  pthread_mutex_unlock(&lock);
  return next(mem);
}

cl_int clEnqueueWriteBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset,
                            size_t size, const void* host, cl_uint waits, const cl_event* wait,
                            cl_event* event) {
  typedef cl_int (*Fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void*, cl_uint,
                       const cl_event*, cl_event*);
  static Fn next;
  if (!next) next = reinterpret_cast<Fn>(next_symbol("clEnqueueWriteBuffer"));
  const cl_int result = next(queue, mem, blocking, offset, size, host, waits, wait, event);
  pthread_mutex_lock(&lock);
  if (result == CL_SUCCESS && find(mem)) written += size;
  pthread_mutex_unlock(&lock);
  return result;
}

cl_int clEnqueueReadBuffer(cl_command_queue queue, cl_mem mem, cl_bool blocking, size_t offset,
                           size_t size, void* host, cl_uint waits, const cl_event* wait,
                           cl_event* event) {
  typedef cl_int (*Fn)(cl_command_queue, cl_mem, cl_bool, size_t, size_t, void*, cl_uint,
                       const cl_event*, cl_event*);
  static Fn next;
  if (!next) next = reinterpret_cast<Fn>(next_symbol("clEnqueueReadBuffer"));
  const cl_int result = next(queue, mem, blocking, offset, size, host, waits, wait, event);
  pthread_mutex_lock(&lock);
  if (result == CL_SUCCESS && find(mem)) read += size;
  pthread_mutex_unlock(&lock);
  return result;
}

}  // extern "C"

__attribute__((destructor)) static void report() {
  const char* path = getenv("CLF_BUFFER_METER");
  if (!path) return;
  FILE* f = fopen(path, "w");
  if (!f) return;
  fprintf(f, "peak %llu buffers %llu written %llu read %llu\n", peak, created, written, read);
  fclose(f);
}

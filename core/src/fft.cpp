// Large 2-D windows by FFT: overlap-save in blocks (kernels/fft.cl), the transforms by VkFFT.
//
// VkFFT over clFFT (both Debian packages): on PoCL it transforms faster and plans in a fraction
// of clFFT's time (docs/PERFORMANCE.md), and clFFT refuses lengths with a prime factor past 13
// (CLFFT_NOTIMPLEMENTED), where VkFFT falls back to Bluestein. It is one header, so the GPU
// machine needs no library.
#include <algorithm>
#include <cmath>

#include "clf/correlate.hpp"
#include "clf/error.hpp"
#include "embedded.hpp"
#include "util.hpp"

#define VKFFT_BACKEND 3
#include <vkFFT.h>

namespace clf {
using detail::round_up;
namespace {

std::string vkfft_error(VkFFTResult result) {
  switch (result) {
    case VKFFT_ERROR_MALLOC_FAILED:
      return "VKFFT_ERROR_MALLOC_FAILED";
    case VKFFT_ERROR_FAILED_TO_ALLOCATE:
      return "VKFFT_ERROR_FAILED_TO_ALLOCATE";
    case VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM:
      return "VKFFT_ERROR_FAILED_TO_CREATE_PROGRAM";
    case VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM:
      return "VKFFT_ERROR_FAILED_TO_COMPILE_PROGRAM";
    case VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL:
      return "VKFFT_ERROR_FAILED_TO_LAUNCH_KERNEL";
    case VKFFT_ERROR_FAILED_TO_SET_KERNEL_ARG:
      return "VKFFT_ERROR_FAILED_TO_SET_KERNEL_ARG";
    case VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C:
      return "VKFFT_ERROR_UNSUPPORTED_FFT_LENGTH_R2C";
    default:
      return "VkFFT error " + std::to_string(int(result));
  }
}

// VkFFT's failures as clf::Error(device); an allocation failure reads as out of memory, so the
// streamer retries with shorter strips as it does for its own buffers.
void vkfft_check(VkFFTResult result, const char* call, const std::string& name) {
  if (result == VKFFT_SUCCESS) return;
  const bool memory =
      result == VKFFT_ERROR_MALLOC_FAILED || result == VKFFT_ERROR_FAILED_TO_ALLOCATE;
  throw Error(ErrorKind::device, vkfft_error(result) + " from " + call + " (" + name + ")",
              memory ? CL_MEM_OBJECT_ALLOCATION_FAILURE : CL_OUT_OF_RESOURCES);
}

}  // namespace

int fft_block_side(int radius) {
  int n = 128;
  while (n < 32 * radius && n < fft_max_block) n *= 2;
  return n;
}

double fft_cost(int rx, int ry) {
  const double bx = fft_block_side(rx), by = fft_block_side(ry);
  return bx * by / ((bx - 2 * rx) * (by - 2 * ry)) * std::log2(bx * by);
}

bool fft_pays(const Tuning& tuning, int rx, int ry) {
  const double taps = double(2 * rx + 1) * (2 * ry + 1);
  return std::max(rx, ry) <= fft_max_radius && tuning.fft_tap_cost > 0 &&
         tuning.fft_tap_cost * fft_cost(rx, ry) < taps;
}

struct FftCorrelation::Impl {
  Device& device;
  int rx, ry, bx, by, vx, vy, row;
  float delta;
  std::string name;
  // Launch and span names for profiles and traces: name + _fft_gather, _fft_forward, ...
  std::string gather_name, forward_name, multiply_name, inverse_name, scatter_name;
  std::vector<float> weights;
  cl::Kernel gather, multiply, scatter;
  // The plan: `batch` blocks a launch, made for launches of `planned_for` (a block row).
  int batch = 0, planned_for = 0;
  DeviceBuffer blocks, window;
  bool spectrum_ready = false;  // `window` holds the window's spectrum
  cl_device_id device_id = nullptr;
  cl_context context = nullptr;
  cl_mem blocks_mem = nullptr;
  uint64_t blocks_bytes = 0;
  VkFFTApplication app{};

  Impl(Device& d) : device(d) {}
  ~Impl() {
    if (batch > 0) deleteVkFFT(&app);
  }
  size_t block_floats() const { return size_t(row) * size_t(by); }
  int blocks_across(int width) const { return (width + vx - 1) / vx; }
  int batch_for(int want) const;  // blocks a launch for rows of `want` blocks
  void plan(const cl::CommandQueue& queue, int want);
  void transform(cl_command_queue queue, int direction);
};

int FftCorrelation::Impl::batch_for(int want) const {
  // A launch of `want` blocks, within 32 MiB (and 1/8 of the largest buffer).
  const uint64_t cap = std::min<uint64_t>(device.max_alloc_bytes() / 8, uint64_t(32) << 20);
  return int(std::clamp<uint64_t>(cap / (block_floats() * sizeof(float)), 1, uint64_t(want)));
}

void FftCorrelation::Impl::plan(const cl::CommandQueue& queue, int want) {
  const uint64_t block_bytes = block_floats() * sizeof(float);
  if (batch > 0) deleteVkFFT(&app);
  app = VkFFTApplication{};
  batch = planned_for = 0;
  blocks = DeviceBuffer();
  const int count = batch_for(want);
  blocks = device.alloc(block_bytes * size_t(count), (name + " FFT blocks").c_str());
  if (!window) window = device.alloc(block_bytes, (name + " FFT window").c_str());
  device_id = device.device()();
  context = device.context()();
  blocks_mem = blocks.get()();
  blocks_bytes = block_bytes * uint64_t(count);
  VkFFTConfiguration config{};
  config.FFTdim = 2;
  config.size[0] = uint64_t(bx);
  config.size[1] = uint64_t(by);
  config.numberBatches = uint64_t(count);
  config.performR2C = 1;
  config.device = &device_id;
  config.context = &context;
  config.buffer = &blocks_mem;
  config.bufferSize = &blocks_bytes;
  vkfft_check(initializeVkFFT(&app, config), "initializeVkFFT", name);
  batch = count;
  planned_for = want;
  if (spectrum_ready) return;  // it depends on the block only: made by the first plan, then kept
  // The window's spectrum: the correlation is a convolution with the window turned 180 degrees,
  // weight (i, j) at (rx - i, ry - j) modulo the block; transformed as block 0, then kept.
  std::vector<float> image(block_floats(), 0.f);
  for (int j = 0; j <= 2 * ry; ++j)
    for (int i = 0; i <= 2 * rx; ++i)
      image[size_t((ry - j + by) % by) * size_t(row) + size_t((rx - i + bx) % bx)] =
          weights[size_t(j) * size_t(2 * rx + 1) + size_t(i)];
  cl_check(queue.enqueueWriteBuffer(blocks.get(), CL_TRUE, 0, block_bytes, image.data()),
           "clEnqueueWriteBuffer", name + " FFT window");
  transform(queue(), -1);
  cl_check(queue.enqueueCopyBuffer(blocks.get(), window.get(), 0, 0, block_bytes),
           "clEnqueueCopyBuffer", name + " FFT window");
  std::vector<float>().swap(weights);  // the spectrum is all that is needed from now on
  spectrum_ready = true;
}

void FftCorrelation::Impl::transform(cl_command_queue queue, int direction) {
  VkFFTLaunchParams launch{};
  launch.commandQueue = &queue;
  launch.buffer = &blocks_mem;
  vkfft_check(VkFFTAppend(&app, direction, &launch), "VkFFTAppend", name);
}

FftCorrelation::FftCorrelation(Device& device, int rx, int ry, const std::vector<float>& weights,
                               float delta, const std::string& name)
    : impl_(std::make_unique<Impl>(device)) {
  Impl& m = *impl_;
  if (rx < 0 || ry < 0 || weights.size() != size_t(2 * rx + 1) * size_t(2 * ry + 1))
    throw Error(ErrorKind::usage, name + ": correlation weights do not match radius " +
                                      std::to_string(rx) + "x" + std::to_string(ry));
  check_correlation_range(name, weights_l1(weights), delta);
  if (std::max(rx, ry) > fft_max_radius)
    throw Error(ErrorKind::usage, name + ": radius " + std::to_string(std::max(rx, ry)) +
                                      " is past the FFT path's " + std::to_string(fft_max_radius) +
                                      " (blocks of at most " + std::to_string(fft_max_block) +
                                      " keep half their outputs)");
  m.rx = rx;
  m.ry = ry;
  m.bx = fft_block_side(rx);
  m.by = fft_block_side(ry);
  m.vx = m.bx - 2 * rx;
  m.vy = m.by - 2 * ry;
  m.row = 2 * (m.bx / 2 + 1);
  m.delta = delta;
  m.name = name;
  m.gather_name = name + "_fft_gather";
  m.forward_name = name + "_fft_forward";
  m.multiply_name = name + "_fft_multiply";
  m.inverse_name = name + "_fft_inverse";
  m.scatter_name = name + "_fft_scatter";
  m.weights = weights;
  // The radii are kernel arguments: one program per block size.
  const std::string options = "-D BX=" + std::to_string(m.bx) + " -D BY=" + std::to_string(m.by) +
                              " -D ROW=" + std::to_string(m.row);
  cl::Program program = device.build("clf_fft", clf_kernel_fft_cl, options, Helpers::stage);
  m.gather = device.kernel(program, "clf_fft_gather");
  m.multiply = device.kernel(program, "clf_fft_multiply");
  m.scatter = device.kernel(program, "clf_fft_scatter");
}

FftCorrelation::~FftCorrelation() = default;

Halo FftCorrelation::halo() const { return {impl_->rx, impl_->ry}; }
int FftCorrelation::block_rows() const { return impl_->vy; }

void FftCorrelation::enqueue(const Stage& stage, const Plane& src, const Plane& dst) {
  Impl& m = *impl_;
  const int nbx = m.blocks_across(dst.width);
  // A launch per block row: the plan then depends on the width only, not on the strip's height,
  // and serves every strip and every image of that width.
  if (m.planned_for != nbx) m.plan(stage.queue(), nbx);
  const float scale = 1.f / (float(m.bx) * float(m.by));
  KernelArgs(m.multiply) << m.blocks.get() << m.window.get() << scale;
  // 32 x 4 work-items a group; the kernels skip the rounding's extra items.
  const cl::NDRange local(32, 4, 1);
  auto global = [&](int x, int y, int count) {
    return cl::NDRange(size_t(round_up(x, 32)), size_t(round_up(y, 4)), size_t(count));
  };
  for (int c = 0; c < stage.channels(); ++c)
    for (int y0 = 0; y0 < dst.rows; y0 += m.vy)
      for (int first = 0; first < nbx; first += m.batch) {
        const int x0 = first * m.vx, count = std::min(m.batch, nbx - first);
        KernelArgs(m.gather) << src << dst.width << dst.rows << m.rx << m.ry << c << x0 << y0
                             << m.blocks.get();
        stage.launch(m.gather, global(m.row, m.by, count), local, m.gather_name.c_str());
        stage.enqueue_span(m.forward_name.c_str(), [&](cl_command_queue q) { m.transform(q, -1); });
        stage.launch(m.multiply, global(m.row / 2, m.by, count), local, m.multiply_name.c_str());
        stage.enqueue_span(m.inverse_name.c_str(), [&](cl_command_queue q) { m.transform(q, 1); });
        KernelArgs(m.scatter) << m.blocks.get() << m.rx << m.ry << c << x0 << y0 << dst << dst.width
                              << dst.rows << m.delta;
        stage.launch(m.scatter, global(m.vx, m.vy, count), local, m.scatter_name.c_str());
      }
}

uint64_t FftCorrelation::device_bytes_ahead(int width) const {
  const Impl& m = *impl_;
  const int want = m.blocks_across(width);
  if (m.planned_for == want) return 0;
  // The old blocks are freed before the new ones are made; the window's block is made once.
  const uint64_t block_bytes = m.block_floats() * sizeof(float);
  const uint64_t blocks = block_bytes * uint64_t(m.batch_for(want)) + (m.window ? 0 : block_bytes);
  const uint64_t held = block_bytes * uint64_t(m.batch);
  return blocks > held ? blocks - held : 0;
}

std::string FftCorrelation::describe() const {
  const Impl& m = *impl_;
  return "FFT, " + std::to_string(m.bx) + "x" + std::to_string(m.by) + " blocks (" +
         std::to_string(m.vx) + "x" + std::to_string(m.vy) + " outputs each)";
}

}  // namespace clf

// Embedding clfilter: run a filter chain on an image held in memory and print the core's timing.
//   embed [WIDTH HEIGHT]
#include <clf/clf.hpp>
#include <cmath>
#include <cstdio>

int main(int argc, char** argv) try {
  const int width = argc > 2 ? std::atoi(argv[1]) : 1920,
            height = argc > 2 ? std::atoi(argv[2]) : 1080;

  // 1. An image in page-locked memory, so the device DMAs straight from it: a soft radial ramp.
  // CLF_DEVICE, else the first GPU, else the CPU (PoCL); programs cached where the CLI caches them.
  const clf::Environment env = clf::read_environment();
  auto device = clf::Device::open(env.device, env.device_options());
  clf::Image in = device->pinned_image(width, height, 1, clf::PixelType::f32);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      in.pixels<float>()[size_t(y) * width + x] =
          std::sin(0.02f * std::hypot(float(x - width / 2), float(y - height / 2)));

  // 2. A chain from the installed plugins, as the CLI would parse it.
  clf::Registry registry(env.plugin_path);  // CLF_PLUGIN_PATH, then the installed plugins
  for (const auto& issue : registry.issues())
    std::fprintf(stderr, "warning: plugin %s: %s\n", issue.path.c_str(), issue.reason.c_str());
  clf::Pipeline pipeline(device);
  pipeline.add(registry, "gaussian:sigma=2");
  pipeline.add(registry, "sobel");

  // 3. Run it, streamed in strips, with per-queue timing from OpenCL profiling events.
  clf::RunOptions options;
  options.profile = true;
  clf::Image out;
  const clf::RunStats stats = pipeline.run(in, out, options);

  double sum = 0;
  for (size_t i = 0; i < size_t(width) * height; ++i) sum += out.pixels<float>()[i];
  std::printf("device: %s\n%dx%d through %zu filters: mean gradient %.5f\n%s\n",
              device->info().label().c_str(), width, height, pipeline.size(),
              sum / (double(width) * height), stats.summary().c_str());
  return sum > 0 ? 0 : 1;  // a ramp has edges: an all-zero result means something is wrong
} catch (const clf::Error& e) {
  std::fprintf(stderr, "embed: error: %s\n", e.what());
  return 1;
}

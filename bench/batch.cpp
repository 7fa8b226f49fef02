// clfilter-bench --batch N: a batch of N in-memory images through one device and through every
// device --device names (default "all"), the same scheduling as `clfilter --output-dir` (a job
// thread per device and core, each with its own warm pipeline, taking images from one list), with
// pinned images in place of the files (no OpenImageIO needed). Prints images/s for each device
// alone and for all together, and the speed-up.
#include "batch.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

namespace clf_bench {

namespace {
// Seconds to run `images` images through pipelines on `devices`, `per_device` job threads each.
double run_batch(const std::vector<std::shared_ptr<clf::Device>>& devices, int per_device,
                 int images, const clf::Registry& registry, const std::vector<std::string>& chain,
                 int width, int height, int channels, clf::PixelType type) {
  struct Worker {
    std::unique_ptr<clf::Pipeline> pipeline;
    clf::Image in, out;
  };
  std::vector<Worker> workers;
  for (const auto& device : devices)
    for (int j = 0; j < per_device; ++j) {
      Worker w{std::make_unique<clf::Pipeline>(device),
               device->pinned_image(width, height, channels, type),
               device->pinned_image(width, height, channels, type)};
      for (const auto& spec : chain) w.pipeline->add(registry, spec);
      for (size_t b = 0; b < w.in.byte_size(); ++b)
        w.in.data()[b] = std::byte(uint8_t(b * 2654435761u >> 24));
      w.pipeline->run(w.in, w.out);  // warm: queues, strip buffers, first-launch costs
      workers.push_back(std::move(w));
    }
  std::atomic<int> next{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (auto& w : workers)
    threads.emplace_back([&] {
      while (next++ < images) w.pipeline->run(w.in, w.out);
    });
  for (auto& t : threads) t.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}
// Milliseconds (best of `reps`) to run one image through a pipeline over `devices`: its strips
// go to each device in turn.
double one_image_ms(const std::vector<std::shared_ptr<clf::Device>>& devices,
                    const clf::Registry& registry, const std::vector<std::string>& chain, int width,
                    int height, int channels, clf::PixelType type, int reps) {
  clf::Pipeline pipeline(devices);
  for (const auto& spec : chain) pipeline.add(registry, spec);
  clf::Image in = devices.front()->pinned_image(width, height, channels, type);
  clf::Image out = devices.front()->pinned_image(width, height, channels, type);
  for (size_t b = 0; b < in.byte_size(); ++b)
    in.data()[b] = std::byte(uint8_t(b * 2654435761u >> 24));
  pipeline.run(in, out);  // warm
  double best = 1e30;
  for (int r = 0; r < reps; ++r) best = std::min(best, pipeline.run(in, out).wall_ms);
  return best;
}
}  // namespace

int batch_bench(const std::string& device_sel, int images, int per_device, int width, int height,
                int channels, clf::PixelType type, const std::vector<std::string>& chain,
                int reps) {
  const clf::Environment env = clf::read_environment();
  const auto devices =
      clf::open_devices(device_sel.empty() ? "all" : device_sel, env.device_options());
  clf::Registry registry(env.plugin_path);
  std::string chain_text;
  for (const auto& s : chain) chain_text += (chain_text.empty() ? "" : "+") + s;
  std::printf(
      "batch: %d images of %dx%dx%d %s, %s, %d job thread(s) per device, pinned host images, best "
      "of %d\n",
      images, width, height, channels, clf::pixel_type_name(type), chain_text.c_str(), per_device,
      reps);
  auto best = [&](const std::vector<std::shared_ptr<clf::Device>>& set) {
    double s = 1e30;
    for (int r = 0; r < reps; ++r)
      s = std::min(
          s, run_batch(set, per_device, images, registry, chain, width, height, channels, type));
    return s;
  };
  double one = 0;
  for (size_t d = 0; d < devices.size(); ++d) {
    const double s = best({devices[d]});
    if (d == 0) one = s;
    std::printf("  %-56s %8.3f s %9.1f images/s\n", devices[d]->info().label().c_str(), s,
                images / s);
  }
  if (devices.size() > 1) {
    const double all = best(devices);
    std::printf("  %-56s %8.3f s %9.1f images/s   %.2fx the first device alone\n",
                ("all " + std::to_string(devices.size()) + " devices").c_str(), all, images / all,
                one / all);
    // One image, its strips spread over the devices (Pipeline over several devices).
    const double single =
        one_image_ms({devices[0]}, registry, chain, width, height, channels, type, reps);
    const double spread =
        one_image_ms(devices, registry, chain, width, height, channels, type, reps);
    std::printf("one image, strips over %zu devices: %.2f ms; on the first alone %.2f ms (%.2fx)\n",
                devices.size(), spread, single, single / spread);
  }
  return 0;
}

}  // namespace clf_bench

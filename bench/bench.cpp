// clfilter-bench: per-filter kernel throughput (device-resident, from OpenCL profiling events) for
// each kernel variant, streamed host->host wall time with 3 queues vs 1, and in the same run the
// device's limits: a copy kernel (memory bound), pinned host<->device transfers, and the image
// through a strip pipeline with no kernels (the floor of a streamed run).
// Its options: bench/options.cpp (clfilter-bench --help).
// A --filter of the form "a + b + c" is benchmarked as one fused chain.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <iostream>
#include <random>
#include <sstream>

#include "batch.hpp"
#include "clf/clf.hpp"
#include "options.hpp"

#ifdef CLF_BENCH_OPENCV
#include <opencv2/core.hpp>
#include <opencv2/core/ocl.hpp>
#include <opencv2/imgproc.hpp>
#endif

namespace {

using Clock = std::chrono::steady_clock;

struct Row {
  std::string filter, variant, layout;
  double kernel_ms = 0, kernel_mpix_s = 0, stream3_ms = 0, stream1_ms = 0, overlap3 = 0,
         overlap1 = 0;
  double issue_us = 0;  // host time issuing one strip's commands (stream3, best run)
  double bare_ms = 0;   // the bare overlapped transfer, measured right after the stream3 runs
  int strips = 0;
};

bool is_filter_kernel(const std::string& name) {
  for (const char* k : {"clf_unpack", "clf_pack", "clf_pad_rows", "clf_pad_cols"})
    if (name.find(k) != std::string::npos) return false;
  return true;
}

double filter_kernel_ms(const clf::RunStats& stats) {
  double us = 0;
  for (const auto& e : stats.trace)
    if (e.track == "compute" && is_filter_kernel(e.name)) us += e.end_us - e.start_us;
  return us / 1000.0;
}

// A device copy kernel over `bytes`: the memory-bandwidth ceiling for a one-read one-write pass.
double copy_gbps(clf::Device& device, size_t bytes, int reps) {
  auto program =
      device.build("bench_copy",
                   "__kernel void bench_copy(__global const float4* a, __global float4* b)"
                   "{ b[get_global_id(0)] = a[get_global_id(0)]; }",
                   "");
  auto kernel = device.kernel(program, "bench_copy");
  auto a = device.alloc(bytes, "bench a"), b = device.alloc(bytes, "bench b");
  cl::CommandQueue q(device.context(), device.device(), CL_QUEUE_PROFILING_ENABLE);
  kernel.setArg(0, a.get());
  kernel.setArg(1, b.get());
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    cl::Event ev;
    q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(bytes / 16), cl::NullRange, nullptr,
                           &ev);
    ev.wait();
    if (r == 0) continue;  // warm-up
    best = std::min(best, double(ev.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                                 ev.getProfilingInfo<CL_PROFILING_COMMAND_START>()));
  }
  return 2.0 * bytes / best;  // bytes read + written per ns = GB/s
}

// Pinned host memory <-> device: one direction at a time.
std::pair<double, double> pinned_gbps(clf::Device& device, size_t bytes, int reps) {
  cl::CommandQueue q(device.context(), device.device(), CL_QUEUE_PROFILING_ENABLE);
  cl::Buffer pinned(device.context(), CL_MEM_ALLOC_HOST_PTR, bytes);
  void* host = q.enqueueMapBuffer(pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes);
  std::memset(host, 1, bytes);
  auto dev = device.alloc(bytes, "bench transfer");
  double up = 1e30, down = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    cl::Event e1, e2;
    q.enqueueWriteBuffer(dev.get(), CL_TRUE, 0, bytes, host, nullptr, &e1);
    q.enqueueReadBuffer(dev.get(), CL_TRUE, 0, bytes, host, nullptr, &e2);
    if (r == 0) continue;
    auto ns = [](cl::Event& e) {
      return double(e.getProfilingInfo<CL_PROFILING_COMMAND_END>() -
                    e.getProfilingInfo<CL_PROFILING_COMMAND_START>());
    };
    up = std::min(up, ns(e1));
    down = std::min(down, ns(e2));
  }
  q.enqueueUnmapMemObject(pinned, host);
  q.finish();
  return {bytes / up, bytes / down};
}

// Upload and download of `bytes` each, at the same time on two queues: the bare overlapped
// transfer time that a streamed host->host run of the same bytes cannot beat. The table measures
// it again beside each filter's streamed runs: a machine's transfer rate drifts within a program,
// and a ratio against a figure taken minutes before carries that drift. Its buffers are freed on
// return, so that the streamed runs keep the whole device memory budget (the streamer counts every
// allocation of the device).
// With `strips` > 0, the same bytes as a strip pipeline with no kernels: strip k's upload, then
// its download once that upload is done (an event across the queues), what a streamed run with
// instant filters would do. No run of that many strips can beat it.
double overlapped_transfer_ms(clf::Device& device, size_t bytes, int reps, int strips = 0) {
  cl::CommandQueue up(device.context(), device.device()), down(device.context(), device.device());
  cl::Buffer pin_a(device.context(), CL_MEM_ALLOC_HOST_PTR, bytes),
      pin_b(device.context(), CL_MEM_ALLOC_HOST_PTR, bytes);
  char* a =
      static_cast<char*>(up.enqueueMapBuffer(pin_a, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
  char* b = static_cast<char*>(
      down.enqueueMapBuffer(pin_b, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes));
  auto da = device.alloc(bytes, "bench overlap a"), db = device.alloc(bytes, "bench overlap b");
  double best = 1e30;
  for (int r = 0; r < reps + 1; ++r) {
    const auto t0 = Clock::now();
    if (strips == 0) {
      up.enqueueWriteBuffer(da.get(), CL_FALSE, 0, bytes, a);
      down.enqueueReadBuffer(db.get(), CL_FALSE, 0, bytes, b);
    }
    for (int k = 0; k < strips; ++k) {
      const size_t from = bytes * size_t(k) / size_t(strips);
      const size_t size = bytes * size_t(k + 1) / size_t(strips) - from;
      std::vector<cl::Event> uploaded(1);
      up.enqueueWriteBuffer(da.get(), CL_FALSE, from, size, a + from, nullptr, &uploaded[0]);
      down.enqueueReadBuffer(da.get(), CL_FALSE, from, size, b + from, &uploaded);
      up.flush();
    }
    up.flush();
    down.flush();
    up.finish();
    down.finish();
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    if (r > 0) best = std::min(best, ms);
  }
  up.enqueueUnmapMemObject(pin_a, a);
  down.enqueueUnmapMemObject(pin_b, b);
  up.finish();
  down.finish();
  return best;
}

// Fixed costs of the driver: the wall time per command of a stream of empty kernels and of 4 KiB
// pinned writes on one in-order queue, and one empty kernel's enqueue-to-finish round trip. A strip
// costs ~6 commands and two cross-queue hand-offs whatever its size: the floor under small images.
struct CommandCosts {
  double kernel_us, write_us, round_trip_us, set_arg_us;
};
CommandCosts command_costs(clf::Device& device) {
  auto program = device.build(
      "bench_nop", "__kernel void bench_nop(__global int* a) { if (a[0] == 12345) a[0] = 0; }", "");
  auto kernel = device.kernel(program, "bench_nop");
  auto buf = device.alloc(4096, "bench nop");
  kernel.setArg(0, buf.get());
  cl::CommandQueue q(device.context(), device.device());
  cl::Buffer pinned(device.context(), CL_MEM_ALLOC_HOST_PTR, 4096);
  void* host = q.enqueueMapBuffer(pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096);
  std::memset(host, 0, 4096);
  const int n = 200;
  auto per = [&](const std::function<void()>& issue) {
    double best = 1e30;
    for (int r = 0; r < 3; ++r) {
      q.finish();
      const auto t0 = Clock::now();
      issue();
      q.finish();
      best =
          std::min(best, std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / n);
    }
    return best;
  };
  CommandCosts c;
  c.kernel_us = per([&] {
    for (int i = 0; i < n; ++i)
      q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(64), cl::NullRange);
  });
  c.write_us = per([&] {
    for (int i = 0; i < n; ++i) q.enqueueWriteBuffer(buf.get(), CL_FALSE, 0, 4096, host);
  });
  c.round_trip_us = per([&] {
    for (int i = 0; i < n; ++i) {
      q.enqueueNDRangeKernel(kernel, cl::NullRange, cl::NDRange(64), cl::NullRange);
      q.finish();
    }
  });
  {  // clSetKernelArg, which a strip calls ~40 times
    const auto t0 = Clock::now();
    for (int i = 0; i < 10 * n; ++i) kernel.setArg(0, buf.get());
    c.set_arg_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / (10 * n);
  }
  q.enqueueUnmapMemObject(pinned, host);
  q.finish();
  return c;
}

clf::Image make_image(clf::Device& device, int w, int h, int c, clf::PixelType type, bool pinned) {
  clf::Image img = pinned ? device.pinned_image(w, h, c, type) : clf::Image(w, h, c, type);
  std::mt19937 rng(5);
  auto* bytes = reinterpret_cast<unsigned char*>(img.data());
  if (type == clf::PixelType::f32) {
    std::uniform_real_distribution<float> u(0, 1);
    for (size_t i = 0; i < img.byte_size() / 4; ++i) img.pixels<float>()[i] = u(rng);
  } else {
    for (size_t i = 0; i < img.byte_size(); ++i) bytes[i] = (unsigned char)(rng() & 0x3f);
  }
  return img;
}

#ifdef CLF_BENCH_OPENCV
// The same workload through OpenCV: its CPU functions (host -> host) and its OpenCL path (UMat,
// data on the device, timed to cv::ocl::finish). Returns {cpu ms, ocl ms}; 0 where not comparable.
std::pair<double, double> opencv_ms(const std::string& spec, const clf::Image& in, int reps) {
  const auto parsed = clf::parse_filter_spec(spec);
  if (in.type() == clf::PixelType::f16 || spec.find('+') != std::string::npos) return {0, 0};
  const int depth = in.type() == clf::PixelType::u8    ? CV_8U
                    : in.type() == clf::PixelType::u16 ? CV_16U
                                                       : CV_32F;
  const cv::Mat src(in.height(), in.width(), CV_MAKETYPE(depth, in.channels()),
                    const_cast<std::byte*>(in.data()));
  std::function<void(cv::InputArray, cv::OutputArray)> run;
  auto param = [&](const char* k, const char* d) {
    return parsed.params.count(k) ? parsed.params.at(k) : std::string(d);
  };
  if (parsed.name == "sobel" && param("mode", "magnitude") == "x")
    run = [&](cv::InputArray a, cv::OutputArray b) {
      cv::Sobel(a, b, -1, std::stoi(param("dx", "1")), 0, std::stoi(param("ksize", "3")));
    };
  else if (parsed.name == "gaussian")
    run = [&](cv::InputArray a, cv::OutputArray b) {
      const double s = std::stod(param("sigma", "1"));
      cv::GaussianBlur(a, b, cv::Size(0, 0), s, s);
    };
  else if (parsed.name == "box") {
    const int n = 2 * std::stoi(param("radius", "1")) + 1;
    run = [=](cv::InputArray a, cv::OutputArray b) { cv::boxFilter(a, b, -1, cv::Size(n, n)); };
  } else if (parsed.name == "convolve" && parsed.params.count("kernel")) {
    const clf::Matrix m = clf::parse_matrix(parsed.params.at("kernel"), "kernel");
    cv::Mat k(m.rows, m.cols, CV_32F);
    for (int r = 0; r < m.rows; ++r)
      for (int c = 0; c < m.cols; ++c) k.at<float>(r, c) = float(m.at(r, c));
    run = [k](cv::InputArray a, cv::OutputArray b) { cv::filter2D(a, b, -1, k); };
  } else {
    return {0, 0};
  }
  auto best_of = [&](const std::function<void()>& f) {
    double best = 1e30;
    for (int r = 0; r < reps + 1; ++r) {
      const auto t0 = Clock::now();
      f();
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
      if (r > 0) best = std::min(best, ms);
    }
    return best;
  };
  cv::ocl::setUseOpenCL(false);
  cv::Mat dst;
  const double cpu = best_of([&] { run(src, dst); });
  double ocl = 0;
  cv::ocl::setUseOpenCL(true);
  if (cv::ocl::haveOpenCL() && cv::ocl::useOpenCL()) {
    cv::UMat usrc = src.getUMat(cv::ACCESS_READ).clone(), udst;
    ocl = best_of([&] {
      run(usrc, udst);
      cv::ocl::finish();
    });
  }
  return {cpu, ocl};
}
#endif

// "a + b + c" is a chain of filters, fused on the device: its links, trimmed.
std::vector<std::string> chain_links(const std::string& spec) {
  std::vector<std::string> chain;
  std::istringstream links(spec);
  for (std::string link; std::getline(links, link, '+');) {
    const size_t first = link.find_first_not_of(' '), last = link.find_last_not_of(' ');
    chain.push_back(first == std::string::npos ? "" : link.substr(first, last - first + 1));
  }
  return chain;
}

void add_chain(clf::Pipeline& pipeline, const clf::Registry& registry, const std::string& spec) {
  for (const std::string& link : chain_links(spec)) pipeline.add(registry, link);
}

clf::PixelType parse_type(const std::string& t) {
  if (t == "u8") return clf::PixelType::u8;
  if (t == "u16") return clf::PixelType::u16;
  if (t == "f16") return clf::PixelType::f16;
  if (t == "f32") return clf::PixelType::f32;
  throw clf::Error(clf::ErrorKind::usage, "--type expects u8, u16, f16 or f32 (got '" + t + "')");
}

}  // namespace

// --tune: clf::tune on the device, each candidate's line as it is measured, then the winners;
// with a --filter, "a + b" as the chain every family is also timed on.
int tune_device(const std::shared_ptr<clf::Device>& device, const clf::Registry& registry,
                const std::vector<std::string>& filters) {
  if (filters.size() > 1)
    throw clf::Error(clf::ErrorKind::usage,
                     "--tune takes one --filter, the chain to tune for (\"a + b\")");
  std::printf("device: %s\ntuning: %s\n", device->info().label().c_str(),
              device->tuning_source().c_str());
  clf::TuneOptions options;
  if (!filters.empty()) options.chain = chain_links(filters.front());
  options.progress = [](const std::string& line) { std::printf("  %s\n", line.c_str()); };
  const auto start = std::chrono::steady_clock::now();
  for (const clf::TuneResult& r : clf::tune(device, registry, options))
    std::printf("%s\n", r.summary().c_str());
  std::printf("took %.0f s; kept in %s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
              clf::tuned_file(*device).c_str());
  return 0;
}

int main(int argc, char** argv) try {
  const clf_bench::Options options = clf_bench::parse_args(argc, argv);
  if (options.help) {
    std::cout << clf_bench::usage_text();
    return 0;
  }
  const int width = options.width, height = options.height, channels = options.channels,
            reps = options.reps, strip_rows = options.strip_rows, slots = options.slots;
  const std::string &device_sel = options.device, &json_path = options.json,
                    &trace_path = options.trace, &type_name = options.type,
                    &tuning_text = options.tuning;
  const bool pageable = options.pageable;
  std::vector<std::string> filters = options.filters;
  const clf::Environment env = clf::read_environment();
  if (options.batch) {
    return clf_bench::batch_bench(
        device_sel, options.batch, options.jobs, width, height, channels, parse_type(type_name),
        chain_links(filters.empty() ? "gaussian:sigma=3" : filters.front()), reps);
  }
  if (options.scale) {
    // Streamed wall time and peak device memory from 1 to 64 MPix (square images), first filter.
    auto device =
        clf::Device::open(device_sel.empty() ? env.device : device_sel, env.device_options());
    clf::Registry registry(env.plugin_path);
    const std::string spec = filters.empty() ? "sobel:mode=x" : filters.front();
    std::printf(
        "device: %s\nscale: %s, streamed host->host, best of %d\n%10s %8s %10s %11s %10s %8s "
        "%16s\n",
        device->info().label().c_str(), spec.c_str(), reps, "size", "MPix", "wall ms", "ns / pixel",
        "bare ms", "vs bare", "device peak MiB");
    for (int side : {1024, 2048, 4096, 8192}) {
      const clf::Image img =
          make_image(*device, side, side, channels, parse_type(type_name), !pageable);
      clf::Image out = device->pinned_image(side, side, channels, img.type());
      clf::Pipeline pipeline(device);
      add_chain(pipeline, registry, spec);
      clf::RunOptions o;
      o.strip_rows = strip_rows;
      o.slots = slots;
      double best = 1e30;
      uint64_t peak = 0;
      for (int r = 0; r < reps + 1; ++r) {
        const auto st = pipeline.run(img, out, o);
        if (r > 0) best = std::min(best, st.wall_ms);
        peak = std::max(peak, st.device_bytes_peak);
      }
      const double px = double(side) * side,
                   bare = overlapped_transfer_ms(*device, img.byte_size(), reps);
      std::printf("%5dx%-5d %7.1f %10.3f %11.3f %10.3f %7.2fx %16.1f\n", side, side, px / 1e6, best,
                  best * 1e6 / px, bare, best / bare, peak / 1048576.0);
    }
    return 0;
  }
  if (filters.empty())
    filters = {"sobel:mode=x", "gaussian:sigma=3", "box:radius=2",
               "convolve:kernel=1,2,3,2,1;2,1,0,1,2;3,0,-9,0,3;2,1,0,1,2;1,2,3,2,-1",
               "convolve:kernel=1,2,3,4,5,4,3,2,1;2,1,0,1,2,1,0,1,2;3,0,-9,0,3,0,-9,0,3;"
               "4,1,0,1,4,1,0,1,4;5,2,3,2,-5,2,3,2,5;4,1,0,1,4,1,0,1,4;3,0,-9,0,3,0,-9,0,3;"
               "2,1,0,1,2,1,0,1,2;1,2,3,4,5,4,3,2,-1"};
  auto device =
      clf::Device::open(device_sel.empty() ? env.device : device_sel, env.device_options());
  clf::Registry registry(env.plugin_path);
  if (options.tune) return tune_device(device, registry, options.filters);
  if (tuning_text == "list") {  // the fields and knobs, with this device's values
    const clf::Tuning t = device->tuning();
    for (const std::string& name : clf::tuning_field_names())
      std::printf("%s=%s\n", name.c_str(), clf::tuning_field(t, name).c_str());
    for (const auto& [name, value] : t.knobs) std::printf("%s=%s\n", name.c_str(), value.c_str());
    std::printf("# from the %s\n", device->tuning_source().c_str());
    return 0;
  }
  // Pinned, as clfilter's CLI allocates them (--pageable measures ordinary heap images).
  const clf::Image in =
      make_image(*device, width, height, channels, parse_type(type_name), !pageable);
  const double mpix = double(width) * height / 1e6;
  std::printf(
      "device: %s\ntuning: %s\nimage: %dx%d, %d channel(s), %s, %s host memory; best of %d\n",
      device->info().label().c_str(), device->tuning_source().c_str(), width, height, channels,
      type_name.c_str(), in.pinned() ? "pinned" : "pageable", reps);

  const size_t plane_bytes = size_t(width) * height * sizeof(float);
  const double copy = copy_gbps(*device, plane_bytes, reps);
  const auto [h2d, d2h] = pinned_gbps(*device, in.byte_size(), reps);
  const double both_ms = overlapped_transfer_ms(*device, in.byte_size(), reps);
  const CommandCosts costs = command_costs(*device);
  std::string floors;  // the strip pipeline with no kernels, against the bare transfer
  for (const int strips : {4, 8, 16, 32}) {
    const double ms = overlapped_transfer_ms(*device, in.byte_size(), reps, strips);
    char text[64];
    std::snprintf(text, sizeof text, "%s%d %.2f ms (%.2fx)", floors.empty() ? "" : ", ", strips, ms,
                  ms / both_ms);
    floors += text;
  }
  std::printf(
      "limits: copy kernel %.1f GB/s (%.1f MPix/s at 8 B/px f32), pinned H2D %.1f GB/s, D2H %.1f "
      "GB/s;\n"
      "        upload + download of the image at once (bare overlapped transfer) %.2f ms;\n"
      "        in strips, each downloaded after its upload, no kernels: %s;\n"
      "        per command: empty kernel %.1f us, 4 KiB write %.1f us, kernel + finish %.1f us, "
      "set argument %.2f us\n",
      copy, copy * 1e3 / 8, h2d, d2h, both_ms, floors.c_str(), costs.kernel_us, costs.write_us,
      costs.round_trip_us, costs.set_arg_us);

  std::vector<Row> rows;
  struct Versus {
    std::string filter;
    double clfilter_ms, opencv_cpu_ms, opencv_ocl_ms;
  };
  std::vector<Versus> versus;
  {  // --tuning: the command line's overrides of the device's tuning
    clf::Tuning t = device->tuning();
    if (!tuning_text.empty()) clf::apply_tuning_text(t, tuning_text);
    device->set_tuning(t);
  }
  const clf::Tuning base = device->tuning();
  for (const auto& spec : filters)
    for (auto variant : {clf::Variant::direct, clf::Variant::tiled}) {
      clf::Tuning t = base;
      t.variant = variant;
      t.separable_variant = variant;  // direct: register blocks or two passes; tiled: its kernel
      if (variant == clf::Variant::tiled) t.separable_rows = 0;
      device->set_tuning(t);
      clf::Pipeline pipeline(device);
      std::string label = spec;
      add_chain(pipeline, registry, spec);
      const auto parsed = clf::parse_filter_spec(spec);
      if (pipeline.size() > 1)
        label = "chain of " + std::to_string(pipeline.size());
      else if (parsed.params.count("kernel")) {
        const auto m = clf::parse_matrix(parsed.params.at("kernel"), "kernel");
        label = parsed.name + " " + std::to_string(m.cols) + "x" + std::to_string(m.rows);
      }
      Row row{label, clf::variant_name(variant), ""};
      for (size_t f = 0; f < pipeline.size(); ++f)
        row.layout += (f ? "; " : "") + pipeline.filter(f).describe();
      clf::Image out = pageable ? clf::Image(width, height, channels, in.type())
                                : device->pinned_image(width, height, channels, in.type());
      clf::RunOptions whole;
      whole.profile = true;
      whole.strip_rows = height;  // one strip: kernel time on device-resident data
      row.kernel_ms = 1e30;
      for (int r = 0; r < reps + 1; ++r) {
        auto st = pipeline.run(in, out, whole);
        if (r > 0) row.kernel_ms = std::min(row.kernel_ms, filter_kernel_ms(st));
      }
      row.kernel_mpix_s = mpix / (row.kernel_ms / 1e3);
      for (int queues : {3, 1}) {
        clf::RunOptions o;
        o.queues = queues;
        o.strip_rows = strip_rows;
        o.slots = slots;
        double best = 1e30, overlap = 0;
        // Wall times unprofiled (event timestamps cost time on some drivers), then one profiled
        // run for the overlap ratio and the trace.
        for (int r = 0; r < reps + 1; ++r) {
          auto st = pipeline.run(in, out, o);
          if (r > 0 && st.wall_ms < best) {
            best = st.wall_ms;
            if (queues == 3)
              row.issue_us = 1e3 * st.host_enqueue_ms / st.strips, row.strips = st.strips;
          }
        }
        o.profile = true;
        const auto st = pipeline.run(in, out, o);
        overlap = st.overlap_ratio();
        if (queues == 3 && !trace_path.empty() && spec == filters.front() &&
            variant == base.variant)
          clf::write_trace_json(st, trace_path);
        (queues == 3 ? row.stream3_ms : row.stream1_ms) = best;
        (queues == 3 ? row.overlap3 : row.overlap1) = overlap;
        if (queues == 3) row.bare_ms = overlapped_transfer_ms(*device, in.byte_size(), reps);
      }
      rows.push_back(row);
#ifdef CLF_BENCH_OPENCV
      if (variant == clf::Variant::tiled) {  // once per filter, against the faster variant's stream
        const auto [cpu, ocl] = opencv_ms(spec, in, reps);
        const double mine = std::min(row.stream3_ms, rows[rows.size() - 2].stream3_ms);
        if (cpu > 0) versus.push_back({row.filter, mine, cpu, ocl});
      }
#endif
    }
  device->set_tuning(base);

  std::printf("\n%-26s %-7s %10s %14s %8s %11s %8s %8s %11s %8s %14s\n", "filter", "variant",
              "kernel ms", "kernel MPix/s", "vs copy", "stream3 ms", "vs bare", "overlap",
              "stream1 ms", "1 vs 3", "strips, us each");
  for (const auto& r : rows)
    std::printf("%-26s %-7s %10.3f %14.1f %7.0f%% %11.2f %7.2fx %8.2f %11.2f %7.2fx %5d x %6.1f\n",
                r.filter.c_str(), r.variant.c_str(), r.kernel_ms, r.kernel_mpix_s,
                100 * r.kernel_mpix_s / (copy * 1e3 / 8), r.stream3_ms, r.stream3_ms / r.bare_ms,
                r.overlap3, r.stream1_ms, r.stream1_ms / r.stream3_ms, r.strips, r.issue_us);
  std::printf("\nlayouts:\n");
  for (const auto& r : rows)
    std::printf("  %-26s %-7s %s\n", r.filter.c_str(), r.variant.c_str(), r.layout.c_str());
  if (!versus.empty()) {
    std::printf(
        "\nside by side, host image -> host image (OpenCV UMat: data already on its device)\n"
        "%-26s %14s %16s %8s %17s\n",
        "filter", "clfilter MPix/s", "OpenCV CPU MPix/s", "ratio", "OpenCV UMat MPix/s");
    for (const auto& v : versus)
      std::printf("%-26s %14.1f %16.1f %7.2fx %17.1f\n", v.filter.c_str(),
                  mpix / (v.clfilter_ms / 1e3), mpix / (v.opencv_cpu_ms / 1e3),
                  v.opencv_cpu_ms / v.clfilter_ms,
                  v.opencv_ocl_ms > 0 ? mpix / (v.opencv_ocl_ms / 1e3) : 0.0);
  }
  if (!json_path.empty()) {
    std::ofstream j(json_path);
    j << "{\"device\":\"" << device->info().name << "\",\"width\":" << width
      << ",\"height\":" << height << ",\"channels\":" << channels << ",\"type\":\"" << type_name
      << "\",\"copy_gbps\":" << copy << ",\"h2d_gbps\":" << h2d << ",\"d2h_gbps\":" << d2h
      << ",\"overlapped_transfer_ms\":" << both_ms << ",\"command_kernel_us\":" << costs.kernel_us
      << ",\"command_write_us\":" << costs.write_us << ",\"round_trip_us\":" << costs.round_trip_us
      << ",\"set_arg_us\":" << costs.set_arg_us << ",\"rows\":[";
    for (size_t i = 0; i < rows.size(); ++i) {
      const auto& r = rows[i];
      j << (i ? "," : "") << "{\"filter\":\"" << r.filter << "\",\"variant\":\"" << r.variant
        << "\",\"kernel_ms\":" << r.kernel_ms << ",\"kernel_mpix_s\":" << r.kernel_mpix_s
        << ",\"stream3_ms\":" << r.stream3_ms << ",\"bare_ms\":" << r.bare_ms
        << ",\"overlap3\":" << r.overlap3 << ",\"stream1_ms\":" << r.stream1_ms
        << ",\"overlap1\":" << r.overlap1 << ",\"strips\":" << r.strips
        << ",\"issue_us_per_strip\":" << r.issue_us << "}";
    }
    j << "]}\n";
  }
  return 0;
} catch (const clf::Error& e) {
  std::cerr << "clfilter-bench: error: " << e.what() << "\n";
  return e.kind() == clf::ErrorKind::usage ? 2 : 1;
} catch (const std::exception& e) {
  std::cerr << "clfilter-bench: error: " << e.what() << "\n";
  return 1;
}

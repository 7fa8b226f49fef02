// Images that stay on the device: Pipeline::run from one DeviceImage to another equals the host
// run bit for bit, sends nothing over the bus, and refuses images of another device or context.
// Device::adopt and DeviceImage::over: a context and buffers made outside clfilter.
#include <cstring>

#include "support.hpp"
#include "testing.hpp"

namespace {

clf::Pipeline chain_on(std::shared_ptr<clf::Device> device, const std::vector<std::string>& specs) {
  clf::Pipeline p(std::move(device));
  for (const auto& s : specs) p.add(test::registry(), s);
  return p;
}

const clf::PixelType all_types[] = {clf::PixelType::u8, clf::PixelType::u16, clf::PixelType::f16,
                                    clf::PixelType::f32};

}  // namespace

TEST_CASE("a chain from device image to device image equals the host run for every type") {
  // Single-channel f32 takes the path whose last filter writes the output image itself.
  const std::vector<std::vector<std::string>> chains = {
      {"gaussian:sigma=1.5", "sobel"}, {"median:ksize=3", "box:radius=2,border=wrap"}, {"laplacian"}};
  for (const auto type : all_types)
    for (int channels : {1, 3})
      for (const auto& chain : chains)
        for (int strip_rows : {0, 7}) {
          INFO(clf::pixel_type_name(type) << " x" << channels << ", " << chain.front()
                                          << ", strips of " << strip_rows);
          const clf::Image host = test::random_image(67, 53, channels, type, 3);
          clf::RunOptions o;
          o.strip_rows = strip_rows;
          const clf::Image expect = test::run_chain(chain, host, o);
          clf::DeviceImage in(test::device(), host.width(), host.height(), channels, type), out;
          in.write(host);
          clf::Pipeline p = chain_on(test::device(), chain);
          const clf::RunStats stats = p.run(in, out, o);
          CHECK(test::identical(out.read(), expect));
          CHECK(test::identical(in.read(), host));  // the input is only read
          CHECK(stats.bytes_uploaded == 0);
          CHECK(stats.bytes_downloaded == 0);
          // An output of the right shape is written where it is.
          const cl_mem before = out.buffer()();
          p.run(in, out, o);
          CHECK(out.buffer()() == before);
          CHECK(test::identical(out.read(), expect));
        }
}

TEST_CASE("device images in buffers made elsewhere, at an offset, are read and written in place") {
  const auto device = test::device();
  const clf::Image host = test::random_image(40, 30, 2, clf::PixelType::u16, 8);
  const std::vector<std::string> chain = {"gaussian:sigma=2", "morphology:op=dilate,ksize=3"};
  const clf::Image expect = test::run_chain(chain, host);
  const size_t bytes = host.byte_size(), pad = 3 * host.row_bytes() + 2;  // not row-aligned
  cl_int err = CL_SUCCESS;
  cl::Buffer mine(device->context(), CL_MEM_READ_WRITE, 2 * bytes + 3 * pad, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  const std::vector<std::byte> marker(2 * bytes + 3 * pad, std::byte{0x5a});
  REQUIRE(device->host_queue().enqueueWriteBuffer(mine, CL_TRUE, 0, marker.size(), marker.data()) ==
          CL_SUCCESS);
  auto in = clf::DeviceImage::over(device, mine(), pad, 40, 30, 2, clf::PixelType::u16);
  auto out = clf::DeviceImage::over(device, mine(), 2 * pad + bytes, 40, 30, 2, clf::PixelType::u16);
  in.write(host);
  chain_on(device, chain).run(in, out);
  CHECK(out.buffer()() == mine());  // not reallocated: the caller's buffer holds the result
  CHECK(test::identical(out.read(), expect));
  std::vector<std::byte> all(marker.size());
  REQUIRE(device->host_queue().enqueueReadBuffer(mine, CL_TRUE, 0, all.size(), all.data()) ==
          CL_SUCCESS);
  CHECK(std::memcmp(all.data(), marker.data(), pad) == 0);  // nothing outside the images
  CHECK(std::memcmp(all.data() + pad + bytes, marker.data(), pad) == 0);
  CHECK(std::memcmp(all.data() + 2 * pad + 2 * bytes, marker.data(), pad) == 0);

  // An output overlapping the input is replaced by a new image; the input stays as it was.
  auto overlapping =
      clf::DeviceImage::over(device, mine(), pad + host.row_bytes(), 40, 30, 2, clf::PixelType::u16);
  chain_on(device, chain).run(in, overlapping);
  CHECK(overlapping.buffer()() != mine());
  CHECK(test::identical(overlapping.read(), expect));
  CHECK(test::identical(in.read(), host));
  clf::DeviceImage same = in;  // a copy is the same image
  chain_on(device, chain).run(in, same);
  CHECK(test::identical(same.read(), expect));
  CHECK(test::identical(in.read(), host));

  // Misuse, each refused by name.
  auto refused = [&](auto&& call, const char* words) {
    try {
      call();
      FAIL("not refused: " << words);
    } catch (const clf::Error& e) {
      CHECK(e.kind() == clf::ErrorKind::usage);
      CHECK_THAT(e.what(), Catch::Contains(words));
    }
  };
  refused([&] { clf::DeviceImage::over(device, mine(), 1, 4, 4, 1, clf::PixelType::f32); },
          "not a multiple of f32");
  refused([&] { clf::DeviceImage::over(device, mine(), 0, 4000, 4000, 1, clf::PixelType::f32); },
          "the image needs 64000000");
  refused([&] { clf::DeviceImage(device, 0, 4, 1, clf::PixelType::u8); }, "device image");
  refused([&] { in.write(clf::Image(3, 3, 1, clf::PixelType::u8)); }, "DeviceImage::write");
  refused([&] { clf::DeviceImage().read(); }, "empty DeviceImage");
}

TEST_CASE("an image of another Device or context is refused by name; an adopted context works") {
  const auto device = test::device();
  const std::string id = device->info().label().substr(0, device->info().label().find(' '));
  const auto other = clf::Device::open(id);  // the same device, another context
  const clf::Image host = test::random_image(30, 20, 1, clf::PixelType::f32, 4);
  clf::DeviceImage theirs(other, 30, 20, 1, clf::PixelType::f32), out;
  theirs.write(host);
  clf::Pipeline p = chain_on(device, {"box:radius=1"});
  try {
    p.run(theirs, out);
    FAIL("an image of another context was used");
  } catch (const clf::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("another context"));
  }
  try {
    clf::DeviceImage::over(device, theirs.buffer()(), 0, 30, 20, 1, clf::PixelType::f32);
    FAIL("a buffer of another context was adopted");
  } catch (const clf::Error& e) {
    CHECK_THAT(e.what(), Catch::Contains("another OpenCL context"));
  }
  clf::Pipeline spread({device, other});
  spread.add(test::registry(), "box:radius=1");
  clf::DeviceImage mine(device, 30, 20, 1, clf::PixelType::f32);
  mine.write(host);
  CHECK_THROWS_WITH(spread.run(mine, out), Catch::Contains("pipeline of one device"));

  // A context made outside clfilter, adopted: its buffers are ours to filter.
  cl_int err = CL_SUCCESS;
  const cl_device_id id_of = device->device()();
  cl_context raw = clCreateContext(nullptr, 1, &id_of, nullptr, nullptr, &err);
  REQUIRE(err == CL_SUCCESS);
  {
    const auto adopted = clf::Device::adopt(raw, id_of);
    CHECK(adopted->context()() == raw);
    CHECK(adopted->info().name == device->info().name);
    clf::DeviceImage in(adopted, 30, 20, 1, clf::PixelType::f32), result;
    in.write(host);
    chain_on(adopted, {"box:radius=1"}).run(in, result);
    CHECK(test::identical(result.read(), test::run_chain({"box:radius=1"}, host)));
  }
  clReleaseContext(raw);  // the adopted Device kept its own reference while it lived
  CHECK_THROWS_WITH(clf::Device::adopt(nullptr, id_of), Catch::Contains("null OpenCL context"));
  CHECK_THROWS_WITH(clf::Device::adopt(device->context()(), nullptr),
                    Catch::Contains("null OpenCL context or device"));
}

TEST_CASE("runs on device images are queued, and each waits for what was queued on its images") {
  // Pipelines of their own (queues of their own), ping-ponging between two images without a wait
  // on the host: every run must see the one before it complete (read after write), and must not
  // overwrite an image a queued run still reads (write after read).
  const auto device = test::device();
  const clf::Image host = test::random_image(256, 190, 3, clf::PixelType::u8, 21);
  const std::vector<std::string> specs = {"gaussian:sigma=3", "median:ksize=5", "sobel",
                                          "box:radius=4"};
  std::vector<clf::Pipeline> pipelines;
  for (const auto& s : specs) pipelines.push_back(chain_on(device, {s}));
  clf::Image expect = host, expect_side;
  clf::DeviceImage a(device, 256, 190, 3, clf::PixelType::u8), b, side;
  a.write(host);
  clf::RunOptions o;
  o.strip_rows = 16;  // several strips a run
  for (int round = 0; round < 3; ++round)
    for (size_t i = 0; i < pipelines.size(); ++i) {
      pipelines[i].run(a, b, o);
      // While that may still run: a's reader must finish before this run overwrites a.
      pipelines[(i + 1) % pipelines.size()].run(b, side, o);
      pipelines[(i + 2) % pipelines.size()].run(side, a, o);
      expect = test::run_chain({specs[i]}, expect, o);
      expect_side = test::run_chain({specs[(i + 1) % specs.size()]}, expect, o);
      expect = test::run_chain({specs[(i + 2) % specs.size()]}, expect_side, o);
    }
  CHECK(test::identical(side.read(), expect_side));
  a.wait();
  CHECK(test::identical(a.read(), expect));
  // Profiled runs wait, so that their timings can be read.
  o.profile = true;
  const clf::RunStats stats = pipelines[0].run(a, b, o);
  CHECK(stats.profiled);
  CHECK(stats.compute_busy_ms > 0);
}

TEST_CASE("buffers of device images gone are reused, after the commands still queued on them") {
  const auto device = test::device();
  const clf::Image host = test::random_image(300, 200, 1, clf::PixelType::f32, 31);
  const clf::Image other = test::random_image(300, 200, 1, clf::PixelType::f32, 32);
  const std::vector<std::string> chain = {"gaussian:sigma=4", "median:ksize=5"};
  const clf::Image expect = test::run_chain(chain, host);
  clf::Pipeline p = chain_on(device, chain);
  clf::DeviceImage out;
  cl_mem was = nullptr;
  {
    clf::DeviceImage in(device, 300, 200, 1, clf::PixelType::f32);
    in.write(host);
    p.run(in, out);  // queued: it may still read `in` when `in` goes
    was = in.buffer()();
  }
  clf::DeviceImage reused(device, 300, 200, 1, clf::PixelType::f32);
  CHECK(reused.buffer()() == was);
  reused.write(other);  // waits for the queued run's reads of the old image
  CHECK(test::identical(out.read(), expect));
  CHECK(test::identical(reused.read(), other));
  // The pool stays small: images made and dropped leave at most a few buffers behind.
  const uint64_t before = device->bytes_in_use();
  for (int i = 0; i < 12; ++i) clf::DeviceImage(device, 100 + i, 100, 1, clf::PixelType::f32);
  CHECK(device->bytes_in_use() <= before + 4 * 111 * 100 * sizeof(float));
}

TEST_CASE("the kept buffers give way when the device runs out of memory") {
  const auto device = clf::Device::open(test::device()->info().label().substr(
      0, test::device()->info().label().find(' ')));  // a context of its own: its own budget
  const size_t bytes = 64 * 64 * sizeof(float);
  for (int i = 0; i < 3; ++i) clf::DeviceImage(device, 64, 64, 1, clf::PixelType::f32);  // kept
  CHECK(device->bytes_in_use() >= bytes);
  // Room for one image of another size only once the kept buffers are gone.
  clf::detail::DeviceTesting::set_alloc_limit(*device, device->bytes_in_use() + bytes / 2);
  clf::DeviceImage other(device, 80, 64, 1, clf::PixelType::f32);
  CHECK(other.byte_size() > bytes);
  CHECK(device->bytes_in_use() == other.byte_size());
  clf::detail::DeviceTesting::set_alloc_limit(*device, 0);
}

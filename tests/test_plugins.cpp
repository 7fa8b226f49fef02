// Plugin discovery: good plugins load; broken ones are reported with path and reason and skipped.
#include <filesystem>
#include <fstream>

#include "clf/plugin.hpp"
#include "support.hpp"

using Catch::Matchers::Contains;
namespace fs = std::filesystem;

namespace {
const clf::PluginIssue* issue_for(const clf::Registry& r, const std::string& file) {
  for (const auto& i : r.issues())
    if (fs::path(i.path).filename() == file) return &i;
  return nullptr;
}
}  // namespace

TEST_CASE("the built-in plugins provide every filter") {
  const auto& r = test::registry();
  for (const char* name : {"sobel", "gaussian", "box", "convolve"}) {
    INFO(name);
    REQUIRE(r.find(name));
    CHECK(r.find(name)->name() == name);
    CHECK_FALSE(r.find(name)->params().empty());
  }
  CHECK(r.issues().empty());
}

TEST_CASE("one library can export several filters") {
  clf::Registry r({CLF_TEST_PLUGIN_DIR}, false);
  CHECK(r.find("gaussian"));
  CHECK(r.find("box"));
}

TEST_CASE("a plugin directory that does not exist is reported") {
  clf::Registry r({"/nonexistent/plugins"}, false);
  REQUIRE(r.issues().size() == 1);
  CHECK(r.issues()[0].path == "/nonexistent/plugins");
  CHECK_THAT(r.issues()[0].reason, Contains("not found"));
}

TEST_CASE("broken plugins are skipped with a reason while the others load") {
  const fs::path bad = CLF_TEST_BAD_DIR;
  { std::ofstream(bad / "libgarbage.so") << "this is not a shared library\n"; }
  clf::Registry r({bad.string(), CLF_TEST_GOOD_DIR}, false);
  CHECK(r.find("test_scale"));  // the good one still loads

  auto garbage = issue_for(r, "libgarbage.so");
  REQUIRE(garbage);
  CHECK_THAT(garbage->reason, Contains("not a shared library"));
  CHECK_THAT(garbage->path, Contains(bad.string()));

  auto no_entry = issue_for(r, "libno_entry.so");
  REQUIRE(no_entry);
  CHECK_THAT(no_entry->reason, Contains("not a clfilter plugin"));

  auto abi = issue_for(r, "libabi_mismatch.so");
  REQUIRE(abi);
  CHECK_THAT(abi->reason, Contains("ABI version " + std::to_string(clf::plugin_abi_version + 1000)) &&
                              Contains("needs " + std::to_string(clf::plugin_abi_version)));

  auto tag = issue_for(r, "libabi_tag_mismatch.so");
  REQUIRE(tag);
  CHECK_THAT(tag->reason, Contains("built for 'abi 2; c++abi itanium; libc++ 1; sizes 1 2 3'") &&
                              Contains(clf::plugin_abi_tag()));

  auto throws = issue_for(r, "libthrows.so");
  REQUIRE(throws);
  CHECK_THAT(throws->reason, Contains("factory exploded on purpose"));
  CHECK(throws->reason == "the plugin entry failed: factory exploded on purpose");  // path once
  CHECK(r.issues().size() == 5);
}

TEST_CASE("CLF_PLUGIN_PATH is read as a list of directories; the first provider of a name wins") {
  ::setenv("CLF_PLUGIN_PATH", (std::string(CLF_TEST_GOOD_DIR) + "::/nonexistent").c_str(), 1);
  const std::vector<std::string> path = clf::read_environment().plugin_path;
  ::unsetenv("CLF_PLUGIN_PATH");
  CHECK(path == std::vector<std::string>{CLF_TEST_GOOD_DIR, "/nonexistent"});
  CHECK(clf::read_environment().plugin_path.empty());
  std::vector<std::string> dirs = {CLF_TEST_GOOD_DIR, CLF_TEST_GOOD_DIR};
  clf::Registry r(dirs, true);  // the same dir twice: loaded once, no duplicate issue
  CHECK(r.find("test_scale"));
  CHECK(r.find("sobel"));  // the default dir beside libclfilter (the build tree's mirror)
  CHECK(r.issues().empty());
}

TEST_CASE("a filter from a plugin runs, and keeps its library loaded") {
  std::unique_ptr<clf::Pipeline> pipeline;
  {
    clf::Registry r({CLF_TEST_GOOD_DIR}, false);
    pipeline = std::make_unique<clf::Pipeline>(test::device());
    pipeline->add(r.get("test_scale"), {{"factor", "3"}});
  }  // the registry is gone; the pipeline's factory reference keeps the library mapped
  clf::Image in = test::random_image(9, 4, 2, clf::PixelType::f32), out;
  pipeline->run(in, out);
  for (size_t i = 0; i < 9 * 4 * 2; ++i) REQUIRE(out.pixels<float>()[i] == Approx(3 * in.pixels<float>()[i]));
}

TEST_CASE("what a plugin's create() throws reaches the caller intact after the plugin is unloaded") {
  // The Registry and the Pipeline go while the exception unwinds, unloading the plugin whose code
  // threw it; the caller still reads the message (this crashed when the exception's type lived in
  // the plugin).
  auto attempt = [](const std::string& kind) -> std::pair<clf::ErrorKind, std::string> {
    try {
      clf::Registry r({CLF_TEST_GOOD_DIR}, false);
      clf::Pipeline p(test::device());
      p.add(r, "test_raises:kind=" + kind);
    } catch (const clf::Error& e) {
      return {e.kind(), e.what()};
    }
    return {clf::ErrorKind::io, "nothing thrown"};
  };
  auto [kind, message] = attempt("error");
  CHECK(kind == clf::ErrorKind::usage);
  CHECK(message == "test_raises: kind=error, raised on purpose");
  std::tie(kind, message) = attempt("own");
  CHECK(kind == clf::ErrorKind::plugin);
  CHECK(message == "test_raises: create() failed: an exception type of the plugin's own");
  std::tie(kind, message) = attempt("other");
  CHECK(kind == clf::ErrorKind::plugin);
  CHECK(message == "test_raises: create() threw an exception that is not a std::exception");
}

TEST_CASE("a filter created from a factory keeps its plugin loaded after the registry goes") {
  std::unique_ptr<clf::Filter> filter;
  {
    clf::Registry r({CLF_TEST_GOOD_DIR}, false);
    auto factory = r.get("test_scale");
    filter = factory->create(clf::validate_params("test_scale", factory->params(), {{"factor", "5"}}),
                             *test::device());
  }  // the registry and the factory are gone: only the filter refers to the plugin now
  CHECK(filter->describe() == "test_scale");
  clf::Pipeline pipeline(test::device());
  pipeline.add(std::move(filter));
  clf::Image in = test::random_image(17, 5, 1, clf::PixelType::f32), out;
  pipeline.run(in, out);
  for (size_t i = 0; i < 17 * 5; ++i) REQUIRE(out.pixels<float>()[i] == Approx(5 * in.pixels<float>()[i]));
}

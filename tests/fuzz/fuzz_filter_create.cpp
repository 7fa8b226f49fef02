// libFuzzer target: --filter text through to FilterFactory::create on a real device (PoCL), so the
// filters' own checks of parameter combinations, and the kernel builds they lead to, are fuzzed as
// well as the core's parsing. Any input must end in a filter or a clf::Error, nothing else.
#include <clf/clf.hpp>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const clf::Registry registry({CLF_FUZZ_PLUGIN_DIR}, false);
  static const std::shared_ptr<clf::Device> device = clf::Device::open("cpu");
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const clf::FilterSpec spec = clf::parse_filter_spec(text);
    if (auto factory = registry.find(spec.name)) {
      const clf::Params params = clf::validate_params(spec.name, factory->params(), spec.params);
      auto filter = factory->create(params, *device);
      if (!filter) __builtin_trap();  // the boundary turns "no filter" into an Error
      const clf::Halo halo = filter->halo();
      if (halo.x < 0 || halo.y < 0) __builtin_trap();
      filter->describe();
    }
  } catch (const clf::Error&) {
  }
  return 0;
}

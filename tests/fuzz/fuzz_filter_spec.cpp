// libFuzzer target: the --filter text parser, parameter validation against every built-in filter's
// specs, and the kernel-matrix parser. Any input must end in a result or a clf::Error, nothing else.
#include <clf/clf.hpp>

#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const clf::Registry registry({CLF_FUZZ_PLUGIN_DIR}, false);
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    clf::parse_matrix(text, "fuzz");
  } catch (const clf::Error&) {
  }
  try {
    const clf::FilterSpec spec = clf::parse_filter_spec(text);
    if (auto factory = registry.find(spec.name)) {
      const clf::Params params = clf::validate_params(spec.name, factory->params(), spec.params);
      for (const auto& p : factory->params())  // read every value back the way create() does
        if (params.has(p.name) && p.type == clf::ParamType::matrix) params.get_matrix(p.name);
    }
  } catch (const clf::Error&) {
  }
  return 0;
}

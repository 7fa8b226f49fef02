// Borders: OpenCV's names, the border parameters every filter accepts, and borderInterpolate.
#include "clf/border.hpp"

#include <cstdint>

namespace clf {

const char* border_mode_name(BorderMode mode) {
  switch (mode) {
    case BorderMode::replicate:
      return "replicate";
    case BorderMode::reflect:
      return "reflect";
    case BorderMode::reflect101:
      return "reflect101";
    case BorderMode::wrap:
      return "wrap";
    case BorderMode::constant:
      return "constant";
  }
  return "?";
}

std::vector<ParamSpec> border_param_specs() {
  return {ParamSpec::one_of("border", {"replicate", "reflect", "reflect101", "wrap", "constant"},
                            "how pixels outside the image are made (OpenCV names; reflect101 = "
                            "gfedcb|abcdefgh|gfedcba)")
              .fallback("reflect101"),
          ParamSpec::number("border_value", "pixel value outside the image for border=constant")
              .fallback("0")};
}

std::vector<ParamSpec> with_border_params(std::vector<ParamSpec> specs) {
  for (auto& spec : border_param_specs()) specs.push_back(std::move(spec));
  return specs;
}

Border border_from_params(const Params& params) {
  Border border;
  const std::string& mode = params.get_string("border");
  for (auto m : {BorderMode::replicate, BorderMode::reflect, BorderMode::reflect101,
                 BorderMode::wrap, BorderMode::constant})
    if (mode == border_mode_name(m)) border.mode = m;
  border.value = float(params.get_float("border_value"));
  return border;
}

int border_interpolate(int p, int len, BorderMode mode) {
  if (p >= 0 && p < len) return p;
  switch (mode) {
    case BorderMode::replicate:
      return p < 0 ? 0 : len - 1;
    case BorderMode::reflect: {  // period 2 len: fedcba|abcdef|fedcba
      const int64_t period = 2 * int64_t(len), q = ((p % period) + period) % period;
      return int(q < len ? q : period - 1 - q);
    }
    case BorderMode::reflect101: {  // period 2 (len - 1): fedcb|abcdef|edcba
      if (len == 1) return 0;
      const int64_t period = 2 * (int64_t(len) - 1), q = ((p % period) + period) % period;
      return int(q < len ? q : period - q);
    }
    case BorderMode::wrap:
      return ((p % len) + len) % len;
    case BorderMode::constant:
      return -1;
  }
  return -1;
}

}  // namespace clf

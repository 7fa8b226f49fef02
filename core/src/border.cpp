// Borders: OpenCV's names, the border parameters every filter accepts, and borderInterpolate.
#include "clf/border.hpp"

#include <algorithm>
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
    case BorderMode::ignore:
      return "ignore";
  }
  return "?";
}

namespace {
std::vector<ParamSpec> border_specs(const std::string& default_mode, bool offer_ignore) {
  std::vector<std::string> modes{"replicate", "reflect", "reflect101", "wrap", "constant"};
  std::string help =
      "how pixels outside the image are made (OpenCV names; reflect101 = "
      "gfedcb|abcdefgh|gfedcba)";
  if (offer_ignore) {
    modes.push_back("ignore");
    help += "; ignore = outside pixels never win (OpenCV's default for erode and dilate)";
  }
  return {ParamSpec::one_of("border", modes, help).fallback(default_mode),
          ParamSpec::number("border_value", "pixel value outside the image for border=constant")
              .fallback("0")};
}
}  // namespace

std::vector<ParamSpec> border_param_specs() { return border_specs("reflect101", false); }

std::vector<ParamSpec> with_border_params(std::vector<ParamSpec> specs,
                                          const std::string& default_mode, bool offer_ignore) {
  for (auto& spec : border_specs(default_mode, offer_ignore)) specs.push_back(std::move(spec));
  return specs;
}

Border border_from_params(const Params& params) {
  Border border;
  const std::string& mode = params.get_string("border");
  for (auto m : {BorderMode::replicate, BorderMode::reflect, BorderMode::reflect101,
                 BorderMode::wrap, BorderMode::constant, BorderMode::ignore})
    if (mode == border_mode_name(m)) border.mode = m;
  border.value = float(params.get_float("border_value"));
  return border;
}

int64_t border_period(int len, BorderMode mode) {
  switch (mode) {
    case BorderMode::reflect:  // fedcba|abcdef|fedcba
      return 2 * int64_t(len);
    case BorderMode::reflect101:  // fedcb|abcdef|edcba
      return std::max<int64_t>(1, 2 * (int64_t(len) - 1));
    case BorderMode::wrap:
      return len;
    default:
      return 0;
  }
}

int border_interpolate(int p, int len, BorderMode mode) {
  if (p >= 0 && p < len) return p;
  if (mode == BorderMode::replicate) return p < 0 ? 0 : len - 1;
  if (border_fills(mode)) return -1;
  // A mirror or a wrap repeats with the period: fold p into one period, then mirror its far half.
  const int64_t period = border_period(len, mode), q = ((p % period) + period) % period;
  if (mode == BorderMode::wrap) return int(q);
  return int(q < len ? q : mode == BorderMode::reflect ? period - 1 - q : period - q);
}

}  // namespace clf

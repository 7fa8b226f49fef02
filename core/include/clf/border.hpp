// Borders: how pixels outside the image are made, with OpenCV's names and semantics. The
// numbering is shared with the kernels (kernels/contract.h, CLF_BORDER_*).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "clf/contract.h"
#include "clf/params.hpp"

namespace clf {

enum class BorderMode {
  replicate = CLF_BORDER_REPLICATE,
  reflect = CLF_BORDER_REFLECT,
  reflect101 = CLF_BORDER_REFLECT101,
  wrap = CLF_BORDER_WRAP,
  constant = CLF_BORDER_CONSTANT,
  // Outside pixels never win a min or a max: the halo holds NaN, which a comparison passes over.
  // Offered by filters that are extrema (morphology), refused by every other's `border`.
  ignore = CLF_BORDER_IGNORE
};
struct Border {
  BorderMode mode = BorderMode::reflect101;
  float value = 0.f;  // for constant
};
const char* border_mode_name(BorderMode mode);
// The `border` and `border_value` specs every filter accepts, and reading them back.
std::vector<ParamSpec> border_param_specs();
Border border_from_params(const Params& params);
// `specs` with the border specs appended: what a factory's params() returns. A filter whose
// reference tool has another default names it (median: "replicate", as cv2.medianBlur); one that
// is an extremum may offer "ignore" (BorderMode::ignore).
std::vector<ParamSpec> with_border_params(std::vector<ParamSpec> specs,
                                          const std::string& default_mode = "reflect101",
                                          bool offer_ignore = false);
// Whether a mode fills the halo with a value (constant, ignore) rather than image pixels.
inline bool border_fills(BorderMode mode) {
  return mode == BorderMode::constant || mode == BorderMode::ignore;
}
// OpenCV's borderInterpolate: maps p outside [0, len) into it; -1 for constant. O(1) at any p.
int border_interpolate(int p, int len, BorderMode mode);
// How often the rows outside an image of `len` rows repeat: 2 len (reflect), 2 (len - 1)
// (reflect101, at least 1), len (wrap); 0 where they do not (replicate, constant).
int64_t border_period(int len, BorderMode mode);

}  // namespace clf

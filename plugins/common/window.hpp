// The window parameters the non-linear plugins share: `ksize` (odd) or `radius`, never both.
#pragma once
#include <clf/error.hpp>
#include <clf/params.hpp>
#include <string>

namespace clf_plugins {

// ksize and radius specs for a square window up to max_radius (ksize 2 max_radius + 1).
inline std::vector<clf::ParamSpec> window_params(int default_ksize, int max_radius) {
  return {clf::ParamSpec::integer("ksize", "window side in pixels, odd (or give radius)")
              .fallback(std::to_string(default_ksize))
              .at_least(1)
              .at_most(2 * max_radius + 1),
          clf::ParamSpec::integer("radius", "window radius: ksize = 2 radius + 1")
              .at_least(0)
              .at_most(max_radius)};
}

// The window's radius from ksize or radius; Error(usage) naming the filter for an even ksize or
// for both given.
inline int window_radius(const clf::Params& p, const std::string& filter) {
  if (p.given("radius") && p.given("ksize"))
    throw clf::Error(clf::ErrorKind::usage,
                     filter + ": give ksize or radius, not both (ksize = 2 radius + 1)");
  if (p.given("radius")) return p.get_int("radius");
  const int ksize = p.get_int("ksize");
  if (ksize % 2 == 0)
    throw clf::Error(clf::ErrorKind::usage, filter + ": ksize must be odd (got ksize=" +
                                                std::to_string(ksize) + "; a window has a centre)");
  return ksize / 2;
}

}  // namespace clf_plugins

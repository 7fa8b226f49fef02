// Filter (one configured instance on a device) and FilterFactory (what a plugin provides: a name,
// its parameters as data, and create()). Plugins also include clf/plugin.hpp for CLF_PLUGIN.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "clf/border.hpp"
#include "clf/device.hpp"
#include "clf/params.hpp"
#include "clf/stage.hpp"

namespace clf {

class Filter {
 public:
  virtual ~Filter() = default;
  virtual Halo halo() const = 0;
  virtual Border border() const = 0;
  virtual int temp_planes() const { return 0; }
  // Strips whose rows are a multiple of this (0: any) give the filter's whole-image result bit for
  // bit; the streamer's own choice of strip height honours it (the FFT path's block rows).
  virtual int strip_rows_multiple() const { return 0; }
  // Device memory the filter will allocate for itself when it first runs on images this wide,
  // beyond what it holds now (the FFT path's blocks): the streamer counts it against the budget
  // before it sizes the strips.
  virtual uint64_t device_bytes_ahead(int /*width*/) const { return 0; }
  virtual void enqueue(Stage& stage) = 0;
  // One line for -v: what was built ("gaussian sigma 2x2 radius 8x8, separable 2-pass, direct
  // x16").
  virtual std::string describe() const = 0;
};

class FilterFactory {
 public:
  virtual ~FilterFactory() = default;
  virtual std::string name() const = 0;
  virtual std::string summary() const = 0;
  virtual std::vector<ParamSpec> params() const = 0;  // with_border_params(...) for the borders
  // `params` are already validated against params(); create() checks relations between them,
  // builds kernels and throws Error(usage) naming the filter and parameter for bad combinations.
  virtual std::unique_ptr<Filter> create(const Params& params, Device& device) const = 0;
};

}  // namespace clf

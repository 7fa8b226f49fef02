// A device's tuning and where it came from, set while other threads read it (a tuning run's
// winners applied while filters are made elsewhere): every tuning set stays, unchanged, as long as
// the device, so that a reference a reader took stays valid, and the current one is published
// atomically.
#pragma once
#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "clf/device.hpp"

namespace clf::detail {

class TuningState {
 public:
  void set(Tuning tuning, std::string source) {
    std::lock_guard<std::mutex> lock(mutex_);
    all_.push_back(std::make_unique<const Entry>(Entry{std::move(tuning), std::move(source)}));
    current_.store(all_.back().get(), std::memory_order_release);
  }
  // `tuning` in place of the current one, `by` added to its source once ("..., then set by the
  // program").
  void replace(Tuning tuning, const std::string& by) {
    std::string source = this->source();
    if (source.find(by) == std::string::npos) source += by;
    set(std::move(tuning), std::move(source));
  }
  const Tuning& tuning() const { return current().tuning; }
  const std::string& source() const { return current().source; }

 private:
  struct Entry {
    Tuning tuning;
    std::string source;
  };
  const Entry& current() const { return *current_.load(std::memory_order_acquire); }
  std::mutex mutex_;
  std::vector<std::unique_ptr<const Entry>> all_;
  std::atomic<const Entry*> current_{nullptr};
};

}  // namespace clf::detail

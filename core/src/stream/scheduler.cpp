// The Scheduler (scheduler.hpp).
#include "stream/scheduler.hpp"

#include <thread>

namespace clf::detail {
namespace {
// Strips the host may enqueue beyond the slot ring when the device orders slot reuse itself.
constexpr int enqueue_ahead = 8;
}  // namespace

void Scheduler::run() {
  if (lanes_.size() == 1 && lanes_.front()->resident()) return run_queued_only();
  bool device_ordered = true;
  for (auto& lane : lanes_) device_ordered = device_ordered && lane->device_ordered();
  if (device_ordered)
    run_ordered_by_device();
  else
    run_with_landing_thread();
}

void Scheduler::run_ordered_by_device() {
  // Pinned images both ways: the device orders slot reuse by events, and this thread alone enqueues
  // up to enqueue_ahead strips past the ring, landing the oldest as it goes: no host wake-up sits
  // between strips, and Ctrl-C still stops within a few strips.
  std::deque<Landing> pending;
  auto land_oldest = [&] {
    pending.front().lane->land(pending.front());
    pending.pop_front();
    if (options_.progress) options_.progress(++landed_, strips_);
  };
  std::exception_ptr error;
  try {
    for (int i = 0; i < strips_; ++i) {
      while (!pending.empty() && pending.front().index < i - window_ - enqueue_ahead) land_oldest();
      pending.push_back(lane(i).issue_strip(i));
    }
    while (!pending.empty()) land_oldest();
  } catch (...) {
    error = std::current_exception();
  }
  finish_all();
  if (error) std::rethrow_exception(error);
}

void Scheduler::run_queued_only() {
  // Device images: every strip queued and none waited for (progress counts queued strips); the
  // images record the last command, for what uses them next. Profiling waits, to read timings.
  Landing last;
  try {
    for (int i = 0; i < strips_; ++i) {
      last = lane(i).issue_strip(i);
      if (options_.progress) options_.progress(i + 1, strips_);
    }
  } catch (...) {
    finish_all();
    throw;
  }
  lanes_.front()->record_resident(last.downloaded);
  if (options_.profile) finish_all();
}

void Scheduler::landing_thread() {
  try {
    for (;;) {
      Landing job;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return !landing_.empty() || closing_; });
        if (landing_.empty()) return;
        job = landing_.front();
        landing_.pop_front();
      }
      job.lane->land(job);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++landed_;
      }
      cv_.notify_all();
    }
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    landing_error_ = std::current_exception();
    closing_ = true;
    cv_.notify_all();
  }
}

void Scheduler::run_with_landing_thread() {
  // Staged output (the sink writes on the landing thread) or in place (the host maps rows): a slot
  // is free for the host once the strip that used it last has landed. This thread reads the source,
  // enqueues, and reports progress (on the caller's thread, whatever the images) while it waits:
  // for a free slot, then for the last strips.
  std::thread lander([this] { landing_thread(); });
  int reported = 0;
  auto wait_landed = [&](int count) {
    for (;;) {
      int landed;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [&] { return landed_ > reported || landed_ >= count || landing_error_; });
        if (landing_error_) return false;
        landed = landed_;
      }
      if (options_.progress && landed > reported) options_.progress(landed, strips_);
      reported = landed;
      if (landed >= count) return true;
    }
  };
  std::exception_ptr error;
  try {
    for (int i = 0; i <= strips_; ++i) {
      if (!wait_landed(i < strips_ ? i - window_ + 1 : strips_) || i == strips_) break;
      Landing job = lane(i).issue_strip(i);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        landing_.push_back(job);
      }
      cv_.notify_all();
    }
  } catch (...) {
    error = std::current_exception();
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closing_ = true;
  }
  cv_.notify_all();
  lander.join();
  finish_all();
  if (error) std::rethrow_exception(error);
  if (landing_error_) std::rethrow_exception(landing_error_);
}

}  // namespace clf::detail
